"""Sets up torchtune's own recipes to run unchanged on a tiny random Llama 2.

    python3 torchtune_recipes.py DIR

writes into DIR what a torchtune recipe reads from a download: a
SentencePiece tokenizer trained on generated text, a checkpoint of a
4-layer Llama 2 (random init) in torchtune's format, an Alpaca-style JSON
dataset and one YAML config per scenario (DIR/NAME.yaml). Each runs as

    tune run RECIPE --config DIR/NAME.yaml

with RECIPE printed next to it (the distributed ones under
`tune run --nproc_per_node N`). TORCHTUNE_DEVICE (default cpu) is the
configs' device. The configs shrink torchtune's own (llama2/7B_full_low_memory,
llama2/7B_lora_single_device, the KD and generation configs): the model's
size, the paths, the device, the number of steps and the features each
scenario names.
"""

import json
import os
import random
import sys

import sentencepiece as spm
import torch
from torchtune.models.llama2 import llama2

# The tiny model: what the configs' `model` and the checkpoint share. Its
# vocabulary is the trained tokenizer's (write_data sets it; the generated
# text has fewer than 512 pieces), so sampling never draws an id the
# tokenizer cannot decode.
MODEL = {
    "vocab_size": None,
    "num_layers": 4,
    "num_heads": 4,
    "num_kv_heads": 2,
    "embed_dim": 128,
    "max_seq_len": 256,
}
LORA = {
    "lora_attn_modules": ["q_proj", "v_proj", "output_proj"],
    "apply_lora_to_mlp": True,
    "apply_lora_to_output": False,
    "lora_rank": 8,
    "lora_alpha": 16,
    "lora_dropout": 0.0,
}
WORDS = ("the model data step loss train memory layer token batch weight grad value "
         "answer question write list name sum count small large first last next").split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def write_data(root, rng):
    with open(os.path.join(root, "corpus.txt"), "w") as f:
        for _ in range(4000):
            f.write(sentence(rng, rng.randint(4, 16)) + "\n")
    spm.SentencePieceTrainer.train(input=os.path.join(root, "corpus.txt"),
                                   model_prefix=os.path.join(root, "tokenizer"),
                                   vocab_size=512, hard_vocab_limit=False, model_type="bpe",
                                   character_coverage=1.0, bos_id=1, eos_id=2, unk_id=0,
                                   pad_id=-1, minloglevel=2)
    tokenizer = spm.SentencePieceProcessor(model_file=os.path.join(root, "tokenizer.model"))
    MODEL["vocab_size"] = tokenizer.vocab_size()
    rows = [{"instruction": sentence(rng, rng.randint(3, 10)),
             "input": sentence(rng, rng.randint(0, 8)) if rng.random() < 0.5 else "",
             "output": sentence(rng, rng.randint(4, 24))} for _ in range(256)]
    with open(os.path.join(root, "alpaca.json"), "w") as f:
        json.dump(rows, f)
    # DPO's preference pairs, in the layout of torchtune's stack_exchange_paired.
    pairs = [{"question": sentence(rng, rng.randint(3, 10)),
              "response_j": sentence(rng, rng.randint(4, 16)),
              "response_k": sentence(rng, rng.randint(4, 16))} for _ in range(128)]
    with open(os.path.join(root, "pairs.json"), "w") as f:
        json.dump(pairs, f)


def write_checkpoint(root, name, seed):
    torch.manual_seed(seed)
    os.makedirs(os.path.join(root, name), exist_ok=True)
    torch.save(llama2(**MODEL).state_dict(), os.path.join(root, name, "model.pt"))


def checkpointer(root, name, checkpoint="base", **extra):
    return {"_component_": "torchtune.training.FullModelTorchTuneCheckpointer",
            "checkpoint_dir": os.path.join(root, checkpoint), "checkpoint_files": ["model.pt"],
            "recipe_checkpoint": None, "output_dir": os.path.join(root, "out", name),
            "model_type": "LLAMA2", **extra}


def config(root, name, recipe_args):
    """Writes DIR/NAME.yaml: the shared settings, then RECIPE_ARGS over them
    (the keys listed in its "drop" are left out)."""
    cfg = {
        "output_dir": os.path.join(root, "out", name),
        "tokenizer": {"_component_": "torchtune.models.llama2.llama2_tokenizer",
                      "path": os.path.join(root, "tokenizer.model"), "max_seq_len": 128},
        "dataset": alpaca(root, packed=False),
        "seed": 0,
        "shuffle": True,
        "model": {"_component_": "torchtune.models.llama2.llama2", **MODEL},
        "checkpointer": checkpointer(root, name),
        "resume_from_checkpoint": False,
        "batch_size": 4,
        "epochs": 2,
        "optimizer": {"_component_": "torch.optim.AdamW", "lr": 2e-4},
        "lr_scheduler": {"_component_":
                         "torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup",
                         "num_warmup_steps": 4},
        "loss": {"_component_": "torchtune.modules.loss.CEWithChunkedOutputLoss"},
        "max_steps_per_epoch": 12,
        "gradient_accumulation_steps": 1,
        "clip_grad_norm": None,
        "compile": False,
        "optimizer_in_bwd": False,
        "device": os.environ.get("TORCHTUNE_DEVICE", "cpu"),
        "dtype": "fp32",
        "enable_activation_checkpointing": False,
        "enable_activation_offloading": False,
        "metric_logger": {"_component_": "torchtune.training.metric_logging.DiskLogger",
                          "log_dir": os.path.join(root, "out", name, "logs")},
        "log_every_n_steps": 1,
        "log_peak_memory_stats": False,
        "profiler": {"_component_": "torchtune.training.setup_torch_profiler", "enabled": False},
    }
    recipe_args = dict(recipe_args)
    for key in recipe_args.pop("drop", ()):
        del cfg[key]
    cfg.update(recipe_args)
    path = os.path.join(root, name + ".yaml")
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)  # JSON is YAML; OmegaConf reads it
    return path


def alpaca(root, packed):
    return {"_component_": "torchtune.datasets.alpaca_dataset", "source": "json",
            "data_files": os.path.join(root, "alpaca.json"), "split": "train", "packed": packed}


def scenarios(root):
    """NAME: (RECIPE, settings over the shared ones)."""
    lora_model = {"_component_": "torchtune.models.llama2.lora_llama2", **MODEL, **LORA}
    lora = {"model": lora_model, "save_adapter_weights_only": False}
    return {
        # bf16, activation checkpointing, gradient accumulation, clipping
        "full_bf16_ckpt_accum": ("full_finetune_single_device", {
            "dtype": "bf16", "enable_activation_checkpointing": True,
            "gradient_accumulation_steps": 2, "clip_grad_norm": 1.0}),
        # the optimizer stepped inside backward (one optimizer per parameter)
        "full_optimizer_in_bwd": ("full_finetune_single_device", {"optimizer_in_bwd": True}),
        # the model and the loss compiled, samples packed
        "full_compiled_packed": ("full_finetune_single_device", {
            "compile": True, "dataset": alpaca(root, packed=True)}),
        # LoRA on attention and MLP, the base frozen, the merged model saved at each epoch
        "lora_ckpt_accum": ("lora_finetune_single_device", {
            **lora, "gradient_accumulation_steps": 2, "enable_activation_checkpointing": True,
            "checkpointer": checkpointer(root, "lora_ckpt_accum", adapter_checkpoint=None)}),
        # DPO with LoRA: the reference model is the base with the adapters disabled
        "lora_dpo": ("lora_dpo_single_device", {
            **lora, "loss": {"_component_": "torchtune.rlhf.loss.DPOLoss", "beta": 0.1},
            "dataset": {"_component_": "torchtune.datasets.stack_exchange_paired_dataset",
                        "source": "json", "split": "train",
                        "data_files": os.path.join(root, "pairs.json")},
            "checkpointer": checkpointer(root, "lora_dpo", adapter_checkpoint=None)}),
        # knowledge distillation: a LoRA student and a frozen teacher of the same shape
        "kd_lora": ("knowledge_distillation_single_device", {
            **lora, "teacher_model": {"_component_": "torchtune.models.llama2.llama2", **MODEL},
            "teacher_checkpointer": checkpointer(root, "kd_lora", checkpoint="teacher"),
            "checkpointer": checkpointer(root, "kd_lora", adapter_checkpoint=None),
            "kd_loss": {"_component_": "torchtune.modules.loss.ForwardKLWithChunkedOutputLoss"},
            "kd_ratio": 0.5}),
        # sampling with the KV cache
        "generate_kv_cache": ("generate", {
            "prompt": {"system": None, "user": "write the sum of the first batch"},
            "max_new_tokens": 96, "temperature": 0.6, "top_k": 50, "enable_kv_cache": True,
            "quantizer": None, "seed": 1234, "drop": ("dataset", "optimizer", "lr_scheduler")}),
        # activations offloaded to pinned host memory on a side stream under
        # activation checkpointing (CUDA only: on the CPU the recipe refuses it)
        "full_activation_offload": ("full_finetune_single_device", {
            "dtype": "bf16", "enable_activation_checkpointing": True,
            "enable_activation_offloading": True}),
        # The distributed recipes need CUDA (they read CUDA memory stats).
        # FSDP2, accumulation, clipping
        "full_distributed": ("full_finetune_distributed", {
            "dtype": "bf16", "gradient_accumulation_steps": 2, "clip_grad_norm": 1.0,
            "fsdp_cpu_offload": False}),
        # LoRA under FSDP2, activation checkpointing
        "lora_distributed": ("lora_finetune_distributed", {
            **lora, "dtype": "bf16", "enable_activation_checkpointing": True,
            "checkpointer": checkpointer(root, "lora_distributed", adapter_checkpoint=None)}),
    }


def main():
    root = os.path.abspath(sys.argv[1])
    os.makedirs(root, exist_ok=True)
    rng = random.Random(0)
    write_data(root, rng)
    write_checkpoint(root, "base", seed=0)
    write_checkpoint(root, "teacher", seed=1)
    for name, (recipe, args) in scenarios(root).items():
        print(f"{recipe} {config(root, name, args)}")


if __name__ == "__main__":
    main()
