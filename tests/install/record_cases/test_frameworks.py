"""Tests of real frameworks recorded in-process (memlife.record()), run by
tests/install/test_record.py under the pytest plugin with
--memlife-in-process. Leaky tests must fail with one finding naming their
LEAK-LINE, clean ones must pass; the last test checks the record() API's
finding against what the program measures itself.

Leak patterns from public reports: evaluation outputs kept across batches
(huggingface/transformers#12878, #8476), a forward hook that keeps every
activation it sees (pytorch/pytorch#836), and #12878's pattern with
Lightning's predict: predictions kept across calls in a list of the
program's. What a framework keeps of its last call only (Lightning's
predict loop its last predictions, the list of
Lightning-AI/pytorch-lightning#15656) replaces the previous call's: no
leak once a call ran before the block.
"""
import lightning
import pytest
import torch
import torchvision
import transformers

import memlife

torch.manual_seed(0)
_ALL_LOGITS = []    # what an evaluation loop keeps
_FEATURES = {}      # what a probing hook keeps
_PREDICTIONS = []   # what a loop of predict() calls keeps


def line_of(marker):
    return next(n for n, text in enumerate(open(__file__).read().splitlines(), 1)
                if marker in text)


def tiny_gpt2():
    config = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=512, n_positions=64)
    return transformers.GPT2LMHeadModel(config)


def evaluate(model, keep):
    model.eval()
    with torch.no_grad():
        for _ in range(3):
            ids = torch.randint(0, 512, (4, 32))
            logits = model(input_ids=ids).logits  # ALLOC-LINE logits
            if keep:
                _ALL_LOGITS.append(logits)  # LEAK-LINE logits
            else:
                _ALL_LOGITS.append(logits.argmax(-1).tolist())


@pytest.mark.memlife_no_leaks
def test_gpt2_train_steps_clean():
    model = tiny_gpt2()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(2):
        ids = torch.randint(0, 512, (4, 32))
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


@pytest.mark.memlife_no_leaks
def test_gpt2_eval_keeps_logits():
    evaluate(tiny_gpt2(), keep=True)


@pytest.mark.memlife_no_leaks
def test_gpt2_eval_keeps_predictions():
    _ALL_LOGITS.clear()
    evaluate(tiny_gpt2(), keep=False)


def probe(model, keep):
    def hook(module, inputs, output):
        _FEATURES[module.__class__.__name__] = output  # LEAK-LINE features
    handle = model.layer4.register_forward_hook(hook)
    with torch.no_grad():
        model(torch.randn(2, 3, 64, 64))
    if not keep:
        handle.remove()
        _FEATURES.clear()


@pytest.mark.memlife_no_leaks
def test_resnet_probe_keeps_features():
    probe(torchvision.models.resnet18(), keep=True)


@pytest.mark.memlife_no_leaks
def test_resnet_probe_removed():
    probe(torchvision.models.resnet18(), keep=False)


class TinyPredictor(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 256)

    def predict_step(self, batch):
        return self.net(batch[0])


@pytest.fixture(scope="module")
def predictor():
    """A Lightning Trainer and module that have predicted once (set up before
    the block): Lightning's predict loop keeps its last call's predictions
    until the next call."""
    trainer = lightning.Trainer(accelerator="cpu", logger=False, enable_progress_bar=False,
                                enable_model_summary=False, enable_checkpointing=False)
    module = TinyPredictor()
    data = torch.utils.data.TensorDataset(torch.randn(64, 16))
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    trainer.predict(module, loader)
    return trainer, module, loader


@pytest.mark.memlife_no_leaks
def test_lightning_predict_keeps_its_last_call_only(predictor):
    trainer, module, loader = predictor
    trainer.predict(module, loader)


@pytest.mark.memlife_no_leaks
def test_lightning_predictions_kept_across_calls(predictor):
    trainer, module, loader = predictor
    _PREDICTIONS.extend(trainer.predict(module, loader))  # LEAK-LINE predictions


def test_record_api_bytes_holder_and_line():
    """The API itself: one finding of the bytes the program keeps, its
    holder and the line that keeps it; the next block, clean, has none."""
    _ALL_LOGITS.clear()
    model = tiny_gpt2()
    with memlife.record() as leaky:
        evaluate(model, keep=True)
    truth = sum(t.untyped_storage().nbytes() for t in _ALL_LOGITS)
    assert len(leaky.findings) == 1, leaky.findings
    f = leaky.findings[0]
    assert f["kind"] == "leaked_by_block" and f["severity"] == "error", f
    assert abs(f["bytes"] - truth) <= 0.05 * truth, (f["bytes"], truth)
    held = f["evidence"]["held_by"][0]
    assert held["path"] == "test_frameworks._ALL_LOGITS[*]", held
    assert held["stored_at"] == [f"{__file__}:{line_of('LEAK-LINE logits')}"], held
    frames = [fr for stack in f["evidence"]["stacks"] for fr in stack]
    alloc = line_of("ALLOC-LINE logits")
    assert any(fr.get("file") == __file__ and fr.get("line") == alloc for fr in frames), frames
    _ALL_LOGITS.clear()
    with memlife.record() as clean:
        evaluate(model, keep=False)
    assert clean.findings == [] and clean.report["warnings"] == [], clean.report
