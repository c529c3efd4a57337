"""Dual-mesh HSDP on CPU/gloo: memory and collective bytes per family against the layout's
analytic values, and training throughput of the tiny MoE at 1, 2, 4 and 8 ranks.

For each layout below, every rank builds the tiny MoE (`PRESETS["tiny"]`), applies the
layout (`etude.parallel.fsdp.parallelize`), and runs `STEPS` Muon steps (after `WARMUP`)
of the real training step (`etude.parallel.train`: stdlib corpus, batch 8 x 64 tokens,
gradient clipping over both meshes). Per step it records the slowest rank's time, and on
the last step each rank's parameter / gradient / optimizer-state bytes by family and the
collective bytes its forward and backward issued, by process group. Predictions come from
`etude.parallel.analytic` for the same config, layout and batch.

Side by side on 8 ranks, in one spawn, the layouts taking turns step by step:
- dual mesh, the headline: dense R_d=2 S_d=2 CP=2, experts EP=8 (a shared mesh needs 16);
- shared-mesh compatible: dense S_d=4 CP=2 (EP=8 divides S_d*CP), experts EP=8;
- no expert parallelism: dense as the headline, experts FSDP-sharded S_e=8.

Eight ranks share 2 CPU cores, so tokens/s measures gloo and Python overhead more than
compute; medians of STEPS steps are reported, and the figures are noisy.

Run: .venv/bin/python benchmarks/dual_mesh.py   (writes benchmarks/results/dual_mesh.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch
import torch.distributed as dist

from etude.models import MoETransformer, preset
from etude.parallel.analytic import state_bytes, step_collective_bytes
from etude.parallel.clip import clip_grad_norm_
from etude.parallel.comm import CollectiveBytes
from etude.parallel.data import global_batch, local_batch, stdlib_corpus
from etude.parallel.fsdp import parallelize
from etude.parallel.layout import Layout
from etude.parallel.mesh import build_meshes
from etude.parallel.plan import plan
from etude.parallel.train import TrainConfig, build_optimizer, local_state_bytes, training_loss
from etude.spawn import run_on_ranks

CONFIG = preset("tiny")
BATCH, SEQ = 8, 64
TRAIN = TrainConfig(batch_size=BATCH, seq_len=SEQ)
HEADLINE = dict(dense_replicate=2, dense_shard=2, cp=2, ep=8)
LAYOUTS: dict[int, dict[str, dict]] = {
    1: {"1 rank": {}},
    2: {"S_d=2 | EP=2": dict(dense_shard=2, ep=2)},
    4: {"S_d=2 CP=2 | EP=4": dict(dense_shard=2, cp=2, ep=4)},
    8: {
        "dual mesh: R_d=2 S_d=2 CP=2 | EP=8": HEADLINE,
        "shared-mesh compatible: S_d=4 CP=2 | EP=8": dict(dense_shard=4, cp=2, ep=8),
        "no EP: R_d=2 S_d=2 CP=2 | S_e=8": dict(
            dense_replicate=2, dense_shard=2, cp=2, expert_shard=8
        ),
    },
}


class _Job:
    """One layout's model, optimizer and meshes on this rank, stepped by `step()`."""

    def __init__(self, layout_kwargs: dict):
        self.layout = Layout(**layout_kwargs)
        torch.manual_seed(0)
        self.model = MoETransformer(CONFIG)
        self.meshes = build_meshes(self.layout) if dist.is_initialized() else None
        if self.meshes is not None:
            parallelize(self.model, self.meshes)
        self.opt = build_optimizer(self.model, TRAIN)
        self.times: list[float] = []
        self.losses: list[float] = []

    def step(self, step: int, timed: bool) -> None:
        meshes = self.meshes
        batch = global_batch(stdlib_corpus(), step, BATCH, SEQ, seed=0)
        data_rank, cp_rank = (meshes.data_rank(), meshes.cp_rank()) if meshes else (0, 0)
        inputs, targets, positions = local_batch(batch, self.layout, data_rank, cp_rank)
        if meshes is not None:
            dist.barrier()
        t0 = time.perf_counter()
        with CollectiveBytes(meshes.labels if meshes else {}) as comm:
            loss, _, _ = training_loss(self.model, inputs, targets, positions)
            loss.backward()
        clip_grad_norm_(self.model.parameters(), TRAIN.grad_clip)
        self.opt.step()
        self.state = local_state_bytes(self.model, self.opt)
        self.opt.zero_grad()
        elapsed = torch.tensor(time.perf_counter() - t0)
        if meshes is not None:
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        self.comm = {f"{label}:{kind}": n for (label, kind), n in comm.bytes.items()}
        if timed:
            self.times.append(elapsed.item())
            self.losses.append(loss.item())


def _rank_main(world: int, warmup: int, steps: int) -> dict:
    # Layouts of one world size take turns step by step, so that drift in the machine's
    # load (other jobs share the cores) hits them alike.
    jobs = {name: _Job(kw) for name, kw in LAYOUTS[world].items()}
    for step in range(warmup + steps):
        for job in jobs.values():
            job.step(step, timed=step >= warmup)
    return {
        name: {
            "step_s": job.times,
            "losses": job.losses,
            "state_bytes": job.state,
            "collective_bytes": job.comm,
        }
        for name, job in jobs.items()
    }


def _summarize(world: int, name: str, layout_kwargs: dict, per_rank: list[dict]) -> dict:
    layout = Layout(**layout_kwargs)
    step_s = statistics.median(per_rank[0]["step_s"])
    predicted_state = state_bytes(CONFIG, layout, "muon")
    predicted_comm = step_collective_bytes(CONFIG, layout, BATCH, SEQ)
    measured_comm: dict[str, dict] = {}
    for key in sorted({k for r in per_rank for k in r["collective_bytes"]}):
        values = [r["collective_bytes"].get(key, 0) for r in per_rank]
        label, kind = key.split(":")
        measured_comm[key] = {
            "rank0": values[0],
            "mean_over_ranks": sum(values) / len(values),
            "min": min(values),
            "max": max(values),
            "predicted": predicted_comm.get((label, kind), 0),
        }
    state = {}
    for family in ("dense", "expert"):
        measured = {
            k: max(r["state_bytes"][family][k] for r in per_rank)
            for k in ("params", "grads", "optimizer")
        }
        state[family] = {
            "measured_max_over_ranks": measured,
            "predicted": predicted_state[family],
            "fraction_predicted": (
                1 / (layout.dense_shard * layout.cp)
                if family == "dense"
                else 1 / (layout.expert_shard * layout.ep)
            ),
        }
    return {
        "world": world,
        "layout": layout.describe(),
        "step_s_median": step_s,
        "tokens_per_s_median": BATCH * SEQ / step_s,
        "step_s": per_rank[0]["step_s"],
        "losses": per_rank[0]["losses"],
        "state_bytes_per_rank": state,
        "collective_bytes_per_step": measured_comm,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--out", default="benchmarks/results/dual_mesh.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    for world, layouts in LAYOUTS.items():
        if world == 1:
            per_rank = [_rank_main(1, args.warmup, args.steps)]
        else:
            per_rank = run_on_ranks(
                _rank_main, world, world, args.warmup, args.steps, timeout_s=600
            )
        for name, kw in layouts.items():
            summary = _summarize(world, name, kw, [r[name] for r in per_rank])
            results.append({"name": name, **summary})
            print(f"{world} ranks  {name:45s} {summary['tokens_per_s_median']:8.0f} tok/s")
    by_name = {r["name"]: r for r in results}
    headline = by_name["dual mesh: R_d=2 S_d=2 CP=2 | EP=8"]
    comparisons = {
        name: {
            "tokens_per_s_ratio_vs_dual_mesh": r["tokens_per_s_median"]
            / headline["tokens_per_s_median"],
            "expert_state_bytes_ratio_vs_dual_mesh": sum(
                r["state_bytes_per_rank"]["expert"]["measured_max_over_ranks"].values()
            )
            / sum(headline["state_bytes_per_rank"]["expert"]["measured_max_over_ranks"].values()),
        }
        for name, r in by_name.items()
        if r["world"] == 8
    }
    scale = plan("kimi-k2", 512, 8, 8192, None)
    out = {
        "benchmark": "dual_mesh",
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
        },
        "model": "tiny",
        "batch": BATCH,
        "seq_len": SEQ,
        "warmup": args.warmup,
        "steps": args.steps,
        "results": results,
        "comparisons_8_ranks": comparisons,
        "kimi_k2_512_gpus_plan": scale,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
