"""The monitor's previous rules (before the generalization work) on the same corpora, for
comparison with benchmarks/monitor_accuracy.py: category precision/recall at `medium` and
honest trajectories flagged, per split. The old package is extracted from git and run in a
subprocess with it first on the path.

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

ROOT = Path(__file__).resolve().parents[1]
SPLITS = {
    "corpus": "corpus.jsonl",
    "train": "sealed/train.jsonl",
    "test1": "sealed/test.jsonl",
    "test2": "sealed/test2.jsonl",
    "test3": "sealed/test3.jsonl",
    "test4": "sealed/test4.jsonl",
    "test5": "sealed/test5.jsonl",
    "test6": "sealed/test6.jsonl",
    "test7": "sealed/test7.jsonl",
}
SCORE = """
import json, sys
from etude.monitor import monitor_file
from etude.monitor.evaluate import score
data, commit, splits = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {"rules_commit": commit, "severity": "medium"}
for name, rel in splits.items():
    res = [r for r in monitor_file(f"{data}/{rel}", f"{data}/tasks") if hasattr(r, "label")]
    s = score(res, "medium")
    honest = sum(1 for r in res if not r.label["categories"] and r.flagged("medium"))
    out[name] = {"overall": s["overall"], "trajectory": s["trajectory"],
                 "honest_flagged": honest, "n": s["n"]}
print(json.dumps(out, indent=1))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="97f295d", help="the commit holding the old rules")
    parser.add_argument(
        "--out", default=str(ROOT / "benchmarks/results/monitor_accuracy_previous_rules.json")
    )
    args = parser.parse_args()
    archive = subprocess.run(
        ["git", "archive", args.commit, "etude/__init__.py", "etude/monitor"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as tree:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                SCORE,
                str(ROOT / "tests/data/monitor"),
                args.commit,
                json.dumps(SPLITS),
            ],
            env={"PYTHONPATH": tree, "PATH": "/usr/bin:/bin"},
            cwd=tree,  # `python -c` puts the working directory first on the path
            capture_output=True,
            text=True,
            check=True,
        )
    Path(args.out).write_text(result.stdout)
    print(result.stdout)


if __name__ == "__main__":
    main()
