"""Why the sharded Muon of `etude demo` drifts from its one-process run: per step, per variant.

The demo (`etude.demo.muon`) trains a byte-level MLP on 4 gloo ranks under FSDP2 with
`etude.optim.Muon` (fp32 Newton–Schulz) and compares the final parameters with the same
40 steps in one process. Here each variant runs that comparison step by step, on the
demo's batches (seed 0) and on three other batch seeds, and records after every step:

- the largest |parameter difference| over the Muon parameters and over the AdamW ones;
- the largest |gradient difference| (both runs' gradients on the same step's batches);
- how many hidden pre-activations change sign between the runs (on that step's batches,
  from the two runs' parameters before the step): under ReLU each one changes its sample's
  gradient by a finite amount.

Variants: the hidden activation (ReLU, as the demo had; SiLU, as it has now) times the
Newton–Schulz formulation of the Muon units (all are "gram" by FLOPs): the standard
iteration, and the Gram iteration restarted every 2 steps or once (before step 2). The
restart pattern is set through `newton_schulz.GRAM_PHASE`, the one constant that differs
between the two, whatever etude's default is.

Run: .venv/bin/python benchmarks/muon_drift.py   (4 gloo ranks per variant, about 30 s each
     on 2 cores; resumable; writes benchmarks/results/muon_drift.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import torch
import torch.distributed as dist
import torch.nn.functional as F

import etude.optim.newton_schulz  # noqa: F401  (the module, not the function of that name)
from etude.demo import muon as demo
from etude.process_groups import release_process_groups

NS_MODULE = sys.modules["etude.optim.newton_schulz"]
ACTIVATIONS = {"relu": torch.relu, "silu": F.silu}
# name -> (ns_method, GRAM_PHASE)
FORMULATIONS = {
    "standard": ("standard", None),
    "gram_restart_every_2": ("gram", 2),
    "gram_restart_once": ("gram", 3),
}
SEEDS = (0, 1, 2, 3)
JUMP = 1e-4  # the demo's bound on the largest parameter difference


def _batch(corpus: torch.Tensor, rank: int, step: int, seed: int):
    return demo._batch(corpus, rank + 100 * seed, step)  # seed 0: the demo's own batches


def _optimizer(model: demo.ByteMLP, ns_method: str) -> demo.Muon:
    named = dict(model.named_parameters())
    hidden = [("hidden.weight", named.pop("hidden.weight"))]
    return demo.Muon(
        [{"params": hidden, "heads": demo.HEADS}, {"params": list(named.items())}],
        lr=0.02,
        adjust_lr_fn="match_rms_adamw",
        ns_dtype=torch.float32,
        ns_method=ns_method,
    )


def _preactivations(model: demo.ByteMLP, batches) -> torch.Tensor:
    return torch.cat([model.hidden(model.embed_tokens(b[0]).flatten(1)) for b in batches])


def worker(variant: dict, out: Path) -> None:
    """One variant on this torchrun rank; rank 0 replays it in one process and writes `out`."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    ns_method, phase = FORMULATIONS[variant["formulation"]]
    activation, seed = ACTIVATIONS[variant["activation"]], variant["seed"]
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    patch = mock.patch.object(NS_MODULE, "GRAM_PHASE", phase) if phase else nullcontext()
    with patch:
        mesh = init_device_mesh("cpu", (world,))
        model = demo.ByteMLP(activation)
        for module in (model.hidden, model.proj, model.lm_head):
            fully_shard(module, mesh=mesh)
        fully_shard(model, mesh=mesh)
        opt = _optimizer(model, ns_method)
        corpus = demo._corpus()
        sharded = []  # per step: parameters before, gradients, parameters after (full)
        for step in range(demo.STEPS):
            opt.zero_grad()
            before = {n: p.full_tensor().detach().clone() for n, p in model.named_parameters()}
            demo._loss(model, _batch(corpus, rank, step, seed)).backward()
            grads = {n: p.grad.full_tensor() for n, p in model.named_parameters()}
            opt.step()
            after = {n: p.full_tensor().detach().clone() for n, p in model.named_parameters()}
            sharded.append((before, grads, after))
        if rank == 0:
            muon = {r.label for r in opt.routing if r.algorithm == "muon"}
            out.write_text(json.dumps(_replay(sharded, muon, activation, ns_method, seed, world)))
    dist.barrier()


def _replay(sharded, muon: set[str], activation, ns_method: str, seed: int, world: int) -> dict:
    ref, shadow = demo.ByteMLP(activation), demo.ByteMLP(activation)
    opt = _optimizer(ref, ns_method)
    corpus = demo._corpus()
    steps = []
    for step, (before, grads, after) in enumerate(sharded):
        batches = [_batch(corpus, r, step, seed) for r in range(world)]
        with torch.no_grad():
            shadow.load_state_dict(before)
            z_ref, z_sharded = _preactivations(ref, batches), _preactivations(shadow, batches)
        opt.zero_grad()
        (sum(demo._loss(ref, b) for b in batches) / world).backward()
        grad_diff = max((grads[n] - p.grad).abs().max().item() for n, p in ref.named_parameters())
        opt.step()
        diffs = {n: (after[n] - p.detach()).abs().max().item() for n, p in ref.named_parameters()}
        steps.append(
            {
                "step": step,
                "muon_param_diff": max(v for n, v in diffs.items() if n in muon),
                "adamw_param_diff": max(v for n, v in diffs.items() if n not in muon),
                "grad_diff": grad_diff,
                "sign_changes": int(((z_ref > 0) != (z_sharded > 0)).sum()),
            }
        )
    return {"muon_params": sorted(muon), "steps": steps}


def _summary(steps: list[dict]) -> dict:
    largest = [max(s["muon_param_diff"], s["adamw_param_diff"]) for s in steps]
    first_jump = next((s["step"] for s, d in zip(steps, largest) if d > JUMP), None)
    return {
        "final_muon_param_diff": steps[-1]["muon_param_diff"],
        "final_adamw_param_diff": steps[-1]["adamw_param_diff"],
        "within_demo_bound": largest[-1] < JUMP,
        "first_step_over_bound": first_jump,
        "sign_change_steps": [s["step"] for s in steps if s["sign_changes"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "muon_drift.json"))
    parser.add_argument(
        "--worker", nargs=2, metavar=("VARIANT_JSON", "OUT"), help=argparse.SUPPRESS
    )
    parser.add_argument("--summarize", action="store_true", help="print --out's table")
    args = parser.parse_args()
    if args.summarize:
        print(summarize(json.loads(Path(args.out).read_text())))
        return
    if args.worker:
        worker(json.loads(args.worker[0]), Path(args.worker[1]))
        release_process_groups()
        return
    out_path = Path(args.out)
    done = json.loads(out_path.read_text())["runs"] if out_path.exists() else []
    runs = {(r["activation"], r["formulation"], r["seed"]): r for r in done}
    part = out_path.with_suffix(".part.json")
    for activation in ACTIVATIONS:
        for seed in SEEDS:
            for formulation in FORMULATIONS:
                key = (activation, formulation, seed)
                if key in runs:
                    continue
                variant = {"activation": activation, "formulation": formulation, "seed": seed}
                cmd = [
                    sys.executable, "-m", "torch.distributed.run", "--standalone",
                    f"--nproc-per-node={demo.RANKS}", __file__, "--worker", json.dumps(variant),
                    str(part),
                ]  # fmt: skip
                env = {**os.environ, "OMP_NUM_THREADS": "1"}
                subprocess.run(cmd, check=True, env=env, timeout=600, capture_output=True)
                result = json.loads(part.read_text())
                runs[key] = {**variant, **_summary(result["steps"]), **result}
                print(key, {k: v for k, v in runs[key].items() if k != "steps"}, flush=True)
                report = {
                    "benchmark": "muon_drift",
                    "ranks": demo.RANKS,
                    "steps": demo.STEPS,
                    "demo_bound": JUMP,
                    "machine": {"platform": platform.platform(), "torch": torch.__version__},
                    "runs": list(runs.values()),
                }
                tmp = out_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(report, indent=1) + "\n")
                tmp.replace(out_path)
    part.unlink(missing_ok=True)
    print(summarize(json.loads(out_path.read_text())))


def summarize(report: dict) -> str:
    """A markdown table: per activation and formulation, each seed's final differences."""
    lines = [
        "| activation | formulation | seed | final max diff, Muon / AdamW params | within 1e-4 "
        "| first step over | steps with sign changes |",
        "|---|---|---:|---|---|---:|---|",
    ]
    for r in report["runs"]:
        first = "-" if r["first_step_over_bound"] is None else r["first_step_over_bound"]
        lines.append(
            f"| {r['activation']} | {r['formulation']} | {r['seed']} | "
            f"{r['final_muon_param_diff']:.1e} / {r['final_adamw_param_diff']:.1e} | "
            f"{'yes' if r['within_demo_bound'] else 'no'} | {first} | "
            f"{', '.join(map(str, r['sign_change_steps'])) or '-'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
