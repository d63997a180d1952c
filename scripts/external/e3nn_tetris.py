"""e3nn tetris classification (as examples/tetris_gate.py, with e3nn.nn.models.v2106 SimpleNetwork),
random rotation of the shapes at every step, equivariance check at the end.
usage: e3nn_tetris.py [steps]"""
import sys, torch
from e3nn import o3
from e3nn.nn.models.v2106.gate_points_networks import SimpleNetwork

def tetris():
    pos = [
        [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 1, 0)],  # chiral_shape_1
        [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, -1, 0)],  # chiral_shape_2
        [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)],  # square
        [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3)],  # line
        [(0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)],  # corner
        [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0)],  # L
        [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 1)],  # T
        [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 0)],  # zigzag
    ]
    pos = torch.tensor(pos, dtype=torch.get_default_dtype())
    labels = torch.tensor([[+1, 1, 0, 0, 0, 0, 0, 0], [-1, 1, 0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0, 0, 0],
        [0, 0, 0, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1, 0, 0],
        [0, 0, 0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0, 0, 1]], dtype=torch.get_default_dtype())
    return pos, labels

def batch_of(pos):
    n = pos.shape[0]
    batch = torch.arange(n).repeat_interleave(4)
    return dict(pos=pos.reshape(-1, 3), x=pos.new_ones(n * 4, 1), batch=batch)

def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    torch.manual_seed(0)
    pos, labels = tetris()
    f = SimpleNetwork(irreps_in="0e", irreps_out="0o + 7x0e", max_radius=1.1, num_neighbors=1.2,
                      num_nodes=4, mul=16, layers=2, lmax=2)
    optim = torch.optim.Adam(f.parameters(), lr=1e-2)
    for step in range(steps):
        R = o3.rand_matrix(len(pos))
        data = batch_of(torch.einsum('nij,nkj->nki', R, pos))
        pred = f(data)
        loss = (pred - labels).pow(2).sum()
        optim.zero_grad(); loss.backward(); optim.step()
        if step % 10 == 0:
            acc = pred.round().eq(labels).all(dim=1).double().mean().item()
            print(f"step {step:4d} loss {loss.item():8.3f} accuracy {acc:.2f}")
    # equivariance check of the trained net, as in the example
    with torch.no_grad():
        R = o3.rand_matrix()
        d0 = batch_of(pos); d1 = batch_of(torch.einsum('ij,nkj->nki', R, pos))
        print('invariance error', (f(d0) - f(d1)).abs().max().item())

if __name__ == '__main__':
    main()
