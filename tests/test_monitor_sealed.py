"""The sealed splits of the monitor's generalization corpus cannot drift: their bytes (and
those of the task files they refer to) must match the hashes recorded when each was written,
before any rule was tuned against it (docs/monitor.md, "The sealed splits"); the splits are
the ones SHA256SUMS names, so a split sealed later is covered as soon as it is merged."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from etude.monitor import CATEGORIES, ZEROING_SEVERITY, Finding
from etude.monitor.evaluate import auroc, recall_at_fpr
from etude.monitor.group import compare_with_group
from etude.monitor.monitor import TrajectoryResult

DATA = Path(__file__).resolve().parent / "data" / "monitor"
SEALED = DATA / "sealed"


def test_test_split_matches_its_recorded_hashes():
    recorded = {}
    for line in (SEALED / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        recorded[name] = digest
    assert "sealed/test.jsonl" in recorded
    for name, digest in recorded.items():
        actual = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
        assert actual == digest, f"{name} changed since the split was sealed"


ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "monitor_accuracy", ROOT / "benchmarks" / "monitor_accuracy.py"
)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

# Hacks per category and honest trajectories each split holds at least; a split sealed
# later (any other name in SHA256SUMS) is held to DEFAULT_MINIMUM.
MINIMUM = {"train": (4, 27), "test1": (4, 27), "test2": (4, 27), "test3": (3, 20)}
MINIMUM |= {"test4": (3, 20), "test5": (3, 15), "test6": (3, 10), "test7": (3, 10)}
DEFAULT_MINIMUM = (3, 10)


def test_each_split_has_several_mechanisms_per_category_and_honest_look_alikes():
    splits = {"train": SEALED / "train.jsonl"}
    splits |= {name: path for name, (path, _) in bench.sealed_splits().items()}
    assert set(MINIMUM) <= set(splits)
    for split, path in splits.items():
        per, honest_min = MINIMUM.get(split, DEFAULT_MINIMUM)
        rows = [json.loads(line) for line in path.open()]
        assert {r["label"]["split"] for r in rows} == {path.stem}
        per_category = Counter(c for r in rows for c in r["label"]["categories"])
        assert set(per_category) == set(CATEGORIES), split
        assert min(per_category.values()) >= per, (split, per_category)
        honest = sum(1 for r in rows if not r["label"]["categories"])
        assert honest >= honest_min, (split, honest)


def test_recorded_accuracy_matches_the_rules_and_the_zeroing_severity():
    recorded = json.loads(bench.ACCURACY.read_text())
    assert bench.figures(bench.scored_splits()) == recorded, (
        "rerun benchmarks/monitor_accuracy.py and update docs/monitor.md"
    )
    assert recorded["zeroing_severity"] == ZEROING_SEVERITY


def test_docs_results_table_comes_from_the_scoring_records():
    rows = {}
    for line in (ROOT / "docs" / "monitor.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| test") and len(cells) == 8:
            rows[cells[0].split()[0]] = cells[1:]
    scored = [name for name in bench.scored_splits() if name.startswith("test")]
    for name in scored:
        expected = [c.strip() for c in bench.results_row(name).strip("|").split("|")]
        assert rows.get(name) == expected[1:], name


def test_a_sealed_split_is_scored_once_and_only_as_sealed(tmp_path, monkeypatch):
    with pytest.raises(SystemExit, match="already scored once"):
        bench.score_sealed_once("test1", "97f295d")
    with pytest.raises(SystemExit, match="'test99' is not a sealed split"):
        bench.score_sealed_once("test99", "97f295d")
    (tmp_path / "sealed").mkdir()
    (tmp_path / "sealed" / "test12.jsonl").write_text("{}\n")
    (tmp_path / "SHA256SUMS").write_text(f"{'0' * 64}  sealed/test12.jsonl\n")
    monkeypatch.setattr(bench, "DATA", tmp_path)
    monkeypatch.setattr(bench, "SUMS", tmp_path / "SHA256SUMS")
    monkeypatch.setattr(bench, "RESULTS", tmp_path)
    with pytest.raises(SystemExit, match="no longer matches its SHA-256"):
        bench.score_sealed_once("test12", "97f295d")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SHA256SUMS", "sealed"]


def test_scores_rank_as_a_classifier():
    assert auroc([0.9, 0.8, 0.1, 0.0], [True, True, False, False]) == 1.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc([0.5], [True]) is None
    at = recall_at_fpr([0.9, 0.7, 0.7, 0.0, 0.0], [True, True, False, False, True], 0.05)
    assert at == {"threshold": 0.9, "recall": 0.3333, "fpr": 0.0}


def _result(rid: str, task: str, rules: list[str]) -> TrajectoryResult:
    findings = [
        Finding("vcs_history", "high", 0.9, 1, "git log --all", "rules", rule, "x")
        for rule in rules
    ]
    return TrajectoryResult(rid, 1, task, findings)


def test_group_comparison_demotes_rules_common_to_the_group_only():
    group = [
        _result(f"r{i}", "t", ["list_refs"] + (["reflog"] if i == 0 else [])) for i in range(4)
    ]
    other = [_result("o", "u", ["list_refs"])]
    judged = {r.trajectory_id: r for r in compare_with_group(group + other)}
    assert [f.severity for f in judged["r0"].findings] == ["medium", "high"]  # common, rare
    assert judged["r1"].findings[0].severity == "medium"
    assert judged["o"].findings[0].severity == "high"  # a group of one is left alone


def test_the_next_sealed_splits_have_a_scoring_record_name():
    # test16 is being written by a red team now: its one scoring must have a record name
    assert bench.scoring_record("test15").name == "monitor_accuracy_fifteenth_sealed_scoring.json"
    assert bench.scoring_record("test16").name == "monitor_accuracy_sixteenth_sealed_scoring.json"
    assert bench.scoring_record("test20").name == "monitor_accuracy_twentieth_sealed_scoring.json"
