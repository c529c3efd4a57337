"""Which turns of the demonstrations has a warm start learnt? Teacher-forced, per kind of
turn: each warm start's mean cross-entropy and greedy (top-1) accuracy on the target tokens
of the train demonstrations' assistant turns, grouped by what the turn does (the tool it
calls, or `answer` for the final summary). A turn the environment rejected is context, as
in SFT, and not counted. It tells a warm start that never writes in its rollouts because
it has not learnt the write turns (a low accuracy there) from one that has learnt them and
does not reach them. With `--sample-writes` each demonstrated write or edit turn is also
sampled from the warm start after the demonstration's earlier turns (`sampled_writes`).

Reads `<run>/demonstrations.jsonl` and each `<run>/<warm>/checkpoint` of a
`benchmarks/coding_agent_learning.py` run directory; writes the figures under
`turn_losses.<warm>` of benchmarks/results/coding_agent_learning.json (other keys kept).

    nice -n 10 .venv/bin/python benchmarks/coding_agent_learning_turns.py \\
        --run runs/coding-agent-learning --warm sft sft-whole
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

RESULT = Path(__file__).parent / "results" / "coding_agent_learning.json"


def turn_kind(message: dict) -> str:
    """What an assistant turn does: its first tool call's name, or `answer`."""
    calls = message.get("tool_calls") or []
    return calls[0]["function"]["name"] if calls else "answer"


def turn_figures(model, tok, demonstrations: Path) -> dict:
    """Per kind of turn (`turn_kind`) over the trainable targets of every trajectory in
    `demonstrations`: {"targets", "loss" (mean cross-entropy, nats), "top1" (share whose
    greedy token is the target)}. One forward per trajectory, cut after its last target,
    the vocabulary projection at the target positions only."""
    import torch

    from etude.envs.coding import REJECTED_PREFIXES
    from etude.rl.sft import sft_example
    from etude.rl.trajectory import HFChat, read_jsonl, tokenize

    chat = HFChat(tok)
    sums: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])
    model.eval()
    for traj in read_jsonl(demonstrations):
        tokens, mask = sft_example(traj, chat, REJECTED_PREFIXES)
        turn = tokenize(traj.messages, chat).turn
        last = int(mask.nonzero().max())
        tokens, mask, turn = tokens[: last + 1], mask[: last + 1], turn[: last + 1]
        keep = mask[1:]  # logits at position t predict token t + 1; kept rows come as [K, V]
        with torch.no_grad():
            logits = model(input_ids=tokens[None, :-1], logits_to_keep=keep[None]).logits
        targets = tokens[1:][keep]
        losses = torch.nn.functional.cross_entropy(logits.float(), targets, reduction="none")
        hits = logits.argmax(-1) == targets
        for i, loss, hit in zip(turn[1:][keep].tolist(), losses.tolist(), hits.tolist()):
            entry = sums[turn_kind(traj.messages[i])]
            entry[0] += 1
            entry[1] += loss
            entry[2] += hit
    return {
        kind: {"targets": n, "loss": round(total / n, 4), "top1": round(hit / n, 4)}
        for kind, (n, total, hit) in sorted(sums.items())
    }


WRITE_TOOLS = ("write_file", "edit_file")


def sampled_writes(model, tok, demonstrations: Path, turn_tokens: int, seed: int) -> dict:
    """Each demonstrated write or edit turn sampled once from the warm start after the
    demonstration's own earlier turns (temperature 0.8, at most `turn_tokens`, the RL
    runs' turn): how many are a write tool's call whose JSON arguments hold the tool's
    required keys, how many repeat the demonstrated call exactly, and per turn the
    demonstrated call's length in tokens and what came back."""
    import torch

    from etude.envs.coding import TOOLS
    from etude.rl.trajectory import read_jsonl
    from etude.serving.backends import HFBackend

    required = {t["function"]["name"]: t["function"]["parameters"]["required"] for t in TOOLS}
    backend = HFBackend(model, tok, max_new_tokens=turn_tokens, temperature=0.8)
    torch.manual_seed(seed)
    turns = []
    for traj in read_jsonl(demonstrations):
        for i, m in enumerate(traj.messages):
            if m["role"] != "assistant" or turn_kind(m) not in WRITE_TOOLS:
                continue
            want = m["tool_calls"][0]["function"]
            message, generated = backend.complete(traj.messages[:i], TOOLS)
            calls = message.get("tool_calls") or []
            got = calls[0]["function"] if calls else None
            try:
                args = json.loads(got["arguments"]) if got else None
            except json.JSONDecodeError:
                args = None
            valid = (
                got is not None
                and got["name"] in WRITE_TOOLS
                and isinstance(args, dict)
                and set(required[got["name"]]) <= set(args)
            )
            turns.append(
                {
                    "task": traj.task_id,
                    "tool": want["name"],
                    "demonstrated_tokens": len(tok(want["arguments"])["input_ids"]),
                    "generated_tokens": generated,
                    "called": got["name"] if got else None,
                    "valid_write": valid,
                    "exact": valid and args == json.loads(want["arguments"]),
                }
            )
    return {
        "turns": turns,
        "valid_write": sum(t["valid_write"] for t in turns),
        "exact": sum(t["exact"] for t in turns),
        "of": len(turns),
        "turn_tokens": turn_tokens,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a coding_agent_learning.py --out")
    parser.add_argument("--warm", nargs="*", default=[], help="warm-start dirs in --run")
    parser.add_argument("--pretrained", action="store_true", help="also SmolLM2 untrained")
    parser.add_argument("--sample-writes", action="store_true", help="and sample write turns")
    parser.add_argument("--turn-tokens", type=int, default=384, help="a sampled turn's cap")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from etude.recipes.sft import load_policy

    run = Path(args.run)
    demonstrations = run / "demonstrations.jsonl"
    warms = [("pretrained", "")] if args.pretrained else []
    warms += [(w, str(run / w / "checkpoint")) for w in args.warm]
    for name, init in warms:
        model, tok = load_policy(init)
        record = {"run": str(run), "turns": turn_figures(model, tok, demonstrations)}
        if args.sample_writes:
            record["sampled_writes"] = sampled_writes(
                model, tok, demonstrations, args.turn_tokens, args.seed
            )
        result = json.loads(RESULT.read_text()) if RESULT.is_file() else {}
        result.setdefault("turn_losses", {})[name] = record
        RESULT.write_text(json.dumps(result, indent=2) + "\n")
        print(name, json.dumps(record))


if __name__ == "__main__":
    main()
