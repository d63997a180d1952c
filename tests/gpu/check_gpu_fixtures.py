"""Replays the traces recorded on the H200 (traces/gpu/) through
`memlife analyze`, so the GPU findings stay tested on machines without a GPU.

usage: check_gpu_fixtures.py MEMLIFE_BINARY TRACES_DIR
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

memlife, traces = sys.argv[1], Path(sys.argv[2])
failures = []


def findings(name):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([memlife, "analyze", str(traces / f"{name}.mltrace"), "-o", out.name],
                       check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out.name))["findings"]


def expect(cond, what):
    if not cond:
        failures.append(what)


def of(fs, kind, op=None):
    return [f for f in fs if f["kind"] == kind and (op is None or f["evidence"].get("op") == op)]


FUNCTIONAL = "_c10d_functional::all_gather_into_tensor"

# Seed 001: c10d said "there are still 5 unwaited collective calls".
fs = of(findings("seed001_unwaited"), "unwaited_collective", FUNCTIONAL)
expect(sum(f["count"] for f in fs) == 5, f"seed001_unwaited: 5 unwaited, got {fs}")
expect(sum(f["bytes"] for f in fs) == 5 * 4 * 1024 * 1024, "seed001_unwaited: 20 MiB kept")
expect(any("seed001_collectives.py" in json.dumps(f["evidence"]["stacks"]) for f in fs),
       "seed001_unwaited: issue stack names the script")
# Never waited by the program; only the final torch.cuda.synchronize() released
# the NCCL kernels. The c10d and nccl layers of each call are one finding.
expect(all(f["evidence"].get("released_by") == "synchronize" for f in fs) and fs,
       f"seed001_unwaited: released_by synchronize, got {[f['evidence'].get('released_by') for f in fs]}")
expect(len(of(findings("seed001_unwaited"), "unwaited_collective")) == 1,
       "seed001_unwaited: one unwaited_collective finding (layers folded)")
expect(not of(findings("seed001_waited"), "unwaited_collective"),
       "seed001_waited: no unwaited collective at any layer (stream waits are program waits)")
# The compiled graph's ops are checked, and none reads the gather before its
# wait: view(int32) is dispatched through a Python mode at run time, so torch
# wraps it in a PythonDispatchMode range with the gather as argument; that
# wrapper is part of the view, not a read (memlife reported it until the
# analyzer counted only outermost ops).
ubw = of(findings("seed001_compiled"), "use_before_wait")
expect(not ubw, f"seed001_compiled: no use_before_wait on torch 2.11, got {ubw}")

# On torch 2.11 the compiled graph waits the gather itself (inductor keeps the
# view an alias of the collective's output): seed 001's leak does not occur.
expect(not of(findings("seed001_compiled"), "unwaited_collective"),
       "seed001_compiled: no unwaited collective on torch 2.11")

# Framework-free mode: a plain CUDA program's cudaMalloc'd buffers alive at
# exit, as compute-sanitizer --leak-check full counts them (3, 6,291,456 B).
raw = [f for f in of(findings("leaky_cuda"), "leaked_at_exit")
       if f["evidence"].get("memory") == "raw_device"]
expect(sum(f["count"] for f in raw) == 3 and sum(f["bytes"] for f in raw) == 6_291_456,
       f"leaky_cuda: 3 raw device leaks of 6,291,456 bytes, got {raw}")

# Seed 000: the padded 12,595,200-byte buffer.
rv = of(findings("seed000_set_data"), "residual_view")
expect(len(rv) == 1 and rv[0]["bytes"] == 12_595_200, f"seed000_set_data: residual_view, got {rv}")
expect(not of(findings("seed000_resize0"), "residual_view"), "seed000_resize0: no residual_view")

# The GPU half of the program corpus (scripts/device/gpu_corpus.sh, H200,
# torch 2.11): what each program must give, all findings counted, so a
# false finding on a clean GPU program fails here. The leaky programs'
# bytes are what each program measured and printed itself.
GPU_TRAIN_LEAK_BYTES = 48  # the program printed leaked_bytes 48: 12 losses kept, 4 B each
# NAME: [(kind, bytes the program measured, None where it measures none)]
GPU_CORPUS = {
    "gpu_train_clean": [],  # GPT-2 (6 layers), AdamW, bf16 autocast, 12 steps
    "hf_trainer_cuda": [],  # tests/corpus/clean/hf_gpt2_trainer.py on CUDA
    "seed001_waited": [],
    "seed001_compiled": [],  # compiled graph, functional all_gather waited
    "seed000_resize0": [],
    # tests/corpus/clean programs on CUDA (MEMLIFE_CORPUS_DEVICE=cuda) and NCCL
    "cuda_checkpointed_transformer": [],  # save_on_cpu(pin_memory=True) every other step
    "cuda_amp_accum_ema": [],
    "cuda_rl_replay_buffer": [],  # deque(maxlen) filling: growth_set_aside, bounded
    "cuda_torchvision_detection": [],
    "cuda_transformer_fastpath": [],
    "cuda_compiled_optimizer": [],  # inductor + Triton, compiled optimizer step
    "nccl_ddp_comm_hook_accum": [],  # fp16 hook: NCCL keeps buffers until its watchdog
    "nccl_dist_futures_wait_all": [],
    "nccl_dist_overlap_grad_hooks": [],
    "nccl_fsdp2_ckpt_accum": [],
    "nccl_ddp_bucket_view_static": [],  # grads as views of DDP's buckets
    "nccl_zero_redundancy_optimizer": [],  # params as views of ZeRO's flat buckets
    "nccl_tensor_parallel_mlp": [],  # DTensor, functional collectives waited lazily
    "nccl_compiled_ddp": [],  # torch.compile of DDP (DDPOptimizer)
    "nccl_dcp_async_save": [],  # DCP async_save: a gloo group on a background thread
    "cuda_jit_script_train": [],  # TorchScript train, traced inference (recorded with freeze)
    # recorded after the recorder let dead tensors go and recorded nested frees
    "cuda_saved_tensor_offload": [],  # pinned save_on_cpu and bf16 pack hooks
    "cuda_export_inference": [],  # torch.export, inference_mode
    "cuda_distill_teacher": [],
    "cuda_moco_feature_queue": [],  # queue overwritten in place, deque(maxlen) of embeddings
    "cuda_gan_two_optimizers": [],
    "cuda_progressive_unfreeze": [],  # optimizer state grows as layers join
    "nccl_ddp_join_uneven": [],  # Join's per-forward all-reduce, kept by the reducer
    "nccl_dist_eval_gather_objects": [],  # gather_object, reduce, async broadcast
    "nccl_expert_parallel_all_to_all": [],  # all_to_all_single, uneven splits
    "nccl_fsdp2_mixed_precision": [],  # bf16 params, fp32 reduce, explicit prefetch
    # recorded after dlopen began searching as the loader would for its caller
    "cuda_tbptt_lstm": [],  # cuDNN RNN: the wheel's cuDNN 9.19, not the image's 9.14
    "cuda_resume_mid_training": [],
    # first recorded in the first session of 2026-12-05 (one 262 s device call)
    "cuda_profiler_memory_schedule": [],  # torch.profiler with profile_memory, a schedule
    "cuda_flex_attention_compiled": [],  # flex_attention under torch.compile (Triton)
    "cuda_swa_averaged_model": [],
    "cuda_vae_distributions": [],
    "cuda_vmap_model_ensemble": [],  # torch.func.stack_module_state + vmap
    "cuda_background_eval_thread": [],  # evaluation on a second Python thread
    "cuda_fused_adamw_plateau": [],  # fused AdamW, ReduceLROnPlateau
    "cuda_packed_sequence_gru": [],  # cuDNN GRU on packed sequences
    "cuda_flop_counter_mem_tracker": [],  # FlopCounterMode and torch.distributed's MemTracker
    "cuda_torchvision_segmentation": [],
    "cuda_hf_t5_seq2seq_generate": [],
    "cuda_newton_cg_latent_fit_fixed": [],  # tests/corpus/leaky/newton_cg_latent_fit.py --fixed
    "cuda_memory_history_snapshot": [],  # torch's _record_memory_history beside memlife
    "nccl_ddp_optimizer_in_backward": [],  # optimizer steps in grad hooks under DDP
    # karpathy/nanoGPT bench.py (3adf61e), run unchanged: GPT-2 124M, bf16
    # autocast, fused AdamW, 30 steps (--real_data=False --compile=False)
    "ext_nanogpt_bench_eager": [],
    # recorded with trace format 4 (censuses of changes), on an H100
    "ext_nanogpt_bench_compiled": [],  # the same with --compile=True (inductor, Triton)
    # pytorch/examples distributed/ddp-tutorial-series (77f55b9) multigpu_torchrun.py
    # under torchrun over NCCL: its dataset is 4,096 small tensors
    "ext_ddp_tutorial_torchrun": [],
    # pytorch/torchtitan v0.2.2's Llama 3 debug model under torchrun (NCCL,
    # one rank), run unchanged (scripts/device/torchtitan.sh), on an H100:
    # compiled model and loss, per-op selective AC, async DCP checkpoints
    "ext_torchtitan_compiled_sac_op": [],
    # pytorch/examples word_language_model (77f55b9), LSTM, on an H100
    # (scripts/device/examples_gpu.sh): parameters updated by hand through
    # `.data`, 2 epochs on generated text
    "ext_wlm_lstm_cuda": [],
    # eager, resumed from step 20's DCP checkpoint to step 30
    "ext_torchtitan_eager_resume": [],
    # huggingface/pytorch-image-models train.py (aa4b585) run unchanged
    # (scripts/device/timm_train.sh): ResNet-18, fp16 AMP with its
    # NativeScaler, channels-last, EMA, its CUDA prefetcher, 2 workers
    "ext_timm_resnet18_amp": [],
    # create_graph=True leaves each gradient's graph holding its parameter
    # (pytorch#7343): the program printed "9830424 B kept at exit"
    "cuda_newton_cg_latent_fit": [("leaked_at_exit", 9_830_424)],
    # tests/corpus/cuda: GPU-only programs
    "cuda_fsdp1_orig_params": [],  # FSDP1 flat parameters, use_orig_params
    "cuda_cudagraph_reduce_overhead": [],  # CUDA graphs' private pool kept for replay
    "cuda_prefetch_pinned_stream": [],  # pinned DataLoader, side-stream copies, record_stream
    "gpu_train_expandable": [],  # gpu_train_clean on expandable segments
    "cuda_torchmetrics_epoch_auroc": [],  # list states reset each epoch: a cycle
    # one epoch scored at its end, no reset (an H200, the fifth session of
    # 2026-12-07): the metrics first computed after their last update
    "cuda_torchmetrics_one_epoch_scored_at_end": [],
    # the same with torcheval, whose updates memlife counts (an H100, the
    # sixth session of 2026-12-07)
    "cuda_torcheval_one_epoch_scored_at_end": [],
    # clean programs first run on the GPU in the seventh session of
    # 2026-12-07 (an H200; 27 gave 0 findings, the smallest of the most
    # distinct kept, the device call's 64 MiB being nearly full): HF
    # accelerate's prepared loops, evolution strategies rebinding every
    # parameter's .data to a view of one vector, out= buffers and set_() over
    # unfolded windows, an int8 wrapper subclass under LoRA adapters, sparse
    # embedding gradients with SparseAdam, and over NCCL DDP with
    # find_unused_parameters
    "cuda_accelerate_loop": [],
    "cuda_accelerate_grad_accumulation": [],
    "cuda_es_flat_params": [],
    "cuda_strided_windows_out_buffers": [],
    "cuda_int8_weight_subclass": [],
    "cuda_sparse_embedding_recsys": [],
    "nccl_ddp_unused_params_objects": [],
    "cuda_torchmetrics_reset": [],  # tests/corpus/leaky/torchmetrics_never_reset.py --fixed
    # never reset: the program printed "retained 184320" (its metric's states)
    "cuda_torchmetrics_never_reset": [("step_growth", 184_320)],
    # one epoch whose state grows at every step and is freed only by the
    # next epoch's start or the epoch's end hook (an H100, the sixth session
    # of 2026-12-06): an ignite engine's epoch metrics, a Lightning module's
    # training_step_outputs
    "cuda_ignite_epoch_metric_one_epoch": [],
    "cuda_lightning_epoch_outputs_one_epoch": [],
    # one epoch of a plain loop keeping the epoch's outputs in lists made
    # anew at each pass of the epoch loop (the sixth session of 2026-12-06)
    "cuda_epoch_outputs_plain_loop": [],
    # recorded with the backward marks (commit 1ae2f89, an H100): the clean
    # Grad-CAM
    "cuda_gradcam_hook_dict": [],
    # Grad-CAM's hooks never removed (jacobgil/pytorch-grad-cam#132), half of
    # what they keep gradients that CUDA's autograd thread allocates, and its
    # fix: recorded again in the third session of 2026-12-06 (an H100) once
    # the program measured at its end, "1343488 bytes kept by the hooks at
    # the end"
    "cuda_gradcam_hooks_removed": [],
    "cuda_gradcam_hooks_never_removed": [("step_growth", 1_343_488)],
    # first recorded in the third session of 2026-12-06 (one 240 s call, an
    # H100): Lightning's Trainer on CUDA (bf16-mixed, checkpoints, predict);
    # a Lightning Callback keeping every step's outputs (Lightning#15514,
    # #8583), which printed "3145776 bytes"; a loop without an optimizer
    # updating through `.data` keeping its outputs (packnet-sfm#47), "holds
    # 19267584 bytes"; the two collective bugs over NCCL, one rank: grads read
    # by the optimizer before their async all-reduces are waited, "284712",
    # and all-reduce handles never waited, "2621440 bytes"; each with its fix
    "cuda_lightning_trainer": [],
    "cuda_lightning_checkpoint_predict": [],
    "cuda_lightning_bf16_accumulate": [],
    "cuda_lightning_callback_keeps_outputs_fixed": [],
    # PyTorch's FAQ: losses kept with their graphs, 40 steps of one fp32 number
    # (the program measures 160 B; H100); the fixed twin keeps them detached,
    # a record of numbers set aside.
    "cuda_loss_history_keeps_graph": [("step_growth", 160)],
    "cuda_loss_history_keeps_graph_fixed": [],
    # one epoch of each, an H100 (the first session of 2026-12-07): what a
    # Lightning epoch-start hook makes anew, per-parameter gradient norms an
    # HF TrainerCallback keeps until on_epoch_end, the logits an ignite
    # handler keeps until EPOCH_COMPLETED
    "cuda_lightning_epoch_start_outputs_one_epoch": [],
    "cuda_hf_trainer_callback_epoch_grad_norms": [],
    "cuda_ignite_epoch_outputs_one_epoch": [],
    "cuda_lightning_callback_keeps_outputs": [("step_growth", 3_145_776)],
    "cuda_manual_sgd_keeps_outputs_fixed": [],
    "cuda_manual_sgd_keeps_outputs": [("step_growth", 19_267_584)],
    "nccl_dist_grad_use_before_wait_fixed": [],
    "nccl_dist_grad_use_before_wait": [("use_before_wait", 284_712)],
    "nccl_dist_unwaited_allreduce_fixed": [],
    "nccl_dist_unwaited_allreduce": [("unwaited_collective", 2_621_440)],
    # the other nine leak programs on CUDA (a second 237 s call), each with
    # what it printed, and their fixes; the ResNet probe recorded again (a
    # third call) once it measured at its end
    "cuda_exc_traceback_retry": [("step_growth", 7_084_032)],
    "cuda_val_loss_keeps_graph": [("step_growth", 14_303_284)],
    "cuda_retain_graph_loss_log": [("step_growth", 39_321_600)],
    "cuda_torchvision_probe_hook": [("step_growth", 72_417_280)],
    "cuda_lru_cache_step_key": [("step_growth", 6_291_456)],
    "cuda_hf_trainer_keeps_logits": [("step_growth", 10_240_000)],
    "cuda_val_outputs_every_other_step": [("step_growth", 4_194_304)],
    "cuda_torchscript_reset_constant_list": [("step_growth", 12_582_912)],
    "cuda_residual_view_first_sample": [("residual_view", 524_288)],
    "cuda_exc_traceback_retry_fixed": [],
    "cuda_val_loss_keeps_graph_fixed": [],
    "cuda_retain_graph_loss_log_fixed": [],
    "cuda_torchvision_probe_hook_fixed": [],
    "cuda_lru_cache_step_key_fixed": [],
    "cuda_hf_trainer_keeps_logits_fixed": [],
    "cuda_val_outputs_every_other_step_fixed": [],
    "cuda_torchscript_reset_constant_list_fixed": [],
    "cuda_residual_view_first_sample_fixed": [],
    # twenty more clean CPU programs made to take MEMLIFE_CORPUS_DEVICE (a
    # fourth call of the third session of 2026-12-06, an H100): 0 findings
    # each (digit_addition_gpt's 5.2 MB and the compiled-autograd loop's
    # 1.1 MB traces are not committed)
    "cuda_captum_style_hooks": [],
    "cuda_checkpoint_reentrant_sequential": [],
    "cuda_compiled_loop": [],
    "cuda_cond_control_flow": [],
    "cuda_dataloader_workers": [],
    "cuda_fno_complex_fft": [],
    "cuda_func_per_sample_grads": [],
    "cuda_hessian_trace_create_graph": [],
    "cuda_hf_bert_loop": [],
    "cuda_hf_trainer_eval_metrics": [],
    "cuda_library_custom_op_compiled": [],
    "cuda_nested_jagged_batches": [],
    "cuda_optimizer_in_backward": [],
    "cuda_pinn_hessian": [],
    "cuda_script_style": [],
    "cuda_selective_activation_checkpoint": [],
    "cuda_torchvision_resnet": [],
    "cuda_wgan_gp_penalty": [],
    "gpu_train_leak": [("step_growth", GPU_TRAIN_LEAK_BYTES)],  # keeps its loss tensors
    # first recorded in the fourth session of 2026-12-06 (an H100): the
    # gpytorch program, whose every step's output keeps half of that step's
    # solve (two false residual_view errors before commit faf5586); two
    # programs of libraries nobody here wrote (scripts/device/libraries_gpu.sh):
    # pytorch_geometric's gcn.py with GDC, and gpytorch's own SGPR test,
    # whose MagicMock(wraps=cholesky_ex) keeps every call's input (growth the
    # program does not measure, held by the mock: checked below)
    "cuda_gpytorch_decoupled_ppgpr": [],
    "ext_pyg_gcn_gdc_cuda": [],
    "ext_gp_sgpr_regression_cuda": [("step_growth", None)],
    "seed001_unwaited": [("unwaited_collective", 5 * 4 * 1024 * 1024)],
    "seed000_set_data": [("residual_view", 12_595_200)],
    "leaky_cuda": [("leaked_at_exit", 6_291_456)],
}


_corpus_reports = {}


def corpus_report(name):
    """The report of traces/gpu/corpus/NAME, analyzed once."""
    if name not in _corpus_reports:
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            subprocess.run([memlife, "analyze", str(traces / "corpus" / name), "-o", out.name],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _corpus_reports[name] = json.load(open(out.name))
    return _corpus_reports[name]


def corpus_findings(name):
    return corpus_report(name)["findings"]


def corpus_steps(name):
    """The step counts of traces/gpu/corpus/NAME's processes that had steps."""
    return [p["steps"] for p in corpus_report(name)["processes"] if p["steps"]]


def reachable_sites(name):
    """The still-reachable sites of traces/gpu/corpus/NAME's processes."""
    return [s for p in corpus_report(name)["processes"]
            for s in (p.get("still_reachable_at_exit") or {}).get("top_sites", [])]


for name, wanted in GPU_CORPUS.items():
    if not (traces / "corpus" / name).is_dir():
        failures.append(f"corpus/{name}: no trace")
        continue
    got = corpus_findings(name)
    expect([f["kind"] for f in got] == [k for k, _ in wanted],
           f"corpus/{name}: want {[k for k, _ in wanted]}, got "
           f"{[(f['kind'], f['bytes'], f['message'][:120]) for f in got]}")
    for (kind, nbytes), f in zip(wanted, got):
        if nbytes is not None:
            expect(abs(f["bytes"] - nbytes) <= 0.05 * nbytes,
                   f"corpus/{name}: {kind} of {f['bytes']} B, the program measured {nbytes} B")
    # Every still-reachable site is named: a library's workspace made inside
    # an op (cuBLAS's 32 MiB) by the Python call of that op, or by the op
    # where the thread runs no Python (the autograd engine's).
    unnamed = [s for s in reachable_sites(name) if s["site"] is None]
    expect(not unnamed, f"corpus/{name}: still-reachable sites without a name: {unnamed}")

def corpus_set_aside(name):
    return [e["why"] for p in corpus_report(name)["processes"] for e in p.get("growth_set_aside", [])]


# What was found and is no leak: the NCCL fp16 comm hook's compressed
# buffers (kept by ProcessGroupNCCL until its watchdog reaps the works), the
# replay buffer still filling, the ignite metrics bounded by their epoch,
# the epoch's outputs Lightning's, HF's and ignite's epoch-end hooks free,
# those a plain loop keeps in lists it makes anew at each epoch, those a
# Lightning epoch-start hook makes anew, and torchmetrics' and torcheval's
# state computed once after its last update. Gradients all-reduced and waited
# through futures, which ProcessGroupNCCL stashes until its watchdog reaps
# the works (a walk saw one while it was still the parameter's .grad).
for name, why in [("nccl_ddp_comm_hook_accum", ["collective_buffers"]),
                  ("nccl_dist_futures_wait_all", ["collective_buffers"]),
                  ("cuda_rl_replay_buffer", ["bounded"]),
                  ("cuda_ignite_epoch_metric_one_epoch", ["bounded"]),
                  ("cuda_lightning_epoch_outputs_one_epoch", ["epoch_end"]),
                  ("cuda_epoch_outputs_plain_loop", ["bounded"]),
                  ("cuda_lightning_epoch_start_outputs_one_epoch", ["bounded"]),
                  ("cuda_hf_trainer_callback_epoch_grad_norms", ["epoch_end"]),
                  ("cuda_ignite_epoch_outputs_one_epoch", ["epoch_end"]),
                  ("cuda_torchmetrics_one_epoch_scored_at_end", ["bounded"]),
                  ("cuda_torcheval_one_epoch_scored_at_end", ["bounded"])]:
    got = corpus_set_aside(name)
    expect(got == why, f"corpus/{name}: growth set aside as {why}, got {got}")

# Seed 000 in the real framework (scripts/device/deepspeed_corpus.sh): DeepSpeed
# ZeRO-3 on one H200, 4 x Linear(1024, 1024) in bf16, 6 steps. With
# DeepCompile, 0.19.1's dc::release_param rebinds the gathered parameter
# (set_data) while the compiled graph's views still hold the buffer; the
# program measured, around each final release (truth_compile.txt), 14,688,256
# bytes per step left allocated (8,396,800 by the forward's releases, all held
# until the forward graph ends), 0.19.2 none. Eager ZeRO-3 has no such path.
DEEPSPEED_LEFT_PER_STEP = 14_688_256
DEEPSPEED_LEFT_FORWARD = 8_396_800


def deepspeed_findings(name):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([memlife, "analyze", str(traces / "deepspeed" / name), "-o", out.name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.load(open(out.name))["findings"]


ds = deepspeed_findings("ds0.19.1_compile")
expect([f["kind"] for f in ds] == ["residual_view"],
       f"deepspeed 0.19.1 compile: one residual_view, got {[(f['kind'], f['message'][:150]) for f in ds]}")
if ds:
    e = ds[0]["evidence"]
    expect(e["bytes_per_step"] == DEEPSPEED_LEFT_PER_STEP,
           f"deepspeed 0.19.1: {e['bytes_per_step']} B per step, the program measured {DEEPSPEED_LEFT_PER_STEP}")
    expect(ds[0]["bytes"] == DEEPSPEED_LEFT_FORWARD,
           f"deepspeed 0.19.1: {ds[0]['bytes']} B at once, the forward left {DEEPSPEED_LEFT_FORWARD}")
    owner = [t for t in e["tensors"] if t["role"] == "owner"]
    views = [t for t in e["tensors"] if t["role"] == "view"]
    expect(owner and owner[0]["let_go"] == "rebound" and owner[0]["let_go_in_op"] == "dc::release_param",
           f"deepspeed 0.19.1: owner rebound inside dc::release_param, got {owner}")
    expect(any(v.get("made_in_op") == "dc::allgather_param" for v in views),
           f"deepspeed 0.19.1: a view made inside dc::allgather_param, got {views}")
# The CPU corpus's ZeRO-3 program (zero.Init, GatheredParameters, a checkpoint
# saved and loaded) on CUDA and NCCL under torchrun, both versions.
for name in ("ds0.19.2_compile", "ds0.19.1_eager", "ds0.19.2_eager",
             "ds0.19.1_corpus_zero3", "ds0.19.2_corpus_zero3"):
    got = deepspeed_findings(name)
    expect(not got, f"deepspeed {name}: no finding, got {[(f['kind'], f['message'][:150]) for f in got]}")

# memlife.record() on the H200 (scripts/device/record_block.sh): the recorder
# loaded into a process whose CUDA was initialised, three blocks. Block 2
# keeps 4 CUDA logits tensors; the program measured 134,217,728 B
# (record_blocks.out.txt). Blocks 1 (the first cuBLAS calls) and 3 (an
# AdamW loop) keep nothing.
RECORD_BLOCK_KEPT = 134_217_728


def block_findings(block):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([memlife, "analyze", str(traces / "record_blocks.mltrace"), "--block",
                        str(block), "-o", out.name], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        report = json.load(open(out.name))
        expect(report["warnings"] == [], f"record_blocks block {block}: {report['warnings']}")
        return report["findings"]


# The gradients the hooks keep are allocated on the autograd engine's
# thread, which runs no Python: they are found under the stack of the
# backward call that ran the engine, with the node that made them.
got = [f for f in corpus_findings("cuda_gradcam_hooks_never_removed") if f["kind"] == "step_growth"]
for site in ("gradcam_hooks_never_removed.py:81 in main (autograd node MeanBackward1)",
             "gradcam_hooks_never_removed.py:52 in GradCam.__call__ (autograd node MeanBackward1)"):
    expect(got and any(s.endswith(site) for s in got[0]["evidence"]["sites"]),
           f"cuda_gradcam_hooks_never_removed: growth site {site}, got "
           f"{got[0]['evidence']['sites'] if got else None}")
expect(got and got[0]["evidence"]["held_by"] and "gradients[*]" in got[0]["evidence"]["held_by"][0]["path"],
       f"cuda_gradcam_hooks_never_removed: held by the hook's gradients, got "
       f"{got[0]['evidence']['held_by'] if got else None}")

# gpytorch's SGPR test wraps torch.linalg.cholesky_ex in a MagicMock, which
# keeps every call's arguments: the growth is held by the mock.
got = [f for f in corpus_findings("ext_gp_sgpr_regression_cuda") if f["kind"] == "step_growth"]
expect(got and any(h["path"] == "test_sgpr_mean_abs_error()._wrapped_cholesky._mock_call_args_list[*][*][*]"
                   for h in got[0]["evidence"].get("held_by", [])),
       f"ext_gp_sgpr_regression_cuda: held by the mock's call_args_list, got "
       f"{got[0]['evidence'].get('held_by') if got else None}")

# torchtitan's cuBLAS workspaces, named by the call of the op that made
# them and by the autograd engine's op.
got = {((s["site"] or "").rsplit("/", 1)[-1], s["bytes"]) for s in reachable_sites("ext_torchtitan_eager_resume")}
for site in [("model.py:251 in Attention.forward", 32 << 20),
             ("inside autograd::engine::evaluate_function: MmBackward0 (no Python stack)", 32 << 20)]:
    expect(site in got, f"ext_torchtitan_eager_resume: cuBLAS workspace {site} still reachable, got {got}")

# A compiled optimizer step runs no Optimizer.step op: its 10 iterations
# get their steps from the backward passes that follow an update, 9 of them
# (recorded with a draft of commit 319c6be: the same probe, before a record()
# block restarted it and before it read samples only from live storage).
got = corpus_steps("cuda_compiled_optimizer")
expect(got == [9], f"cuda_compiled_optimizer: 9 steps from backward passes, got {got}")

# word_language_model updates its parameters with `p.data.add_` (a version
# counter of its own) on the GPU, where the probe reads no element: its
# steps are the backward passes after the updates the torch plugin saw
# write the parameters' storages, 111 of its 112 passes.
got = corpus_steps("ext_wlm_lstm_cuda")
expect(got == [111], f"ext_wlm_lstm_cuda: 111 steps from backward passes, got {got}")

# The same with `.data` updates in a program of the corpus that keeps its
# outputs: 11 steps from its 12 backward passes, and the growth found.
got = corpus_steps("cuda_manual_sgd_keeps_outputs")
expect(got == [11], f"cuda_manual_sgd_keeps_outputs: 11 steps from backward passes, got {got}")

# Over NCCL the optimizer's reads race the all-reduce kernels: the finding
# names the issue (line 54) and the reads (clip_grad_norm_ at 56, step() at 57).
got = of(corpus_findings("nccl_dist_grad_use_before_wait"), "use_before_wait")
lines = {fr.get("line") for f in got for st in f["evidence"].get("stacks", []) for fr in st
         if (fr.get("file") or "").endswith("dist_grad_use_before_wait.py")}
expect({54, 56, 57} <= lines, f"nccl_dist_grad_use_before_wait: issue and read lines, got {sorted(lines)}")

# The optimizer fused into backward (an optimizer per parameter stepped from
# its grad hook, on the autograd engine's thread on CUDA): one step per
# backward pass, recorded again once the recorder made them one (before:
# 120 steps for 12 passes, 40 for DDP's 10, and a growing list unseen).
for name, want in [("cuda_optimizer_in_backward", [12]), ("nccl_ddp_optimizer_in_backward", [10])]:
    got = corpus_steps(name)
    expect(got == want, f"{name}: {want} steps, got {got}")

# torchtitan's OptimizersContainer is an Optimizer whose step() steps each
# model part's optimizer: 20 training steps are 20 steps, not 40.
got = corpus_steps("ext_torchtitan_compiled_sac_op")
expect(got == [20], f"ext_torchtitan_compiled_sac_op: 20 steps, got {got}")

for block in (1, 3):
    got = block_findings(block)
    expect(not got, f"record_blocks block {block}: no finding, got {[f['message'] for f in got]}")
got = block_findings(2)
expect([(f["kind"], f["bytes"]) for f in got] == [("leaked_by_block", RECORD_BLOCK_KEPT)],
       f"record_blocks block 2: one leaked_by_block of {RECORD_BLOCK_KEPT} B, got "
       f"{[(f['kind'], f['bytes']) for f in got]}")
if got:
    held = got[0]["evidence"]["held_by"][0]
    expect(held["path"] == "__main__.KEPT[*]" and
           held["stored_at"][0].endswith("record_blocks_gpu.py:30"),
           f"record_blocks block 2: held by __main__.KEPT[*] at the LEAK-LINE, got {held}")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
