"""DQN-style loop with a replay buffer: a deque(maxlen=...) of transitions,
sampled once it holds a batch; the buffer is still filling when the run
ends, as in any short run or the first part of a long one."""
import os
import random
from collections import deque

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    random.seed(0)
    q = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4)).to(DEVICE)
    target = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4)).to(DEVICE)
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=1e-3)
    buffer = deque(maxlen=10_000)
    state = torch.randn(8, device=DEVICE)
    for step in range(120):
        with torch.no_grad():
            action = int(q(state).argmax()) if random.random() > 0.1 else random.randrange(4)
        next_state = torch.randn(8, device=DEVICE)
        reward = torch.tensor(float(action == 0), device=DEVICE)
        buffer.append((state, action, reward, next_state))
        state = next_state
        if len(buffer) >= 32:
            batch = random.sample(buffer, 32)
            s = torch.stack([b[0] for b in batch])
            a = torch.tensor([b[1] for b in batch], device=DEVICE)
            r = torch.stack([b[2] for b in batch])
            s2 = torch.stack([b[3] for b in batch])
            with torch.no_grad():
                y = r + 0.99 * target(s2).max(1).values
            loss = nn.functional.smooth_l1_loss(q(s).gather(1, a[:, None]).squeeze(1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if step % 50 == 0:
            target.load_state_dict(q.state_dict())
    print("buffer", len(buffer))


if __name__ == "__main__":
    main()
