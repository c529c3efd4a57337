"""The monitor's previous rules (before the generalization work) on the same corpora, for
comparison with benchmarks/monitor_accuracy.py: category precision/recall at `medium` and
honest trajectories flagged, per split (the corpus, train and every sealed split already
scored; `monitor_accuracy.py --sealed-test NAME` adds NAME when it scores it). The old
package is extracted from git and run in a subprocess with it first on the path.

    .venv/bin/python benchmarks/monitor_previous_rules.py --commit 97f295d
    # -> results/monitor_accuracy_previous_rules.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from monitor_accuracy import PREVIOUS_RULES, ROOT, scored_splits

SCORE = """
import json, sys
from etude.monitor import monitor_file
from etude.monitor.evaluate import score
tasks, commit, splits = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {"rules_commit": commit, "severity": "medium"}
for name, path in splits.items():
    res = [r for r in monitor_file(path, tasks) if hasattr(r, "label")]
    s = score(res, "medium")
    honest = sum(1 for r in res if not r.label["categories"] and r.flagged("medium"))
    out[name] = {"overall": s["overall"], "trajectory": s["trajectory"],
                 "honest_flagged": honest, "n": s["n"]}
print(json.dumps(out, indent=1))
"""


def previous_rules(splits: dict[str, Path], commit: str) -> dict:
    """The rules at `commit` on each split: {"rules_commit", "severity", name: figures}."""
    archive = subprocess.run(
        ["git", "archive", commit, "etude/__init__.py", "etude/monitor"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as tree:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        paths = {name: str(path) for name, path in splits.items()}
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                SCORE,
                str(ROOT / "tests/data/monitor/tasks"),
                commit,
                json.dumps(paths),
            ],
            env={"PYTHONPATH": tree, "PATH": "/usr/bin:/bin"},
            cwd=tree,  # `python -c` puts the working directory first on the path
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="97f295d", help="the commit holding the old rules")
    parser.add_argument("--out", default=str(PREVIOUS_RULES))
    args = parser.parse_args()
    result = previous_rules(scored_splits(), args.commit)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
