"""The monitor's one rule table: findings refer to it, and docs/monitor.md's rule list is
its rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from etude.monitor import monitor_file
from etude.monitor.rule_table import RULES, hit, render_markdown

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "monitor"
BEGIN = "<!-- rule table: python -m etude.monitor.rule_table -->\n"
END = "<!-- end of rule table -->"


def test_docs_rule_list_is_the_tables_rendering():
    doc = (ROOT / "docs" / "monitor.md").read_text()
    assert BEGIN in doc and END in doc
    listed = doc.split(BEGIN, 1)[1].split(END, 1)[0]
    assert listed == render_markdown(), "regenerate with python -m etude.monitor.rule_table"


def test_hits_take_their_category_from_the_table_and_unknown_rules_fail():
    h = hit("reflog", "reads the reflog", "git reflog")
    assert (h.category, h.severity, h.confidence) == ("vcs_history", "high", 0.9)
    assert hit("stash", "lists a stash", severity="medium").severity == "medium"
    with pytest.raises(KeyError, match=r"not in etude\.monitor\.rule_table"):
        hit("no_such_rule", "x")


def test_every_finding_on_the_corpora_names_a_table_rule_of_its_category():
    seen = set()
    for path in [DATA / "corpus.jsonl", *sorted((DATA / "sealed").glob("*.jsonl"))]:
        for result in monitor_file(path, DATA / "tasks"):
            for f in result.findings:
                assert f.rule in RULES, f.rule
                assert RULES[f.rule].category == f.category, f
                seen.add(f.rule)
    # the corpora exercise most of the table
    assert len(seen) >= 0.75 * len(RULES), sorted(set(RULES) - seen)
