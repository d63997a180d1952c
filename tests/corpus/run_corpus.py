#!/usr/bin/env python3
"""Run the memlife program corpus (real PyTorch programs) under `memlife run`,
analyze each run, and summarize the findings.

    python3 tests/corpus/run_corpus.py                      # every clean program
    python3 tests/corpus/run_corpus.py ddp_gloo script_style
    python3 tests/corpus/run_corpus.py --dir leaky --json out.json --markdown
    python3 tests/corpus/run_corpus.py --plain --out /tmp/corpus_out

Importable (e.g. by a pytest file): CLEAN_PROGRAMS is the one list of clean
programs and how each is launched; programs(dir) lists any corpus directory;
run_one() runs one program and returns a result dict.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent
REPO_ROOT = CORPUS_DIR.parent.parent

PYTHON = "python3"
TORCHRUN_MARKER = "# memlife-corpus: torchrun"
MARKER_LINES = 5  # the marker must be within a file's first lines

# Launchers: "python" runs `python3 FILE`; "torchrun" runs
# `python3 -m torch.distributed.run --standalone --nproc_per_node=2 FILE`.
PYTHON_LAUNCH = "python"
TORCHRUN_LAUNCH = "torchrun"
NPROC = 2

# The clean corpus: program name (file tests/corpus/clean/<name>.py) -> launcher.
# This is the single source of truth for which clean programs exist and how
# each one is launched. Distributed programs also carry TORCHRUN_MARKER.
CLEAN_PROGRAMS: dict[str, str] = {
    "hf_gpt2_trainer": PYTHON_LAUNCH,
    "hf_bert_loop": PYTHON_LAUNCH,
    "torchvision_resnet": PYTHON_LAUNCH,
    "lightning_trainer": PYTHON_LAUNCH,
    "lightning_auroc_one_epoch": PYTHON_LAUNCH,
    "lightning_epoch_outputs_one_epoch": PYTHON_LAUNCH,
    "lightning_epoch_start_outputs_one_epoch": PYTHON_LAUNCH,
    "ignite_epoch_metric_one_epoch": PYTHON_LAUNCH,
    "ignite_epoch_outputs_one_epoch": PYTHON_LAUNCH,
    "epoch_outputs_plain_loop": PYTHON_LAUNCH,
    "compiled_loop": PYTHON_LAUNCH,
    "ddp_gloo": TORCHRUN_LAUNCH,
    "fsdp2_gloo": TORCHRUN_LAUNCH,
    "dataloader_workers": PYTHON_LAUNCH,
    "script_style": PYTHON_LAUNCH,
    "hf_generate_cache": PYTHON_LAUNCH,
    "checkpointed_transformer": PYTHON_LAUNCH,
    "amp_accum_ema": PYTHON_LAUNCH,
    "func_per_sample_grads": PYTHON_LAUNCH,
    "ddp_comm_hook_accum": TORCHRUN_LAUNCH,
    "torchvision_detection": PYTHON_LAUNCH,
    "transformer_fastpath": PYTHON_LAUNCH,
    "dist_futures_wait_all": TORCHRUN_LAUNCH,
    "dist_overlap_grad_hooks": TORCHRUN_LAUNCH,
    "ddp_unused_params_objects": TORCHRUN_LAUNCH,
    "fsdp2_ckpt_accum": TORCHRUN_LAUNCH,
    "dataset_memo_cache": PYTHON_LAUNCH,
    "dataset_memo_cache_short_run": PYTHON_LAUNCH,
    "rl_replay_buffer": PYTHON_LAUNCH,
    "best_model_snapshot": PYTHON_LAUNCH,
    "hf_trainer_eval_metrics": PYTHON_LAUNCH,
    "hf_trainer_callback_epoch_grad_norms": PYTHON_LAUNCH,
    "compiled_optimizer": PYTHON_LAUNCH,
    "lbfgs_fit": PYTHON_LAUNCH,
    "torchmetrics_epoch_auroc": PYTHON_LAUNCH,
    "parametrize_spectral": PYTHON_LAUNCH,
    "accelerate_loop": PYTHON_LAUNCH,
    "hf_trainer_best_checkpoint": PYTHON_LAUNCH,
    "lightning_checkpoint_predict": PYTHON_LAUNCH,
    "custom_autograd_ema": PYTHON_LAUNCH,
    "ddp_bucket_view_static": TORCHRUN_LAUNCH,
    "zero_redundancy_optimizer": TORCHRUN_LAUNCH,
    "tensor_parallel_mlp": TORCHRUN_LAUNCH,
    "compiled_ddp": TORCHRUN_LAUNCH,
    "dcp_async_save": TORCHRUN_LAUNCH,
    "pipeline_gpipe": TORCHRUN_LAUNCH,
    "es_flat_params": PYTHON_LAUNCH,
    "jit_script_train": PYTHON_LAUNCH,
    "prune_then_quantize": PYTHON_LAUNCH,
    "sparse_embedding_recsys": PYTHON_LAUNCH,
    "hf_static_cache_generate": PYTHON_LAUNCH,
    "gan_two_optimizers": PYTHON_LAUNCH,
    "tbptt_lstm": PYTHON_LAUNCH,
    "moco_feature_queue": PYTHON_LAUNCH,
    "compile_dynamic_shapes": PYTHON_LAUNCH,
    "saved_tensor_offload": PYTHON_LAUNCH,
    "export_inference": PYTHON_LAUNCH,
    "moe_topk_routing": PYTHON_LAUNCH,
    "distill_teacher": PYTHON_LAUNCH,
    "peft_lora_finetune": PYTHON_LAUNCH,
    "ddp_join_uneven": TORCHRUN_LAUNCH,
    "fsdp2_mixed_precision": TORCHRUN_LAUNCH,
    "maml_functional_call": PYTHON_LAUNCH,
    "progressive_unfreeze": PYTHON_LAUNCH,
    "gradcam_hook_dict": PYTHON_LAUNCH,
    "qat_fx_prepare": PYTHON_LAUNCH,
    "resume_mid_training": PYTHON_LAUNCH,
    "expert_parallel_all_to_all": TORCHRUN_LAUNCH,
    "dist_eval_gather_objects": TORCHRUN_LAUNCH,
    "lightning_ddp_subprocess": PYTHON_LAUNCH,
    "hf_trainer_ddp": TORCHRUN_LAUNCH,
    "hogwild_shared_memory": PYTHON_LAUNCH,
    "profiler_memory_schedule": PYTHON_LAUNCH,
    "mmap_checkpoint_numpy": PYTHON_LAUNCH,
    "swa_averaged_model": PYTHON_LAUNCH,
    "nested_jagged_batches": PYTHON_LAUNCH,
    "flex_attention_compiled": PYTHON_LAUNCH,
    "vmap_model_ensemble": PYTHON_LAUNCH,
    "background_eval_thread": PYTHON_LAUNCH,
    "vae_distributions": PYTHON_LAUNCH,
    "fno_complex_fft": PYTHON_LAUNCH,
    "optimizer_in_backward": PYTHON_LAUNCH,
    "pinn_hessian": PYTHON_LAUNCH,
    "forward_ad_jvp": PYTHON_LAUNCH,
    "compiled_autograd_loop": PYTHON_LAUNCH,
    "cond_control_flow": PYTHON_LAUNCH,
    "strided_windows_out_buffers": PYTHON_LAUNCH,
    "frombuffer_decode": PYTHON_LAUNCH,
    "tv_tensors_transforms_v2": PYTHON_LAUNCH,
    "wgan_gp_penalty": PYTHON_LAUNCH,
    "hessian_trace_create_graph": PYTHON_LAUNCH,
    "captum_style_hooks": PYTHON_LAUNCH,
    "lookahead_wrapper": PYTHON_LAUNCH,
    "ema_multi_avg_buffers": PYTHON_LAUNCH,
    "dynamic_quant_lstm_serve": PYTHON_LAUNCH,
    "p2p_ring_isend_irecv": TORCHRUN_LAUNCH,
    "subgroup_collectives": TORCHRUN_LAUNCH,
    "library_custom_op_compiled": PYTHON_LAUNCH,
    "jit_trace_freeze_serve": PYTHON_LAUNCH,
    "autograd_function_mark_dirty": PYTHON_LAUNCH,
    "sparse_csr_gcn": PYTHON_LAUNCH,
    "selective_activation_checkpoint": PYTHON_LAUNCH,
    "fsdp2_activation_checkpoint": TORCHRUN_LAUNCH,
    "accelerate_grad_accumulation": PYTHON_LAUNCH,
    "actor_learner_queue": PYTHON_LAUNCH,
    "aoti_package_serve": PYTHON_LAUNCH,
    "checkpoint_reentrant_sequential": PYTHON_LAUNCH,
    "flop_counter_module_tracker": PYTHON_LAUNCH,
    "flop_counter_mem_tracker": PYTHON_LAUNCH,
    "fused_adamw_plateau": PYTHON_LAUNCH,
    "fx_subgraph_rewrite": PYTHON_LAUNCH,
    "grad_scaler_fp16_cpu": PYTHON_LAUNCH,
    "hf_t5_seq2seq_generate": PYTHON_LAUNCH,
    "int8_weight_subclass": PYTHON_LAUNCH,
    "lightning_bf16_accumulate": PYTHON_LAUNCH,
    "packed_sequence_gru": PYTHON_LAUNCH,
    "torchvision_segmentation": PYTHON_LAUNCH,
    "digit_addition_gpt": PYTHON_LAUNCH,
    "deepspeed_zero3": TORCHRUN_LAUNCH,
    "hf_trainer_deepspeed_zero3": TORCHRUN_LAUNCH,
    "gpytorch_decoupled_ppgpr": PYTHON_LAUNCH,
    "captum_lime_sgd_lasso": PYTHON_LAUNCH,
    "torchmetrics_one_epoch_scored_at_end": PYTHON_LAUNCH,
    "torcheval_one_epoch_scored_at_end": PYTHON_LAUNCH,
    "ddp_torcheval_sync_and_compute": TORCHRUN_LAUNCH,
    "sklearn_numpy_epoch_scores": PYTHON_LAUNCH,
}

DEFAULT_TIMEOUT_S = 600


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    path: Path
    launcher: str  # PYTHON_LAUNCH or TORCHRUN_LAUNCH
    args: tuple[str, ...] = ()
    # Leak programs: the one finding kind their header expects ("" for a
    # clean program or a leak program's --fixed twin).
    expect: str = ""

    def argv(self) -> list[str]:
        """The command that runs the program (without memlife)."""
        if self.launcher == TORCHRUN_LAUNCH:
            return [PYTHON, "-m", "torch.distributed.run", "--standalone",
                    f"--nproc_per_node={NPROC}", str(self.path), *self.args]
        return [PYTHON, str(self.path), *self.args]


def launcher_from_marker(path: Path) -> str:
    """TORCHRUN_LAUNCH when the file's first lines hold TORCHRUN_MARKER."""
    with open(path, encoding="utf-8") as f:
        for _, line in zip(range(MARKER_LINES), f):
            if line.strip().startswith(TORCHRUN_MARKER):
                return TORCHRUN_LAUNCH
    return PYTHON_LAUNCH


EXPECT_MARKER = "# memlife-corpus: expect="


def expected_kind(path: Path) -> str:
    """The finding kind a leak program's header names."""
    with open(path, encoding="utf-8") as f:
        for _, line in zip(range(MARKER_LINES), f):
            if line.strip().startswith(EXPECT_MARKER):
                return line.strip()[len(EXPECT_MARKER):].split()[0]
    return ""


def programs(directory: str | os.PathLike = "clean") -> dict[str, Program]:
    """Programs of a corpus directory, name -> Program.

    `directory` is a name under tests/corpus/ ("clean", "leaky") or a path.
    For "clean" the list and launchers come from CLEAN_PROGRAMS; any other
    directory is discovered: every *.py file not starting with "_", launched
    by its marker line.
    """
    d = Path(directory)
    if not d.is_absolute() and not d.exists():
        d = CORPUS_DIR / d
    d = d.resolve()
    if d == (CORPUS_DIR / "clean").resolve():
        return {name: Program(name, d / f"{name}.py", launch)
                for name, launch in CLEAN_PROGRAMS.items()}
    if not d.is_dir():
        raise FileNotFoundError(f"no corpus directory {d}")
    found = {}
    for p in sorted(d.glob("*.py")):
        if p.name.startswith("_"):
            continue
        launcher, expect = launcher_from_marker(p), expected_kind(p)
        found[p.stem] = Program(p.stem, p, launcher, (), expect)
        if expect:  # its clean twin: the fix the bug report describes
            found[p.stem + "-fixed"] = Program(p.stem + "-fixed", p, launcher, ("--fixed",), "")
    return found


def default_memlife() -> Path:
    env = os.environ.get("MEMLIFE_BIN")
    return Path(env) if env else REPO_ROOT / "build" / "bin" / "memlife"


def _tail(path: Path, n: int = 3000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-n:].decode("utf-8", "replace")


def _run_logged(argv: list[str], log_prefix: Path, cwd: Path, timeout: float) -> tuple[int, float]:
    """Run argv with stdout/stderr to <prefix>.stdout/.stderr; (exit status, wall s).
    A timeout gives status 124."""
    start = time.monotonic()
    with open(f"{log_prefix}.stdout", "wb") as out, open(f"{log_prefix}.stderr", "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the group this call started
            proc.wait()
            rc = 124
    return rc, time.monotonic() - start


def summarize_finding(f: dict) -> dict:
    """The fields the tables print, plus the top frames of each evidence stack."""
    ev = f.get("evidence") or {}
    stacks = ev.get("stacks") or []
    roles = ev.get("stack_roles") or []
    top = []
    for i, stack in enumerate(stacks):
        frames = []
        for fr in stack[:3]:
            if "module" in fr:
                frames.append(f"{fr.get('function') or '?'} ({Path(fr.get('module') or '?').name})")
            else:
                frames.append(f"{fr.get('file')}:{fr.get('line')} {fr.get('function')}")
        top.append({"role": roles[i] if i < len(roles) else None, "frames": frames})
    return {
        "kind": f.get("kind"),
        "severity": f.get("severity"),
        "bytes": f.get("bytes"),
        "count": f.get("count"),
        "rank": f.get("rank"),
        "ranks": f.get("ranks"),
        "message": f.get("message", ""),
        "stacks_top3": top,
        "held_by": [h.get("path") for h in ev.get("held_by") or []],
    }


def run_one(prog: Program, memlife: Path, out_dir: Path, timeout: float = DEFAULT_TIMEOUT_S,
            plain: bool = False, analyze_args: list[str] | None = None) -> dict:
    """Run one program under memlife and analyze it. Traces go to out_dir/<name>/,
    the report to out_dir/<name>.json, logs to out_dir/<name>.{run,analyze,plain}.*"""
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    trace_dir = out_dir / prog.name
    report = out_dir / f"{prog.name}.json"
    if trace_dir.exists():
        shutil.rmtree(trace_dir)
    if report.exists():
        report.unlink()
    # Each program runs in a scratch working directory so nothing it writes
    # lands in the repository.
    cwd = out_dir / f"{prog.name}.cwd"
    cwd.mkdir(exist_ok=True)

    res: dict = {"program": prog.name, "path": str(prog.path), "launcher": prog.launcher,
                 "command": prog.argv()}
    if plain:
        rc, secs = _run_logged(prog.argv(), out_dir / f"{prog.name}.plain", cwd, timeout)
        res["plain_exit"] = rc
        res["plain_seconds"] = round(secs, 2)

    run_argv = [str(memlife), "run", "-o", str(trace_dir), "--", *prog.argv()]
    # Leak programs write the bytes they measure as leaked here.
    truth = out_dir / f"{prog.name}.truth.json"
    if truth.exists():
        truth.unlink()
    os.environ["MEMLIFE_CORPUS_TRUTH"] = str(truth)
    rc, secs = _run_logged(run_argv, out_dir / f"{prog.name}.run", cwd, timeout)
    res["expect"] = prog.expect
    res["truth"] = json.loads(truth.read_text()) if truth.exists() else None
    res["exit"] = rc
    res["seconds"] = round(secs, 2)
    res["run_stderr_tail"] = _tail(out_dir / f"{prog.name}.run.stderr") if rc != 0 else ""
    res["traces"] = str(trace_dir)

    an_argv = [str(memlife), "analyze", str(trace_dir), "-o", str(report), *(analyze_args or [])]
    arc, asecs = _run_logged(an_argv, out_dir / f"{prog.name}.analyze", cwd, timeout)
    res["analyze_exit"] = arc
    res["analyze_seconds"] = round(asecs, 2)
    res["report"] = str(report)
    findings: list[dict] = []
    if report.exists():
        try:
            data = json.loads(report.read_text())
            findings = data.get("findings") or []
            res["report_warnings"] = data.get("warnings") or []
            res["processes"] = len(data.get("processes") or [])
        except (OSError, json.JSONDecodeError) as e:
            res["report_error"] = str(e)
    else:
        res["report_error"] = "no report written"
        res["analyze_stderr_tail"] = _tail(out_dir / f"{prog.name}.analyze.stderr")
    res["findings"] = [summarize_finding(f) for f in findings]
    sev: dict[str, int] = {}
    for f in findings:
        sev[f.get("severity", "?")] = sev.get(f.get("severity", "?"), 0) + 1
    res["by_severity"] = sev
    return res


def _fmt_bytes(n) -> str:
    if not isinstance(n, (int, float)):
        return str(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _sev_text(sev: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(sev.items())) or "none"


def print_table(results: list[dict], file=sys.stdout) -> None:
    has_plain = any("plain_seconds" in r for r in results)
    w = max([22] + [len(r["program"]) for r in results])
    head = f"{'program':<{w}} {'exit':>4} {'memlife s':>9}"
    if has_plain:
        head += f" {'plain exit':>10} {'plain s':>7}"
    head += "  findings"
    print(head, file=file)
    print("-" * len(head), file=file)
    for r in results:
        line = f"{r['program']:<{w}} {r['exit']:>4} {r['seconds']:>9.1f}"
        if has_plain:
            line += f" {r.get('plain_exit', ''):>10} {r.get('plain_seconds', float('nan')):>7.1f}"
        line += f"  {_sev_text(r['by_severity'])}"
        if r.get("analyze_exit") not in (0, None) or r.get("report_error"):
            line += f"  [analyze exit {r.get('analyze_exit')}{': ' + r['report_error'] if r.get('report_error') else ''}]"
        print(line, file=file)
        for f in r["findings"]:
            msg = f["message"].replace("\n", " ")[:160]
            print(f"    {f['kind']} / {f['severity']} / {_fmt_bytes(f['bytes'])}: {msg}", file=file)


def print_markdown(results: list[dict], file=sys.stdout) -> None:
    print("| program | expected | measured leak | CPU findings |", file=file)
    print("| --- | --- | --- | --- |", file=file)
    for r in results:
        if r["exit"] != 0:
            cell = f"**exit {r['exit']}**"
        else:
            cell = ""
        if r["findings"]:
            items = [f"`{f['kind']}` ({f['severity']}, {_fmt_bytes(f['bytes'])})" for f in r["findings"]]
            cell = (cell + "; " if cell else "") + "; ".join(items)
        elif r.get("report_error"):
            cell = (cell + "; " if cell else "") + f"no report ({r['report_error']})"
        else:
            cell = (cell + "; " if cell else "") + "none"
        expect = f"`{r['expect']}`" if r.get("expect") else "none"
        truth = r.get("truth") or {}
        measured = _fmt_bytes(truth["bytes"]) if truth.get("bytes") else "-"
        print(f"| {r['program']} | {expect} | {measured} | {cell} |", file=file)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="programs to run (default: all in --dir)")
    ap.add_argument("--dir", default="clean", help="corpus directory: clean, leaky or a path (default clean)")
    ap.add_argument("--memlife", type=Path, default=default_memlife(),
                    help="memlife binary (default $MEMLIFE_BIN or build/bin/memlife)")
    ap.add_argument("--out", type=Path, default=None,
                    help="where traces, reports and logs go (default: a new temp dir, kept)")
    ap.add_argument("--json", type=Path, default=None, help="write all results as JSON here")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("--plain", action="store_true", help="also run each program without memlife, for timing")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per command")
    ap.add_argument("--list", action="store_true", help="list the programs and their launchers, run nothing")
    args = ap.parse_args(argv)

    progs = programs(args.dir)
    if args.list:
        for p in progs.values():
            print(f"{p.name:<34} {p.launcher:<8} {p.path}")
        return 0
    unknown = [n for n in args.names if n not in progs]
    if unknown:
        ap.error(f"unknown program(s) {unknown}; known: {sorted(progs)}")
    selected = [progs[n] for n in (args.names or progs)]
    memlife = args.memlife.resolve()
    if not memlife.is_file():
        ap.error(f"memlife binary not found: {memlife}")
    out = args.out or Path(tempfile.mkdtemp(prefix="memlife-corpus-"))

    results = []
    for p in selected:
        print(f"== {p.name} ({p.launcher})", file=sys.stderr, flush=True)
        r = run_one(p, memlife, out, timeout=args.timeout, plain=args.plain)
        print(f"   exit {r['exit']} in {r['seconds']:.1f}s, {len(r['findings'])} finding(s)",
              file=sys.stderr, flush=True)
        results.append(r)

    print(f"outputs in {Path(out).resolve()}")
    print_table(results)
    if args.markdown:
        print()
        print_markdown(results)
    if args.json:
        args.json.write_text(json.dumps({"memlife": str(memlife), "dir": args.dir, "out": str(Path(out).resolve()),
                                         "results": results}, indent=2))
    return 0 if all(r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
