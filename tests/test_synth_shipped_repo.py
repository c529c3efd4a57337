"""A repository as real ones ship: documentation, a changelog, a legacy script and a
README (copied into the venv's package metadata) that mention the code to be deleted; a
module for an optional dependency that is not installed; a function that is a near copy
of another; a function with a single test. Through the whole pipeline: text the
repository ships is no leak, the optional module is not held against a deletion, and
the near copy and the single-test function are rejected by the quality gates."""

import json

import pytest

from etude.synth.pipeline import synthesize

pytestmark = pytest.mark.slow

FILES = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "ledger"
version = "1.0"
readme = "README.md"
requires-python = ">=3.10"

[project.optional-dependencies]
test = ["pytest>=7"]
frames = ["pandas"]

[tool.setuptools.packages.find]
where = ["src"]
""",
    "README.md": "# ledger\n\nEntries left over are tagged `unmatched-entry-marker`.\n",
    "CHANGELOG.rst": "1.0\n---\n\n- ``_pair_by_reference`` pairs entries before amounts.\n",
    "docs/api.rst": "API\n===\n\nMatch debits to credits by reference, then by amount.\n",
    "tools/legacy_report.py": 'FORMAT = "ledger-legacy-format-v1"\n',
    "src/ledger/__init__.py": (
        "from ledger.reconcile import reconcile_entries\n"
        "from ledger.report import net\n"
        "from ledger.totals import total_credits, total_debits\n"
    ),
    "src/ledger/reconcile.py": '''\
def _pair_by_reference(debits, credits):
    by_reference = {c["ref"]: c for c in credits}
    return [(d, by_reference.pop(d["ref"])) for d in debits if d["ref"] in by_reference]


def reconcile_entries(debits, credits):
    """Match debits to credits by reference, then by amount.

    Returns (pairs, leftovers); leftovers carry the tag `unmatched-entry-marker`."""
    pairs = _pair_by_reference(debits, credits)
    paired = {id(e) for pair in pairs for e in pair}
    leftover_debits = [d for d in debits if id(d) not in paired]
    leftover_credits = [c for c in credits if id(c) not in paired]
    for debit in list(leftover_debits):
        match = next((c for c in leftover_credits if c["amount"] == debit["amount"]), None)
        if match is not None:
            pairs.append((debit, match))
            leftover_debits.remove(debit)
            leftover_credits.remove(match)
    leftovers = [{**e, "tag": "unmatched-entry-marker"} for e in leftover_debits + leftover_credits]
    return pairs, leftovers
''',
    "src/ledger/totals.py": '''\
def total_debits(entries):
    """Sum of the debit amounts."""
    total = 0
    for entry in entries:
        if entry["kind"] == "debit":
            total += entry["amount"]
    return total


def total_credits(entries):
    """Sum of the credit amounts."""
    total = 0
    for entry in entries:
        if entry["kind"] == "credit":
            total += entry["amount"]
    return total
''',
    "src/ledger/report.py": '''\
from ledger.totals import total_debits


def net(entries, opening=0):
    """The opening balance less the debits."""
    return opening - total_debits(entries)
''',
    # Imports an optional dependency that is not installed: fails to import before too.
    "src/ledger/frames.py": "import pandas\n\n\ndef frame(rows):\n    return pandas.Series(rows)\n",
    "tests/test_reconcile.py": """\
from ledger import reconcile_entries

D = [{"ref": 1, "amount": 5}, {"ref": 2, "amount": 7}, {"ref": 9, "amount": 3}]
C = [{"ref": 2, "amount": 7}, {"ref": 1, "amount": 5}, {"ref": 4, "amount": 3}]


def test_pairs_by_reference():
    pairs, _ = reconcile_entries(D[:2], C[:2])
    assert [(d["ref"], c["ref"]) for d, c in pairs] == [(1, 1), (2, 2)]


def test_pairs_by_amount_when_references_differ():
    pairs, leftovers = reconcile_entries(D, C)
    assert (D[2], C[2]) in pairs and leftovers == []


def test_leftovers_are_tagged():
    _, leftovers = reconcile_entries([{"ref": 1, "amount": 1}], [])
    assert leftovers == [{"ref": 1, "amount": 1, "tag": "unmatched-entry-marker"}]
""",
    "tests/test_totals.py": """\
from ledger import total_credits, total_debits

E = [{"kind": "debit", "amount": 4}, {"kind": "credit", "amount": 6}]


def test_total_debits():
    assert total_debits(E) == 4 and total_debits([]) == 0


def test_total_credits():
    assert total_credits(E) == 6


def test_total_credits_of_debits_only():
    assert total_credits(E[:1]) == 0


def test_total_credits_adds_up():
    assert total_credits(E + E) == 12
""",
    "tests/test_report.py": """\
from ledger import net


def test_net():
    assert net([{"kind": "debit", "amount": 4}], opening=10) == 6
""",
}
# Tokens of the deleted reconcile_entries found, outside the package, only in what the
# repository ships: the changelog, the docs, the legacy script and the README (which the
# install also copies into the venv's METADATA).
SHIPPED = [
    "_pair_by_reference",
    "Match debits to credits by",
    "ledger-legacy-format-v1",
    "unmatched-entry-marker",
]


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    root = tmp_path_factory.mktemp("ledger")
    source = root / "ledger"
    for rel, text in FILES.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    out = root / "out"
    summary = synthesize([source], out, workers=2)
    (repo,) = summary["repositories"]
    records = {
        r["candidate"]: r
        for r in (
            json.loads(p.read_text()) for p in (out / "work" / "ledger" / "results").iterdir()
        )
    }
    state = json.loads((out / "work" / "ledger" / "repo_state.json").read_text())
    return out, repo, records, state


def test_shipped_text_is_no_leak(synth):
    out, _, records, _ = synth
    assert records["ledger.reconcile.reconcile_entries"]["status"] == "valid", records
    task = json.loads(
        (out / "tasks" / "ledger__ledger.reconcile.reconcile_entries" / "task.json").read_text()
    )
    assert task["audit"]["findings"] == []
    tokens = set(task["oracle_tokens"])
    assert not tokens & set(SHIPPED)
    # What only the deleted code holds is still searched for, the canary included.
    assert "leftover_credits" in tokens and any(t.startswith("etude-canary-") for t in tokens)
    workspace = out / "tasks" / task["id"] / "workspace"
    assert "_pair_by_reference" in (workspace / "CHANGELOG.rst").read_text()


def test_optional_dependency_module_is_not_held_against_a_deletion(synth):
    _, repo, _, state = synth
    assert "ledger.frames" not in state["importable"] and "ledger.totals" in state["importable"]
    assert "no_longer_imports" not in repo["rejections"]


def test_near_copy_is_rejected(synth):
    _, _, records, _ = synth
    record = records["ledger.totals.total_credits"]
    assert record["reason_key"] == "near_copy", record
    assert "total_credits ~ total_debits (1.00)" in record["reason"]


def test_a_single_discriminating_test_is_too_few(synth):
    _, repo, records, _ = synth
    record = records["ledger.report.net"]
    assert record["reason_key"] == "few_discriminating_tests", record
    assert record["reason"].startswith("1 of 1 fail-to-pass tests fail with every trivial stub")
    assert repo["rejections"] == {"near_copy": 1, "few_discriminating_tests": 1}
    assert repo["valid"] == 1 and repo["candidates"] == 3 and repo["not_processed"] == 0
