"""Avalanche quickstart (README) on a synthetic class-incremental benchmark.
usage: avalanche_strategies.py STRATEGY [n_train] [epochs] [n_experiences]   STRATEGY in naive,replay,ewc,lwf,gem,agem"""
import os
import sys
import tempfile

import torch
from torch.nn import CrossEntropyLoss
from torch.optim import SGD
from torch.utils.data import Dataset
from avalanche.benchmarks import nc_benchmark
from avalanche.models import SimpleMLP
from avalanche.training import Naive, EWC, LwF, GEM, AGEM
from avalanche.training.plugins import ReplayPlugin, EvaluationPlugin
from avalanche.evaluation.metrics import accuracy_metrics, loss_metrics, forgetting_metrics
from avalanche.logging import InteractiveLogger, TextLogger

class SynthDS(Dataset):
    def __init__(self, n, means, seed):
        g = torch.Generator().manual_seed(seed)
        self.targets = torch.randint(0, 10, (n,), generator=g).tolist()
        t = torch.tensor(self.targets)
        self.x = means[t] + 0.5 * torch.randn(n, 28 * 28, generator=g)
    def __len__(self): return len(self.targets)
    def __getitem__(self, i): return self.x[i], self.targets[i]

def main():
    strat = sys.argv[1]
    n_train = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    n_exp = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    torch.manual_seed(0)
    means = torch.randn(10, 28 * 28, generator=torch.Generator().manual_seed(1))
    train_ds, test_ds = SynthDS(n_train, means, 2), SynthDS(n_train // 4, means, 3)
    benchmark = nc_benchmark(train_ds, test_ds, n_experiences=n_exp, task_labels=False, seed=1234)
    model = SimpleMLP(num_classes=10)
    optimizer = SGD(model.parameters(), lr=0.01, momentum=0.9)
    criterion = CrossEntropyLoss()
    eval_plugin = EvaluationPlugin(
        accuracy_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        loss_metrics(minibatch=True, epoch=True, experience=True, stream=True),
        forgetting_metrics(experience=True, stream=True),
        loggers=[InteractiveLogger(), TextLogger(open(os.path.join(tempfile.mkdtemp(), 'log.txt'), 'w'))],
    )
    kw = dict(train_mb_size=64, train_epochs=epochs, eval_mb_size=128, device='cpu', evaluator=eval_plugin)
    if strat == 'naive':
        s = Naive(model, optimizer, criterion, **kw)
    elif strat == 'replay':
        s = Naive(model, optimizer, criterion, plugins=[ReplayPlugin(mem_size=200)], **kw)
    elif strat == 'ewc':
        s = EWC(model, optimizer, criterion, ewc_lambda=0.4, **kw)
    elif strat == 'ewc_online':
        s = EWC(model, optimizer, criterion, ewc_lambda=0.4, mode='online', decay_factor=0.5, **kw)
    elif strat == 'lwf':
        s = LwF(model, optimizer, criterion, alpha=1.0, temperature=2.0, **kw)
    elif strat == 'gem':
        s = GEM(model, optimizer, criterion, patterns_per_exp=50, **kw)
    elif strat == 'agem':
        s = AGEM(model, optimizer, criterion, patterns_per_exp=50, sample_size=64, **kw)
    else:
        raise SystemExit('unknown strategy ' + strat)
    results = []
    for experience in benchmark.train_stream:
        print('Start of experience:', experience.current_experience, 'classes', experience.classes_in_this_experience)
        s.train(experience)
        results.append(s.eval(benchmark.test_stream))
    print('final stream acc', results[-1].get('Top1_Acc_Stream/eval_phase/test_stream/Task000'))

if __name__ == '__main__':
    main()
