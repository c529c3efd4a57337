"""`etude plan layout`: dual-mesh layouts for a model preset at scale, with what each one
costs per rank (parameter, gradient and optimizer-state bytes per family, collective bytes
per step per family) and the fewest GPUs it needs compared with a single shared mesh.

Candidates: the dense family keeps FSDP x CP inside a node (S_d*CP = GPUs per node) and
replicates across nodes; CP takes each power of two up to the node size; the expert family
takes each power-of-two EP (>= 8) dividing both the GPU count and the number of experts,
with S_e = 1 and the rest replicated. Figures come from `analytic.py` (bf16 compute and
communication, fp32 master weights, reductions and Muon/AdamW state).
"""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from etude.models.config import preset
from etude.parallel.analytic import (
    by_family,
    shared_mesh_min_gpus,
    state_bytes,
    step_collective_bytes,
)
from etude.parallel.layout import Layout, LayoutError


def candidate_layouts(n_experts: int, gpus: int, gpus_per_node: int) -> list[Layout]:
    """The layouts `etude plan layout` compares (module docstring)."""
    if gpus % gpus_per_node:
        raise LayoutError(f"{gpus} GPUs is not a whole number of {gpus_per_node}-GPU nodes")
    out = []
    cp = 1
    while cp <= gpus_per_node:
        ep = 8
        while ep <= gpus:
            if gpus % ep == 0 and n_experts % ep == 0:
                out.append(
                    Layout(
                        dense_replicate=gpus // gpus_per_node,
                        dense_shard=gpus_per_node // cp,
                        cp=cp,
                        expert_replicate=gpus // ep,
                        ep=ep,
                        ranks_per_node=gpus_per_node,
                    )
                )
            ep *= 2
        cp *= 2
    return out


def plan(model: str, gpus: int, gpus_per_node: int, seq_len: int, batch_size: int | None) -> dict:
    """Per-layout analytic figures for `model` on `gpus` GPUs; JSON-ready."""
    config = preset(model)
    rows = []
    for layout in candidate_layouts(config.n_experts, gpus, gpus_per_node):
        batch = batch_size or layout.data_parallel
        layout.check_fits(gpus, config, seq_len, batch)
        state = state_bytes(config, layout, "muon")
        comm = step_collective_bytes(config, layout, batch, seq_len, compute_bytes=2)
        rows.append(
            {
                "layout": layout.describe(),
                "dense_shard": layout.dense_shard,
                "cp": layout.cp,
                "ep": layout.ep,
                "dense_fraction": 1 / (layout.dense_shard * layout.cp),
                "expert_fraction": 1 / (layout.expert_shard * layout.ep),
                "state_bytes": state,
                "collective_bytes": by_family(comm),
                "min_gpus_dual_mesh": layout.world_size,
                "min_gpus_shared_mesh": shared_mesh_min_gpus(layout),
            }
        )
    return {"model": model, "gpus": gpus, "seq_len": seq_len, "layouts": rows}


def main(args: argparse.Namespace) -> int:
    """Print the plan as a table (or JSON)."""
    report = plan(args.model, args.gpus, args.gpus_per_node, args.seq_len, args.batch_size)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    table = Table(
        title=f"{report['model']} on {report['gpus']} GPUs, sequences of {report['seq_len']}: "
        "per-rank GB (params+grads+optimizer), collective GB per step"
    )
    for col in (
        "S_d",
        "CP",
        "EP",
        "dense GB",
        "expert GB",
        "dense comm",
        "expert comm",
        "GPUs dual",
        "GPUs shared",
    ):
        table.add_column(col, justify="right")
    for r in report["layouts"]:
        state, comm = r["state_bytes"], r["collective_bytes"]
        table.add_row(
            str(r["dense_shard"]),
            str(r["cp"]),
            str(r["ep"]),
            f"{sum(state['dense'].values()) / 1e9:.1f}",
            f"{sum(state['expert'].values()) / 1e9:.1f}",
            f"{comm.get('dense', 0) / 1e9:.2f}",
            f"{comm.get('expert', 0) / 1e9:.2f}",
            str(r["min_gpus_dual_mesh"]),
            str(r["min_gpus_shared_mesh"]),
        )
    Console().print(table)
    return 0
