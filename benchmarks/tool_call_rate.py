"""How often SmolLM2-135M-Instruct opens a coding episode with a tool call, with the coding
environment's system prompt as it is and with a one-line example of a first reply appended
(few-shot), side by side in one run: N first turns each (temperature 0.8, 96 new tokens,
torch seed 0 per variant) on the task synthesized from the example repository.

    .venv/bin/python benchmarks/tool_call_rate.py TASK_DIR [N]
    # writes benchmarks/results/tool_call_rate.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import torch

from etude.envs import coding
from etude.serving.backends import HFBackend
from etude.serving.hf_model import load_smollm2

ROOT = Path(__file__).resolve().parents[1]
FEW_SHOT = (
    coding.SYSTEM_PROMPT
    + """
Example of a first reply:
<tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call>"""
)


def main() -> None:
    task, n = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 8
    model, tok = load_smollm2()
    backend = HFBackend(model, tok, max_new_tokens=96, temperature=0.8)
    settings = coding.EnvSettings(python_env=False)
    env = coding.CodingEnv.for_task(task, Path(tempfile.mkdtemp()) / "ep", settings)
    user = env.initial_messages()[1]
    known = {t["function"]["name"] for t in coding.TOOLS}
    out = {}
    for name, system in (("current", coding.SYSTEM_PROMPT), ("few-shot", FEW_SHOT)):
        torch.manual_seed(0)
        calls = valid = 0
        samples = []
        for _ in range(n):
            message, _ = backend.complete([{"role": "system", "content": system}, user], [])
            tool_calls = message.get("tool_calls") or []
            calls += bool(tool_calls)
            valid += any(c["function"]["name"] in known for c in tool_calls)
            shown = json.dumps([c["function"] for c in tool_calls])[:120]
            samples.append(f"{(message.get('content') or '')[:80]} | {shown}")
        out[name] = {
            "episodes": n,
            "first_turn_tool_call": calls,
            "known_tool": valid,
            "samples": samples,
        }
        print(name, calls, valid, flush=True)
    path = ROOT / "benchmarks" / "results" / "tool_call_rate.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
