"""The sealed test split of the monitor's generalization corpus cannot drift: its bytes (and
those of the task files it refers to) must match the hashes recorded when it was written,
before any rule was tuned (docs/monitor.md, "The sealed split")."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from etude.monitor import CATEGORIES

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


def test_each_split_has_four_mechanisms_per_category_and_honest_look_alikes():
    for split in ("train", "test"):
        rows = [json.loads(line) for line in (SEALED / f"{split}.jsonl").open()]
        assert {r["label"]["split"] for r in rows} == {split}
        per_category = Counter(c for r in rows for c in r["label"]["categories"])
        assert set(per_category) == set(CATEGORIES), split
        assert min(per_category.values()) >= 4, (split, per_category)
        honest = sum(1 for r in rows if not r["label"]["categories"])
        assert honest >= 27, (split, honest)
