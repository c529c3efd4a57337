"""Regenerate demonstrations.jsonl: the scripted solver's demonstrations of the example
repository's tasks (all but the module task, whose prompt the SFT test holds out), cut
after their first accepted tool call (system, user, the first turns) so that the SFT test
trains on short sequences.

    PYTHONPATH=. .venv/bin/python tests/data/coding/make_demonstrations.py
"""

import json
import tempfile
from pathlib import Path

from etude.recipes.coding.demonstrations import demonstrate, first_turns
from etude.synth import EXAMPLE_REPO
from etude.synth.pipeline import synthesize

OUT = Path(__file__).with_name("demonstrations.jsonl")
HELD_OUT = "example_repo__textkit.stats--module"


def main() -> None:
    root = Path(tempfile.mkdtemp())
    synthesize([EXAMPLE_REPO], root, workers=2, max_candidates=4)
    lines = []
    for task_dir in sorted((root / "tasks").iterdir()):
        if task_dir.name == HELD_OUT:
            continue
        for seed in range(2):
            record = demonstrate(task_dir, root / "episodes" / f"{task_dir.name}-{seed}", seed)
            assert record["reward"] == 1.0 and not record["findings"], record["findings"]
            lines.append(json.dumps(first_turns(record)))
    OUT.write_text("\n".join(lines) + "\n")
    held = json.loads((root / "tasks" / HELD_OUT / "task.json").read_text())
    (OUT.with_name("heldout_prompt.txt")).write_text(held["problem_statement"])


if __name__ == "__main__":
    main()
