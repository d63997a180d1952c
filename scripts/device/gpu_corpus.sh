#!/usr/bin/env bash
# The GPU half of the program corpus, in one device call (after
# scripts/device/prepare_carry.sh here):
#   bash scripts/device/gpu_corpus.sh     # OUT set by the device tool
# Builds against the device's torch (common.sh), records clean GPU programs
# (a GPT-2 training loop, HF Trainer on CUDA, seed 001 waited and compiled,
# the CPU corpus programs that take MEMLIFE_CORPUS_DEVICE on CUDA and NCCL)
# and their leaky counterparts (the loop keeping its losses, seed 001 never
# waited, seed 000's set_data release, a raw-CUDA leak), with memlife's
# Python hooks on (PYTHONPATH as `memlife run` sets it), and returns the
# traces in $OUT/gpu_corpus.tar.gz for `memlife analyze` here.
# ONLY="name ..." records just those scenarios.
source "$(dirname "$0")/common.sh"
export PYTHONPATH=$ROOT/python:$ROOT/python/memlife/autoload
export STACKS=${STACKS:-python} TMO=${TMO:-300}
scenario() { wanted "$1" || return 0; traced "$@"; }

# torchmetrics, peft, Lightning, pytorch-ignite and captum are not in the
# device image: their pure-Python wheels (and lightning-utilities') come in
# .whl/tm, carried (here: pip download --no-deps --python-version 3.12
# --only-binary=:all: -d .whl/tm with the versions of
# tests/corpus/requirements.txt).
if ls .whl/tm/*.whl > /dev/null 2>&1; then
  install_wheels /tmp/tm-site .whl/tm/*.whl
  export PYTHONPATH=$PYTHONPATH:/tmp/tm-site
fi

say clean GPU programs
scenario gpu_train_clean python3 scripts/device/gpu_train_loop.py clean
MEMLIFE_CORPUS_DEVICE=cuda scenario hf_trainer_cuda python3 tests/corpus/clean/hf_gpt2_trainer.py
scenario seed001_waited python3 scripts/device/seed001_collectives.py waited
scenario seed001_compiled python3 scripts/device/seed001_collectives.py compiled
scenario seed000_resize0 python3 scripts/device/seed000_release.py resize0

say clean CPU corpus programs on CUDA and NCCL
# The programs of tests/corpus/clean that take MEMLIFE_CORPUS_DEVICE: the
# same code on the GPU (pinned save_on_cpu, bf16 autocast, inductor with
# Triton, cuDNN/cuBLAS), the distributed ones over NCCL with one rank per GPU.
NGPU=$(nvidia-smi -L | wc -l)
for p in checkpointed_transformer amp_accum_ema hf_generate_cache rl_replay_buffer \
         torchvision_detection transformer_fastpath compiled_optimizer jit_script_train \
         hf_static_cache_generate gan_two_optimizers tbptt_lstm moco_feature_queue \
         compile_dynamic_shapes saved_tensor_offload export_inference moe_topk_routing \
         distill_teacher maml_functional_call progressive_unfreeze gradcam_hook_dict \
         resume_mid_training profiler_memory_schedule flex_attention_compiled swa_averaged_model \
         vae_distributions vmap_model_ensemble background_eval_thread fused_adamw_plateau \
         packed_sequence_gru flop_counter_mem_tracker torchvision_segmentation hf_t5_seq2seq_generate \
         hf_bert_loop torchvision_resnet compiled_loop script_style dataloader_workers \
         compiled_autograd_loop cond_control_flow checkpoint_reentrant_sequential \
         selective_activation_checkpoint library_custom_op_compiled func_per_sample_grads \
         hessian_trace_create_graph wgan_gp_penalty pinn_hessian nested_jagged_batches \
         captum_style_hooks digit_addition_gpt optimizer_in_backward fno_complex_fft \
         hf_trainer_eval_metrics gpytorch_decoupled_ppgpr epoch_outputs_plain_loop \
         hf_trainer_callback_epoch_grad_norms ignite_epoch_outputs_one_epoch \
         captum_lime_sgd_lasso torchmetrics_one_epoch_scored_at_end \
         torcheval_one_epoch_scored_at_end sklearn_numpy_epoch_scores \
         accelerate_grad_accumulation accelerate_loop actor_learner_queue \
         autograd_function_mark_dirty best_model_snapshot custom_autograd_ema \
         dataset_memo_cache dataset_memo_cache_short_run ema_multi_avg_buffers es_flat_params \
         flop_counter_module_tracker forward_ad_jvp frombuffer_decode fx_subgraph_rewrite \
         int8_weight_subclass jit_trace_freeze_serve lookahead_wrapper mmap_checkpoint_numpy \
         parametrize_spectral sparse_csr_gcn sparse_embedding_recsys strided_windows_out_buffers \
         tv_tensors_transforms_v2; do
  MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_$p python3 tests/corpus/clean/$p.py
done
for p in ddp_comm_hook_accum dist_futures_wait_all dist_overlap_grad_hooks fsdp2_ckpt_accum \
         ddp_bucket_view_static zero_redundancy_optimizer tensor_parallel_mlp compiled_ddp \
         dcp_async_save ddp_join_uneven fsdp2_mixed_precision expert_parallel_all_to_all \
         dist_eval_gather_objects ddp_torcheval_sync_and_compute ddp_gloo ddp_unused_params_objects \
         fsdp2_gloo fsdp2_activation_checkpoint; do
  MEMLIFE_CORPUS_DEVICE=cuda scenario nccl_$p python3 -m torch.distributed.run --standalone \
    --nproc_per_node=$NGPU tests/corpus/clean/$p.py
done

say GPU-only corpus programs
# tests/corpus/cuda: FSDP1, CUDA graphs (reduce-overhead), a pinned-memory
# prefetcher on a side stream, torch's memory history beside memlife; and the GPT-2 loop on expandable segments.
scenario cuda_fsdp1_orig_params python3 -m torch.distributed.run --standalone \
  --nproc_per_node=$NGPU tests/corpus/cuda/fsdp1_orig_params.py
scenario cuda_cudagraph_reduce_overhead python3 tests/corpus/cuda/cudagraph_reduce_overhead.py
scenario cuda_prefetch_pinned_stream python3 tests/corpus/cuda/prefetch_pinned_stream.py
scenario cuda_memory_history_snapshot python3 tests/corpus/cuda/memory_history_snapshot.py
scenario nccl_ddp_optimizer_in_backward python3 -m torch.distributed.run --standalone \
  --nproc_per_node=$NGPU tests/corpus/cuda/ddp_optimizer_in_backward.py
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True scenario gpu_train_expandable \
  python3 scripts/device/gpu_train_loop.py clean

for p in lbfgs_fit torchmetrics_epoch_auroc peft_lora_finetune lightning_trainer \
         lightning_checkpoint_predict lightning_bf16_accumulate lightning_auroc_one_epoch \
         lightning_epoch_outputs_one_epoch lightning_epoch_start_outputs_one_epoch \
         ignite_epoch_metric_one_epoch; do
  MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_$p python3 tests/corpus/clean/$p.py
done

say programs from other projects, run unchanged
# Carried in .whl/ext when present (copied from their repositories at the
# commits the README names): nanoGPT's bench.py (GPT-2 124M, bf16 autocast,
# fused AdamW; eager, then compiled), once plainly and once under memlife so
# its own "time per iteration" gives the overhead; pytorch/examples' DDP
# tutorial under torchrun on NCCL.
ext() { [ -f ".whl/ext/$1" ] && wanted "$2"; }
for mode in eager compiled; do
  flag=False; [ $mode = compiled ] && flag=True
  if ext nanoGPT/bench.py ext_nanogpt_bench_$mode; then
    (cd .whl/ext/nanoGPT && timeout $TMO python3 bench.py --real_data=False --compile=$flag 2>&1 | grep "time per iteration" | sed "s/^/plain $mode: /")
    (cd .whl/ext/nanoGPT && scenario ext_nanogpt_bench_$mode python3 bench.py --real_data=False --compile=$flag)
    grep "time per iteration" $R/ext_nanogpt_bench_$mode.out | sed "s/^/memlife $mode: /"
  fi
done
if ext ddp-tutorial-series/multigpu_torchrun.py ext_ddp_tutorial_torchrun; then
  (cd .whl/ext/ddp-tutorial-series && scenario ext_ddp_tutorial_torchrun python3 -m torch.distributed.run \
    --standalone --nproc_per_node=$NGPU multigpu_torchrun.py 4 2)
fi

say leaky GPU programs
# The torchmetrics leak and its fix on CUDA; the program prints the bytes
# its metric keeps ("retained N").
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_torchmetrics_never_reset python3 tests/corpus/leaky/torchmetrics_never_reset.py
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_torchmetrics_reset python3 tests/corpus/leaky/torchmetrics_never_reset.py --fixed
# The create_graph gradient cycle (pytorch#7343): CUDA memory only a C++
# reference cycle holds; the program prints the bytes it keeps at exit.
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_newton_cg_latent_fit python3 tests/corpus/leaky/newton_cg_latent_fit.py
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_newton_cg_latent_fit_fixed python3 tests/corpus/leaky/newton_cg_latent_fit.py --fixed
# Grad-CAM hooks never removed (jacobgil/pytorch-grad-cam#132): half of what
# they keep are gradients, which CUDA's autograd thread allocates; the
# program prints the bytes its hooks keep.
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_gradcam_hooks_never_removed python3 tests/corpus/leaky/gradcam_hooks_never_removed.py
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_gradcam_hooks_removed python3 tests/corpus/leaky/gradcam_hooks_never_removed.py --fixed
# The two collective bugs over NCCL, one rank per GPU: gradients read by
# the optimizer before their async all-reduces are waited (a race on the
# GPU), and all-reduce handles kept but never waited; each with its fix.
for p in dist_grad_use_before_wait dist_unwaited_allreduce; do
  for fixed in "" --fixed; do
    MEMLIFE_CORPUS_DEVICE=cuda scenario nccl_$p${fixed:+_fixed} python3 -m torch.distributed.run \
      --standalone --nproc_per_node=$NGPU tests/corpus/leaky/$p.py $fixed
  done
done
# The other leak programs of tests/corpus/leaky (a Lightning Callback
# keeping every step's outputs among them), unchanged but for the device,
# and their fixes; each prints the bytes it keeps.
for p in exc_traceback_retry val_loss_keeps_graph retain_graph_loss_log torchvision_probe_hook \
         lru_cache_step_key hf_trainer_keeps_logits val_outputs_every_other_step \
         torchscript_reset_constant_list residual_view_first_sample lightning_callback_keeps_outputs \
         loss_history_keeps_graph; do
  for fixed in "" --fixed; do
    MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_$p${fixed:+_fixed} python3 tests/corpus/leaky/$p.py $fixed
  done
done
# A loop without an optimizer updating through `.data` (packnet-sfm#47's
# kept outputs): its steps are the backward passes after the updates the
# torch plugin saw; the program prints the bytes its list holds.
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_manual_sgd_keeps_outputs python3 tests/corpus/leaky/manual_sgd_keeps_outputs.py --data
MEMLIFE_CORPUS_DEVICE=cuda scenario cuda_manual_sgd_keeps_outputs_fixed python3 tests/corpus/leaky/manual_sgd_keeps_outputs.py --data --fixed
scenario gpu_train_leak python3 scripts/device/gpu_train_loop.py leak
scenario seed001_unwaited python3 scripts/device/seed001_collectives.py unwaited
scenario seed000_set_data python3 scripts/device/seed000_release.py set_data
nvcc -O2 -cudart shared -arch=sm_90 tests/gpu/leaky_cuda.cu -o $B/leaky_cuda_shared
scenario leaky_cuda $B/leaky_cuda_shared

analyze_traces
du -sh $R/traces/*
tar -C /tmp -czf $OUT/gpu_corpus.tar.gz ml-results
ls -la $OUT
