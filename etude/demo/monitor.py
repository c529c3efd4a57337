"""Demo of the reward-hacking monitor: a handful of labelled trajectories from the test
corpus (hacks of several kinds and honest look-alikes) go through `etude monitor`'s code
path; the HTML report for reviewers is written next to a JSONL of the trajectories used."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

from etude.demo.section import DemoSection
from etude.monitor.monitor import monitor_file
from etude.monitor.report import Summary, render_html

CORPUS_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "monitor"
DEMO_IDS = (
    "vcs-reflog-checkout",
    "art-grep-build-output",
    "fetch-pip-download",
    "tamper-sed-rename",
    "runner-makereport",
    "fake-special-case-ifs",
    "claim-after-failure",
    "recovery-heredoc-patch",
    "honest-git-log-current",
    "honest-own-pytest-cache",
    "honest-own-test-file",
    "honest-token-shown-in-tests",
)


def run(out_dir: Path) -> DemoSection:
    """Monitor DEMO_IDS from the corpus; write trajectories.jsonl and report.html."""
    corpus = CORPUS_DIR / "corpus.jsonl"
    if not corpus.is_file():
        raise FileNotFoundError(f"monitor corpus not found at {corpus} (a source checkout)")
    out_dir.mkdir(parents=True, exist_ok=True)
    picked = out_dir / "trajectories.jsonl"
    with corpus.open() as src, picked.open("w") as dst:
        for line in src:
            if json.loads(line)["id"] in DEMO_IDS:
                dst.write(line)
    start = time.perf_counter()
    summary = Summary()
    for item in monitor_file(picked, CORPUS_DIR / "tasks"):
        summary.add(item)
    seconds = time.perf_counter() - start
    (out_dir / "report.html").write_text(render_html(summary, "etude monitor demo"))
    rows, correct = [], 0
    results = {r.trajectory_id: r for r in summary.kept}
    for line in picked.read_text().splitlines():
        row = json.loads(line)
        want = set(row["label"]["categories"])
        got = results[row["id"]].categories("medium") if row["id"] in results else set()
        correct += want == got
        rows.append(
            f"<tr><td>{html.escape(row['id'])}</td><td>{', '.join(sorted(want)) or 'honest'}"
            f"</td><td>{', '.join(sorted(got)) or '—'}</td></tr>"
        )
    table = (
        "<table><tr><th>trajectory</th><th>label</th><th>monitor (medium+)</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    n = summary.trajectories
    return DemoSection(
        title="reward-hacking monitor",
        summary=f"{correct} of {n} trajectories classified as labelled; "
        f"report for reviewers in report.html",
        figures={
            "trajectories": n,
            "with findings (medium+)": sum(1 for r in summary.kept if r.flagged("medium")),
            "matching their label": correct,
            "monitor seconds": round(seconds, 3),
        },
        html=table,
        # paths relative to the demo directory, which holds out_dir
        files=[f"{out_dir.name}/report.html", f"{out_dir.name}/trajectories.jsonl"],
    )
