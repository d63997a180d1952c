"""Hogwild training (pytorch/examples mnist_hogwild): the model's parameters
move to shared memory (model.share_memory()), torch.multiprocessing starts
two workers that train the same parameters without locks, the parent then
evaluates the shared model."""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


def make_model():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def train(rank, model, steps):
    torch.manual_seed(rank)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for step in range(steps):
        x = torch.randn(32, 64)
        y = torch.randint(0, 10, (32,))
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print("worker", rank, "done")


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = make_model()
    model.share_memory()
    spawn = mp.get_context("spawn")  # CUDA-safe, and leaves the global start method alone
    workers = [spawn.Process(target=train, args=(rank, model, 20)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    with torch.no_grad():
        x = torch.randn(64, 64)
        print("eval", model(x).argmax(1)[:8].tolist())


if __name__ == "__main__":
    main()
