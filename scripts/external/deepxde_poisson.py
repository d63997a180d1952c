"""deepxde 1.15's Poisson 1D Dirichlet example (examples/pinn_forward/Poisson_Dirichlet_1d.py),
on its PyTorch backend: Adam for 600 iterations (its example: 10,000), then L-BFGS.

    python3 scripts/external/deepxde_poisson.py
"""
import os
os.environ.setdefault("DDE_BACKEND", "pytorch")
import deepxde as dde
import numpy as np


def pde(x, y):
    dy_xx = dde.grad.hessian(y, x)
    return -dy_xx - np.pi ** 2 * dde.backend.sin(np.pi * x)


def boundary(x, on_boundary):
    return on_boundary


def func(x):
    return np.sin(np.pi * x)


geom = dde.geometry.Interval(-1, 1)
bc = dde.icbc.DirichletBC(geom, func, boundary)
data = dde.data.PDE(geom, pde, bc, 16, 2, solution=func, num_test=100)
net = dde.nn.FNN([1] + [50] * 3 + [1], "tanh", "Glorot uniform")
model = dde.Model(data, net)
model.compile("adam", lr=0.001, metrics=["l2 relative error"])
losshistory, train_state = model.train(iterations=600, display_every=100)
dde.optimizers.config.set_LBFGS_options(maxiter=200)
model.compile("L-BFGS")
losshistory, train_state = model.train(display_every=100)
print("best", train_state.best_loss_train)
