"""`etude demo`'s wiring: every section it lists imports and is a `run(out_dir)`, and the run
writes its report with a failing part shown as failed (exit code 1) next to the others."""

from __future__ import annotations

import inspect
import json

import etude.demo as demo
from etude.cli import main
from etude.demo import DemoSection


def test_every_section_imports_and_takes_an_out_dir():
    sections = demo._sections()
    assert len(sections) == 6
    for name, run in sections:
        assert list(inspect.signature(run).parameters) == ["out_dir"], name


def test_the_report_shows_every_part_and_a_failure_fails_the_run(tmp_path, monkeypatch):
    def works(out_dir):
        (out_dir / "made.txt").write_text("x")
        return DemoSection(title="works", summary="it ran", figures={"answer": 42})

    def breaks(out_dir):
        raise RuntimeError("no example repository")

    monkeypatch.setattr(demo, "_sections", lambda: [("part a", works), ("part b", breaks)])
    assert main(["demo", "--out", str(tmp_path)]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert [s["title"] for s in report] == ["works", "part b"]
    assert report[0]["figures"] == {"answer": 42}
    assert report[1]["summary"] == "FAILED: RuntimeError: no example repository"
    assert (tmp_path / "part-a" / "made.txt").is_file()
    assert "it ran" in (tmp_path / "report.html").read_text()


def test_the_dual_mesh_section_reads_the_repository_config():
    """The section locates configs/ from its own path (a move must not break it)."""
    from etude.demo.dual_mesh import CONFIG
    from etude.parallel.train import load_config

    assert load_config(CONFIG).layout.world_size == 8
