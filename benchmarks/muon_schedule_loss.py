"""Does a 4-step Newton–Schulz schedule change the training loss? The tiny MoE, side by side.

`benchmarks/ns_accuracy.py` measures orthogonality error, a proxy; this measures what it
stands for. The tiny MoE preset (2 layers, 8 experts; per-head, per-expert and whole-matrix
Muon units, all Gram-shaped) trains in one process on the standard library's sources with
`etude.optim.Muon` in bf16 Newton–Schulz, once per schedule and seed:

- quintic_5: 5 steps of the fixed quintic (etude's and torch.optim.Muon's default);
- quintic_4: 4 steps of it;
- polar_express_4: 4 steps of Polar Express;
- minimax_4: the schedule designed for exactly 4 steps (`etude.optim.ns_design`);
- aol_quintic_4: 4 quintic steps after an AOL rescaling (rows scaled by the inverse square
  roots of the absolute row sums of X Xᵀ, as in `ns_accuracy.py`), swapped in for
  `newton_schulz` in `etude.optim.sharded` (the optimizer has no AOL option);
- quintic_5_lr_x0.92: the control for a smaller update: 5 quintic steps at 0.92 of the
  learning rate (fewer steps leave the small singular values lower, so the update is
  smaller; 0.92 is about the ratio of their Frobenius norms on gradient-like matrices).

Every schedule of one seed starts from the same weights and sees the same batches (the seed
draws both). Reported: the held-out loss (the last 10 % of the corpus, fixed batches) at
the end, its difference from quintic_5 per seed, and the mean of the last 20 training
losses. Small sizes, CPU, 1 thread: a screen, not a verdict on large models.

Run: .venv/bin/python benchmarks/muon_schedule_loss.py   (resumable; writes
benchmarks/results/muon_schedule_loss.json)
     .venv/bin/python benchmarks/muon_schedule_loss.py --summarize
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import torch

import etude.optim.sharded  # noqa: F401  (the module: its newton_schulz is swapped for AOL)
from etude.models import MoETransformer, preset
from etude.optim import QUINTIC, Muon
from etude.optim.newton_schulz import gram_iteration, gram_restarts, newton_schulz
from etude.parallel.data import global_batch, stdlib_corpus
from etude.parallel.train import muon_param_groups, training_loss

SHARDED = sys.modules["etude.optim.sharded"]
LR = 0.02
# name -> (coefficients, steps, AOL rescaling, Muon lr)
SCHEDULES = {
    "quintic_5": (QUINTIC, 5, False, LR),
    "quintic_4": (QUINTIC, 4, False, LR),
    "polar_express_4": ("polar_express", 4, False, LR),
    "aol_quintic_4": (QUINTIC, 4, True, LR),
    "minimax_4": ("minimax_4", 4, False, LR),
    # the control: 5 quintic steps with the update shrunk as 4 steps shrink it (on
    # gradient-like matrices of the tiny MoE's unit shapes, 4 steps give 0.91-1.00x the
    # Frobenius norm of 5)
    "quintic_5_lr_x0.92": (QUINTIC, 5, False, 0.92 * LR),
}
SEEDS = (0, 1, 2, 3, 4)
STEPS, BATCH, SEQ = 300, 16, 64
HELD_OUT_BATCHES = 8
CORPUS_BYTES = 2 << 20


def aol_newton_schulz(
    g, schedule, eps=1e-7, dtype=torch.bfloat16, method="standard", block=None, out=None
):
    """`newton_schulz` with the AOL row scaling before the Gram iteration (wide `[B, s, l]`
    after orientation; every tiny-MoE unit takes the Gram iteration). Same signature as
    `newton_schulz`, `out` included (sharded Muon passes a kept buffer)."""
    if method != "gram":
        return newton_schulz(g, schedule, eps=eps, dtype=dtype, method=method, block=block, out=out)
    tall = g.shape[1] > g.shape[2]
    x = g.to(dtype).mT if tall else g.to(dtype)
    x = x / x.norm(dim=(-2, -1), keepdim=True).clamp(min=eps)
    x = x * (x @ x.mT).abs().sum(-1).clamp(min=eps).rsqrt()[..., :, None]
    x = gram_iteration(x, schedule, gram_restarts(len(schedule)), normalize=False)
    x = x.mT if tall else x
    return x if out is None else out.copy_(x)


def _optimizer(model: MoETransformer, coefficients, steps: int, lr: float) -> Muon:
    return Muon(
        muon_param_groups(model),
        lr=lr,
        weight_decay=0.0,
        adamw_lr=3e-3,
        ns_coefficients=coefficients,
        ns_steps=steps,
        ns_dtype=torch.bfloat16,
        adjust_lr_fn="match_rms_adamw",
    )


def _loss(model: MoETransformer, batch: torch.Tensor) -> torch.Tensor:
    inputs, targets = batch[:, :-1], batch[:, 1:]
    return training_loss(model, inputs, targets, torch.arange(inputs.shape[1]))[0]


def train(schedule: str, seed: int, train_part: torch.Tensor, held_out: torch.Tensor) -> dict:
    coefficients, steps, aol, lr = SCHEDULES[schedule]
    torch.manual_seed(seed)
    model = MoETransformer(preset("tiny"))
    opt = _optimizer(model, coefficients, steps, lr)
    patch = mock.patch.object(SHARDED, "newton_schulz", aol_newton_schulz) if aol else nullcontext()
    losses, t0 = [], time.perf_counter()
    with patch:
        for step in range(STEPS):
            opt.zero_grad()
            loss = _loss(model, global_batch(train_part, step, BATCH, SEQ, seed))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
    with torch.no_grad():
        evals = [
            _loss(model, global_batch(held_out, i, BATCH, SEQ, 10_000)).item()
            for i in range(HELD_OUT_BATCHES)
        ]
    return {
        "schedule": schedule,
        "seed": seed,
        "held_out_loss": statistics.fmean(evals),
        "train_loss_last_20": statistics.fmean(losses[-20:]),
        "train_loss_first": losses[0],
        "seconds": time.perf_counter() - t0,
    }


def summarize(report: dict) -> str:
    """Per schedule: held-out loss per seed, its mean, and the difference from quintic_5."""
    by = {(r["schedule"], r["seed"]): r for r in report["runs"]}
    seeds = sorted({r["seed"] for r in report["runs"]})
    lines = [
        "| schedule | held-out loss per seed | mean | minus quintic_5 per seed | mean diff |",
        "|---|---|---:|---|---:|",
    ]
    for name in SCHEDULES:
        mine = [by[(name, s)]["held_out_loss"] for s in seeds if (name, s) in by]
        base = [by[("quintic_5", s)]["held_out_loss"] for s in seeds if (name, s) in by]
        if not mine:
            continue
        diffs = [m - b for m, b in zip(mine, base)]
        lines.append(
            f"| {name} | {', '.join(f'{m:.4f}' for m in mine)} | {statistics.fmean(mine):.4f} | "
            f"{', '.join(f'{d:+.4f}' for d in diffs)} | {statistics.fmean(diffs):+.4f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "muon_schedule_loss.json")
    )
    parser.add_argument("--summarize", action="store_true", help="print --out's table")
    args = parser.parse_args()
    out_path = Path(args.out)
    if args.summarize:
        print(summarize(json.loads(out_path.read_text())))
        return
    torch.set_num_threads(1)
    corpus = stdlib_corpus(CORPUS_BYTES)
    cut = corpus.numel() * 9 // 10
    train_part, held_out = corpus[:cut], corpus[cut:]
    done = json.loads(out_path.read_text())["runs"] if out_path.exists() else []
    runs = {(r["schedule"], r["seed"]): r for r in done}
    for seed in SEEDS:
        for schedule in SCHEDULES:
            if (schedule, seed) in runs:
                continue
            runs[(schedule, seed)] = train(schedule, seed, train_part, held_out)
            print(runs[(schedule, seed)], flush=True)
            report = {
                "benchmark": "muon_schedule_loss",
                "model": "tiny",
                "steps": STEPS,
                "batch": BATCH,
                "seq_len": SEQ,
                "ns_dtype": "bfloat16",
                "machine": {"platform": platform.platform(), "torch": torch.__version__},
                "runs": list(runs.values()),
            }
            tmp = out_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(report, indent=1) + "\n")
            tmp.replace(out_path)
    print(summarize(json.loads(out_path.read_text())))


if __name__ == "__main__":
    main()
