"""The sharded-Muon part of `etude demo`: a byte-level model trained under FSDP2 on 4 ranks.

`run(out_dir)` launches this module with torchrun. Every rank trains the same model,
sharded with `fully_shard`, on its own batches of the `textwrap` module's source bytes,
with `etude.optim.Muon` (per-head Newton–Schulz on the hidden layer). Rank 0 then repeats
the run in one process on the same batches and reports the largest parameter difference:
sharded Muon is the same optimizer, not an approximation of it.

    python -m torch.distributed.run --standalone --nproc-per-node 4 -m etude.demo.muon OUT
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F

from etude.demo.section import DemoSection
from etude.optim import Muon
from etude.process_groups import release_process_groups

CONTEXT, WIDTH, HIDDEN, HEADS = 8, 32, 128, 4
STEPS, BATCH, RANKS = 40, 64, 4


class ByteMLP(torch.nn.Module):
    """Predicts the next byte from the previous CONTEXT bytes.

    The hidden activation is smooth (SiLU) so that the comparison with one process measures
    the optimizer: under ReLU, a pre-activation within rounding of 0 on one run and not the
    other changes that sample's gradient by a finite amount, whatever the optimizer
    (`benchmarks/muon_drift.py` measures both)."""

    def __init__(self, activation: Callable[[torch.Tensor], torch.Tensor] = F.silu) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.activation = activation
        self.embed_tokens = torch.nn.Embedding(256, WIDTH)
        self.hidden = torch.nn.Linear(CONTEXT * WIDTH, HIDDEN)
        self.proj = torch.nn.Linear(HIDDEN, WIDTH)
        self.lm_head = torch.nn.Linear(WIDTH, 256, bias=False)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(context).flatten(1)
        return self.lm_head(self.proj(self.activation(self.hidden(h))))


def _corpus() -> torch.Tensor:
    return torch.tensor(list(Path(textwrap.__file__).read_bytes()), dtype=torch.long)


def _batch(corpus: torch.Tensor, rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(rank * 1000 + step)
    starts = torch.randint(0, len(corpus) - CONTEXT - 1, (BATCH,), generator=g)
    windows = torch.stack([corpus[s : s + CONTEXT + 1] for s in starts.tolist()])
    return windows[:, :-1], windows[:, -1]


def _optimizer(model: ByteMLP) -> Muon:
    named = dict(model.named_parameters())
    hidden = [("hidden.weight", named.pop("hidden.weight"))]
    return Muon(
        [{"params": hidden, "heads": HEADS}, {"params": list(named.items())}],
        lr=0.02,
        adjust_lr_fn="match_rms_adamw",
        ns_dtype=torch.float32,
    )


def _loss(model: ByteMLP, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(model(batch[0]), batch[1])


def _worker(out_dir: Path) -> None:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    model = ByteMLP()
    for module in (model.hidden, model.proj, model.lm_head):
        fully_shard(module, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = _optimizer(model)
    corpus = _corpus()
    log = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = _loss(model, _batch(corpus, rank, step))
        loss.backward()
        opt.step()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        s = opt.last_step_stats
        log.append(
            {
                "step": step,
                "loss": mean_loss.item() / world,
                "ns_flops": s.ns_flops,
                "bytes_sent": s.bytes_sent,
                "collectives": s.collectives,
                "imbalance": s.imbalance,
                "step_time_s": opt.last_step_time_s,
            }
        )
        if rank == 0 and step % 10 == 0:
            print(f"step {step:3d}  loss {log[-1]['loss']:.3f}", flush=True)
    sharded = {n: p.full_tensor().detach() for n, p in model.named_parameters()}
    flops = torch.tensor([s["ns_flops"] for s in log], dtype=torch.float64)
    all_flops = [torch.zeros_like(flops) for _ in range(world)]
    dist.all_gather(all_flops, flops)
    if rank == 0:
        reference, ref_flops = _single_process(corpus, world)
        diff = max((sharded[n] - reference[n]).abs().max().item() for n in reference)
        summary = {
            "ranks": world,
            "steps": STEPS,
            "log": log,
            "max_abs_param_diff_vs_one_process": diff,
            "ns_flop_redundancy": float(sum(f.sum() for f in all_flops) / sum(ref_flops)),
        }
        (out_dir / "muon_demo.json").write_text(json.dumps(summary, indent=2))


def _single_process(corpus: torch.Tensor, world: int) -> tuple[dict, list[int]]:
    model = ByteMLP()
    opt = _optimizer(model)
    flops = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = sum(_loss(model, _batch(corpus, r, step)) for r in range(world)) / world
        loss.backward()
        opt.step()
        flops.append(opt.last_step_stats.ns_flops)
    return {n: p.detach() for n, p in model.named_parameters()}, flops


def run(out_dir: Path) -> DemoSection:
    """Launch the 4-rank run with torchrun and summarize it for the demo report."""
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--standalone",
        f"--nproc-per-node={RANKS}", "-m", "etude.demo.muon", str(out_dir),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(cmd, check=True, env=env, timeout=600)
    result = json.loads((out_dir / "muon_demo.json").read_text())
    log = result["log"]
    return DemoSection(
        title="Sharded Muon under FSDP2",
        summary=(
            f"{RANKS} gloo ranks trained a byte-level model with fully_shard and etude.optim.Muon "
            f"for {STEPS} steps; the same run in one process ends with the same parameters, "
            "up to fp32 rounding (the largest difference is shown below)."
        ),
        figures={
            "loss first -> last": f"{log[0]['loss']:.3f} -> {log[-1]['loss']:.3f}",
            "max |param diff| vs one process": f"{result['max_abs_param_diff_vs_one_process']:.2e}",
            "NS FLOP redundancy (1.00 = each unit once)": f"{result['ns_flop_redundancy']:.2f}",
            "bytes sent per rank per step (rank 0)": log[-1]["bytes_sent"],
            "collectives per step (rank 0)": log[-1]["collectives"],
            "owner imbalance (max/mean NS FLOPs)": f"{log[-1]['imbalance']:.2f}",
        },
        files=["muon_demo.json"],
    )


if __name__ == "__main__":
    _worker(Path(sys.argv[1]))
    release_process_groups()  # after the model and optimizer are gone (process_groups.py)
