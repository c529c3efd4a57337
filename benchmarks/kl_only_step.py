"""Where does an update step go when its only gradient is the KL towards the reference?
In a coding-loop run with `loss.ref_kl`, a batch in which every group's rewards are equal
(and no hint is distilled) still counts as having a signal (`etude.rl.update.has_signal`):
the KL term alone steps. Muon normalizes its step and mixes the new gradient with its
momentum buffer (an EMA at 0.95, Nesterov), so such a step is full-size whatever the
KL's gradient, and it may follow the momentum of earlier reward-driven updates more
than the pull towards the reference. This measures it on a real run: from the run's
checkpoint (weights and optimizer state), one update on the batch of one of its
iterations, taken twice — with the optimizer state as stored, and with Muon's momentum
buffers zeroed (a step along the fresh gradient alone) — and compares, over the matrices
Muon trains, each step's direction with the other's and with the way back to the
reference's weights (cosines of the flattened tensors, all matrices together), and the
batch's KL to the reference (k3, per sampled token) before and after each.

    .venv/bin/python benchmarks/kl_only_step.py --run runs/i16l/rl --iteration 4 \\
        --key s23_passes4_refkl0.1_iter4

Writes benchmarks/results/kl_only_step.json: {"<key>": {"run", "iteration",
"groups_with_spread", "kl_before", "stored_momentum": {"kl_after", "cos_to_reference",
"step_norm"}, "zeroed_momentum": {...}, "cos_stored_vs_zeroed", "seconds"}}.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import torch
from results_file import store

RESULT = Path(__file__).parent / "results" / "kl_only_step.json"


def batch_kl(model, reference, tok, trajectories, max_tokens: int) -> float:
    """Mean k3 KL(policy ‖ reference) per sampled token over `trajectories` (those over
    `max_tokens` left out, as the update leaves them out)."""
    from etude.rl.loss import reference_kl, token_logprobs
    from etude.rl.trajectory import HFChat, tokenize

    chat, total, count = HFChat(tok), 0.0, 0
    for traj in trajectories:
        tt = tokenize(traj.messages, chat)
        if len(tt.tokens) > max_tokens or not tt.sampled.any():
            continue
        with torch.no_grad():  # logits [1, T, V] -> log-probs [T]
            lp = token_logprobs(model(input_ids=tt.tokens[None]).logits, tt.tokens[None])[0]
            ref = token_logprobs(reference(input_ids=tt.tokens[None]).logits, tt.tokens[None])[0]
        n = int(tt.sampled.sum())
        total += reference_kl(lp, ref, tt.sampled.float()).item() * n
        count += n
    return total / max(count, 1)


def cosine(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """Cosine of two lists of tensors, each list flattened into one vector."""
    x, y = torch.cat([t.flatten() for t in a]), torch.cat([t.flatten() for t in b])
    return (x @ y / (x.norm() * y.norm()).clamp(min=1e-30)).item()


def main() -> None:
    from etude.recipes.coding.checkpoint import load_checkpoint, load_weights
    from etude.recipes.coding.config import parse_config
    from etude.recipes.coding.loop import build_optimizer, reward_spread, update_settings
    from etude.rl.advantages import group_advantages
    from etude.rl.policy import HFPolicy
    from etude.rl.trajectory import HFChat, Trajectory
    from etude.rl.update import rl_update
    from etude.serving.hf_model import load_smollm2

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a coding-loop run directory (out_dir)")
    parser.add_argument("--iteration", type=int, required=True, help="whose batch to step on")
    parser.add_argument("--key", required=True, help="store the measurement under this key")
    args = parser.parse_args()
    run = Path(args.run)
    checkpoint, graded = run / "checkpoint", run / f"iter_{args.iteration:04d}" / "graded.jsonl"
    for path in (checkpoint / "state.json", checkpoint / "run_config.json", graded):
        if not path.is_file():
            raise SystemExit(f"--run {run}: {path} is missing")
    stored = json.loads((checkpoint / "run_config.json").read_text())
    cfg = parse_config({"env": "coding", **stored})  # stored without the launcher's `env`
    if not cfg.loss.ref_kl or not cfg.model.init:
        raise SystemExit(f"--run {run} has no reference (loss.ref_kl and model.init)")
    start = time.perf_counter()
    torch.manual_seed(cfg.seed)

    records = [json.loads(x) for x in graded.read_text().splitlines() if x.strip()]
    trajectories = [Trajectory.from_dict(r) for r in records]
    groups = [r["group"] for r in records]  # the loop's groups: one task's episodes
    advantages = group_advantages(
        torch.tensor([r["reward"] for r in records]), torch.tensor(groups)
    )
    settings = replace(update_settings(cfg), passes=1)

    reference, tok = load_smollm2()
    load_weights(Path(cfg.model.init), reference)
    reference.eval()

    def loaded(zero_momentum: bool):
        """The run's model and optimizer as its checkpoint stores them, and the matrices
        Muon trains (those with a momentum buffer)."""
        model, _ = load_smollm2()
        optimizer = build_optimizer(model, cfg)
        load_checkpoint(checkpoint, model, optimizer)
        if zero_momentum:
            for state in optimizer.state.values():
                if "momentum_buffer" in state:
                    state["momentum_buffer"].zero_()
        matrices = [
            (n, p)
            for n, p in model.named_parameters()
            if "momentum_buffer" in optimizer.state.get(p, {})
        ]
        return model, optimizer, matrices

    model, _, matrices = loaded(False)
    ref_params = dict(reference.named_parameters())
    before = [p.detach().clone() for _, p in matrices]
    to_reference = [ref_params[n].detach() - w for (n, _), w in zip(matrices, before)]
    model.eval()
    kl_before = batch_kl(model, reference, tok, trajectories, cfg.loss.max_tokens)
    del model

    result = {
        "run": str(run),
        "iteration": args.iteration,
        "episodes": len(records),
        **reward_spread(records),
        "advantages_nonzero": int((advantages.abs() > 1e-9).sum()),
        "ref_kl_weight": cfg.loss.ref_kl,
        "lr": cfg.optim.lr,
        "muon_matrices": len(matrices),
        "kl_before": round(kl_before, 6),
    }
    steps = {}
    for label, zero in (("stored_momentum", False), ("zeroed_momentum", True)):
        model, optimizer, named = loaded(zero)
        model.train()
        metrics = rl_update(
            HFPolicy(model),
            optimizer,
            HFChat(tok),
            trajectories,
            groups,
            [[] for _ in trajectories],
            settings,
            reference=HFPolicy(reference),
        )
        model.eval()
        steps[label] = [p.detach() - w for (_, p), w in zip(named, before)]
        result[label] = {
            "kl_after": round(
                batch_kl(model, reference, tok, trajectories, cfg.loss.max_tokens), 6
            ),
            "cos_to_reference": round(cosine(steps[label], to_reference), 4),
            "step_norm": round(torch.cat([s.flatten() for s in steps[label]]).norm().item(), 5),
            "update_ref_kl_term": metrics.get("ref_kl"),
        }
        del model, optimizer
    result["cos_stored_vs_zeroed"] = round(
        cosine(steps["stored_momentum"], steps["zeroed_momentum"]), 4
    )
    result["distance_to_reference"] = round(
        torch.cat([d.flatten() for d in to_reference]).norm().item(), 5
    )
    result["seconds"] = round(time.perf_counter() - start, 1)
    store(RESULT, "kl_only_step", args.key, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
