"""Training on the main thread while a background thread evaluates a
snapshot of the model each epoch (a common way to keep evaluation off the
critical path); a queue hands snapshots over, results come back on another."""
import copy
import os
import queue
import threading

import torch
import torch.nn as nn

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def evaluator(inbox, outbox, val_x, val_y):
    while True:
        item = inbox.get()
        if item is None:
            return
        epoch, model = item
        with torch.no_grad():
            acc = (model(val_x).argmax(1) == val_y).float().mean().item()
        outbox.put((epoch, acc))


def main():
    torch.manual_seed(0)
    val_x, val_y = torch.randn(256, 24, device=DEVICE), torch.randint(0, 4, (256,), device=DEVICE)
    inbox, outbox = queue.Queue(maxsize=2), queue.Queue()
    thread = threading.Thread(target=evaluator, args=(inbox, outbox, val_x, val_y))
    thread.start()
    model = nn.Sequential(nn.Linear(24, 64), nn.ReLU(), nn.Linear(64, 4)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(6):
        for _ in range(8):
            x, y = torch.randn(32, 24, device=DEVICE), torch.randint(0, 4, (32,), device=DEVICE)
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        inbox.put((epoch, copy.deepcopy(model).eval()))
    inbox.put(None)
    thread.join()
    while not outbox.empty():
        print("epoch %d acc %.3f" % outbox.get())


if __name__ == "__main__":
    main()
