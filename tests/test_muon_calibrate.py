"""The GPU calibration's CPU path runs, and the planner predicts from its rates."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from etude.optim.plan import load_rates, plan, predict

ROOT = Path(__file__).parents[1]


def test_tiny_calibration_feeds_the_planner(tmp_path):
    out = tmp_path / "rates.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "muon_calibrate.py"),
            "--tiny",
            "--out",
            str(out),
        ],
        check=True,
        cwd=ROOT,
        timeout=300,
        capture_output=True,
    )
    data = json.loads(out.read_text())
    assert {r["method"] for r in data["ns"]} == {"standard", "gram", "gram_triangular"}
    assert {r.get("fp8_steps", 0) for r in data["ns"]} == {0, 2}  # the FP8 path ran
    assert all(0.5 < r["vs_quintic5"] < 2 for r in data["ns"] if "fp8_steps" in r)
    assert data["ns_block"] == 16
    assert data["muon_step"]["torch_optim_muon_s"] > 0
    assert data["muon_step"]["etude_auto_ns_block_s"] > 0
    rates = load_rates(str(out))
    planned = plan("tiny", 8, ns_block=16)
    assert "gram_triangular" in {u.method for g in planned.groups for u in g.units}
    stated, measured = predict(planned, "h200"), predict(planned, "h200", rates=rates)
    assert stated["sources"]["ns"] == "stated"
    assert measured["sources"]["ns"].startswith("measured")
    assert measured["sources"]["ns_unmeasured_shapes"] == []  # every tiny shape was timed
    # The slowest rank's NS time is its units' FLOPs at their measured rates.
    rank = measured["time"]["slowest_rank"]
    seconds = 0.0
    for g in planned.groups:
        slot = g.replica_of * len(g.family.ranks) + g.owners
        mine = np.flatnonzero(slot == rank % len(g.flops))
        seconds += sum(
            g.units[k].flops / rates.ns_rate(g.units[k].shape, g.units[k].method, 16) for k in mine
        )
    assert measured["time"]["ns_s"] == pytest.approx(seconds, rel=1e-9)
    assert measured["time"]["ns_mirror_s"] == 0  # in the measured time
    assert stated["time"]["ns_mirror_s"] > 0
    # Planned with another block, the triangular rates do not apply.
    other = predict(plan("tiny", 8, ns_block=8), "h200", rates=rates)
    assert {s[2] for s in other["sources"]["ns_unmeasured_shapes"]} == {"gram_triangular"}
    # The overlap was measured (on CPU there is no side stream: about nothing hides) and
    # the prediction takes it in place of the stated fraction.
    assert data["overlap"]["side_stream"] is False
    assert 0 <= data["overlap"]["fraction"] <= 1
    assert rates.elementwise_overlap == data["overlap"]["fraction"]
    assert measured["sources"]["elementwise_overlap"].startswith("measured")
    assert stated["sources"]["elementwise_overlap"] == "stated"
    bytes_moved = measured["per_rank"]["elementwise_bytes"]["max"]
    assert measured["time"]["elementwise_s"] <= bytes_moved / rates.elementwise_bytes_s * (1 + 1e-9)


def test_bad_rates_file_is_named(tmp_path):
    bad = tmp_path / "rates.json"
    bad.write_text('{"ns": []}')
    with pytest.raises(ValueError, match=r"rates\.json: not a calibration file"):
        load_rates(str(bad))
    ns = [{"shape": [4, 8], "method": "gram", "flop_per_s": 1e12}]
    rates = {"ns": ns, "elementwise": {"bytes_per_s": 1e12}, "device": "x"}
    bad.write_text(json.dumps({**rates, "overlap": {"fraction": 2.0}}))
    with pytest.raises(ValueError, match=r"overlap fraction must be in \[0, 1\], got 2.0"):
        load_rates(str(bad))
    bad.write_text(json.dumps(rates))  # a calibration from before the overlap was measured
    assert load_rates(str(bad)).elementwise_overlap is None
