# SpeechBrain's Brain class (pip install speechbrain; 1.1.2 here), its minimal
# example grown: a classifier trained by Brain.fit with a validation set, a
# MetricStats of the loss made anew in on_stage_start (each stage's
# utterance losses), a Checkpointer keeping the best, NewBob annealing:
#   python3 speechbrain_brain.py [EPOCHS]
import sys, torch
import speechbrain as sb
from speechbrain.utils.metric_stats import MetricStats
from speechbrain.utils.checkpoints import Checkpointer
from speechbrain.nnet.schedulers import NewBobScheduler

class Classifier(sb.Brain):
    def compute_forward(self, batch, stage):
        x, y = batch
        return self.modules.model(x.to(self.device))

    def compute_objectives(self, predictions, batch, stage):
        x, y = batch
        y = y.to(self.device)
        loss = torch.nn.functional.cross_entropy(predictions, y, reduction="none")
        self.loss_stats.append([f"utt{self.seen + i}" for i in range(len(y))], loss.detach())
        self.seen += len(y)
        return loss.mean()

    def on_stage_start(self, stage, epoch=None):
        self.seen = 0
        self.loss_stats = MetricStats(metric=lambda l: l)

    def on_stage_end(self, stage, stage_loss, epoch=None):
        if stage == sb.Stage.VALID:
            old, new = self.hparams.annealer(stage_loss)
            sb.nnet.schedulers.update_learning_rate(self.optimizer, new)
            self.checkpointer.save_and_keep_only(meta={"loss": stage_loss}, min_keys=["loss"])
            print("epoch", epoch, "valid loss", stage_loss, "summary", self.loss_stats.summarize("average"))

g = torch.Generator().manual_seed(0)
def data(n): 
    x = torch.randn(n, 20, generator=g); y = (x[:, 0] > 0).long()
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
ckpt = Checkpointer("sb_ckpt", recoverables={"model": model})
brain = Classifier({"model": model}, opt_class=lambda p: torch.optim.Adam(p, 1e-3),
                   hparams={"annealer": NewBobScheduler(initial_value=1e-3)}, checkpointer=ckpt,
                   run_opts={"device": "cpu"})
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
brain.fit(sb.utils.epoch_loop.EpochCounter(epochs), data(512), data(128))
print("test", brain.evaluate(data(128)))
