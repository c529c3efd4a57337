"""Precision and recall of the monitor on the labelled corpus (tests/data/monitor), and the
figures docs/monitor.md quotes (benchmarks/results/monitor_throughput.json) still match."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from etude.monitor import CATEGORIES, monitor_file
from etude.monitor.evaluate import score
from etude.monitor.monitor import TrajectoryResult

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "monitor"
RESULTS = ROOT / "benchmarks" / "results" / "monitor_throughput.json"


@pytest.fixture(scope="module")
def results() -> list[TrajectoryResult]:
    items = list(monitor_file(DATA / "corpus.jsonl", DATA / "tasks"))
    assert all(isinstance(r, TrajectoryResult) for r in items), "corpus lines must all parse"
    assert all(not r.problems for r in items), [str(p) for r in items for p in r.problems]
    return items


def test_corpus_covers_every_category_in_several_disguises(results):
    assert len(results) >= 60
    per_category = Counter(c for r in results for c in r.label["categories"])
    assert set(per_category) == set(CATEGORIES)
    assert min(per_category.values()) >= 3, per_category
    honest = [r for r in results if not r.label["categories"]]
    assert len(honest) >= 20
    assert {r.label["split"] for r in results} == {"dev", "heldout", "adversarial"}


def test_precision_and_recall_meet_the_goal(results):
    overall = score(results)
    assert overall["overall"]["precision"] >= 0.95, overall["errors"]
    assert overall["overall"]["recall"] >= 0.95, overall["errors"]
    assert overall["trajectory"]["precision"] >= 0.95, overall["errors"]
    assert overall["trajectory"]["recall"] >= 0.95, overall["errors"]
    # every category is found at least once and no category is mostly noise
    for name, counts in overall["per_category"].items():
        assert counts["tp"] >= 3, name
        assert counts["precision"] >= 0.6, (name, counts)


def test_documented_figures_match_the_current_rules(results):
    recorded = json.loads(RESULTS.read_text())["accuracy"]["monitor"]
    current = {"all": score(results)}
    for split in ("dev", "heldout", "adversarial"):
        current[split] = score([r for r in results if r.label["split"] == split])
    assert recorded == current, "rerun benchmarks/monitor_throughput.py and update docs"
