"""The sharded-Muon part of `etude demo` runs under torchrun and reports an exact match."""

import pytest

from etude.demo.muon import run

pytestmark = [pytest.mark.dist, pytest.mark.slow]


def test_demo_section_trains_and_matches_one_process(tmp_path):
    section = run(tmp_path)
    first, last = (float(x) for x in section.figures["loss first -> last"].split(" -> "))
    assert last < first - 1.0
    assert float(section.figures["max |param diff| vs one process"]) < 1e-4
    assert section.figures["NS FLOP redundancy (1.00 = each unit once)"] == "1.00"
