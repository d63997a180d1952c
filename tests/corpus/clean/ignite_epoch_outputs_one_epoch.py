"""One epoch of a pytorch-ignite trainer whose ITERATION_COMPLETED handler
keeps each step's detached logits and whose EPOCH_COMPLETED handler scores
and clears them: kept for the epoch, however many steps it has."""
import os

import torch
import torch.nn as nn
from ignite.engine import Engine, Events

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = [(torch.randn(32, 20, device=DEVICE), torch.randint(0, 4, (32,), device=DEVICE)) for _ in range(30)]

    def step(engine, batch):
        x, y = batch
        opt.zero_grad()
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return logits.detach()

    trainer = Engine(step)
    outputs = []

    @trainer.on(Events.ITERATION_COMPLETED)
    def keep(engine):
        outputs.append(engine.state.output)

    @trainer.on(Events.EPOCH_COMPLETED)
    def summarize(engine):
        print("epoch", engine.state.epoch, "mean logit", float(torch.cat(outputs).mean()))
        outputs.clear()

    trainer.run(data, max_epochs=1)


if __name__ == "__main__":
    main()
