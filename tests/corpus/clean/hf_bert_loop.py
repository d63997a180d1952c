"""Fine-tune a tiny BertForSequenceClassification with a hand-written AdamW loop,
then evaluate under torch.no_grad, accumulating metrics with .item().

Random initialisation, synthetic data, on CPU (on CUDA in the GPU half).
"""
import os

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup

DEVICE = torch.device(os.environ.get("MEMLIFE_CORPUS_DEVICE", "cpu"))  # cuda on the GPU half


def make_data(n, seq_len, vocab_size, num_labels, seed):
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, vocab_size, (n, seq_len), generator=g)
    attention_mask = torch.ones_like(input_ids)
    labels = torch.randint(0, num_labels, (n,), generator=g)
    return TensorDataset(input_ids, attention_mask, labels)


def main():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=1000,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
        num_labels=3,
    )
    model = BertForSequenceClassification(config).to(DEVICE)

    train_loader = DataLoader(make_data(64, 24, config.vocab_size, 3, seed=1), batch_size=8, shuffle=True)
    eval_loader = DataLoader(make_data(32, 24, config.vocab_size, 3, seed=2), batch_size=8)

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    num_steps = len(train_loader)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=2, num_training_steps=num_steps)

    model.train()
    for step, (input_ids, attention_mask, labels) in enumerate(train_loader):
        outputs = model(input_ids=input_ids.to(DEVICE), attention_mask=attention_mask.to(DEVICE), labels=labels.to(DEVICE))
        loss = outputs.loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.4f}")

    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for input_ids, attention_mask, labels in eval_loader:
            outputs = model(input_ids=input_ids.to(DEVICE), attention_mask=attention_mask.to(DEVICE), labels=labels.to(DEVICE))
            total_loss += outputs.loss.item() * labels.size(0)
            correct += (outputs.logits.argmax(dim=-1).cpu() == labels).sum().item()
            seen += labels.size(0)
    print(f"eval loss {total_loss / seen:.4f} acc {correct / seen:.3f}")


if __name__ == "__main__":
    main()
