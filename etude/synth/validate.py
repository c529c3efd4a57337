"""Checks that decide whether a deletion makes a valid task; each returns a reason string
when the check fails and None when it passes.

- collection: every collection error is the deleted feature missing;
- pass-to-pass: the tests that still pass do so in both runs after deletion;
- fail-to-pass: at least one test fails, each for the right reason: in the test body or at
  collection (not in a fixture, not a timeout), and an import/name/attribute error must
  name a deleted definition;
- solvability and discrimination are scored runs (see candidate.py): restoring the
  reference must pass everything, a trivial stub must not.

Every reason carries a stable key (`Reason.key`, listed in REASONS) that summary.json
counts rejections by; the text says what exactly failed.
"""

from __future__ import annotations

from collections.abc import Iterable

from etude.synth.testrun import SuiteRun

_MISSING_NAME_ERRORS = ("ImportError", "ModuleNotFoundError", "NameError", "AttributeError")

# Stable keys of every reason a processed candidate is rejected for.
REASONS = {
    "near_copy": "the deleted code is a near copy of code that remains",
    "canary_breaks_tests": "planting the canary made a kept test fail",
    "no_longer_imports": "a module that imported before the deletion no longer does",
    "does_not_install": "the workspace no longer installs (its build imports what was deleted)",
    "collection_error": "a collection error unrelated to the deletion",
    "flaky": "a test changed outcome between the two runs after the deletion",
    "no_failing_test": "no test fails after the deletion",
    "wrong_failure": "a fail-to-pass test fails for a reason other than the deletion",
    "leak": "the audit found deleted code in the workspace or its environment",
    "reference_fails": "restoring the reference does not pass every test",
    "stub_passes": "a trivial stub passes every fail-to-pass test",
    "few_discriminating_tests": "fewer fail-to-pass tests than required fail every stub",
    "duplicate": "another candidate deletes identical code",
    "error": "an install, git or sandbox step failed",
}


class Reason(str):
    """A rejection reason: the text, plus its stable `key` (one of REASONS)."""

    key: str

    def __new__(cls, key: str, text: str) -> Reason:
        if key not in REASONS:
            raise ValueError(f"unknown rejection key {key!r}; known: {', '.join(REASONS)}")
        reason = super().__new__(cls, text)
        reason.key = key
        return reason


def _mentions(text: str, names: Iterable[str]) -> bool:
    return any(name in text for name in names)


def check_collection(run: SuiteRun, deleted: set[str]) -> Reason | None:
    for path, error in sorted(run.collect_errors.items()):
        if not _mentions(error, deleted):
            return Reason(
                "collection_error",
                f"collection error in {path} unrelated to the deletion: {_last_line(error)}",
            )
    return None


def split_outcomes(
    first: SuiteRun, second: SuiteRun, kept: list[str], rerun: set[str] | None = None
) -> tuple[list, list, Reason | None]:
    """(fail_to_pass, pass_to_pass, reason) from two runs after deletion; reason is set
    when a test changed outcome between the runs (flaky) or none fails. With `rerun` (node
    ids), the second run holds only those tests (the others keep the first's outcome)."""
    f2p, p2p = [], []
    for nodeid in kept:
        a = first.outcome_of(nodeid).outcome
        rechecked = rerun is None or nodeid in rerun
        b = second.outcome_of(nodeid).outcome if rechecked else a
        if (a == "passed") != (b == "passed"):
            return [], [], Reason("flaky", f"{nodeid} is flaky after deletion ({a}, then {b})")
        (p2p if a == "passed" else f2p).append(nodeid)
    if not f2p:
        return [], [], Reason("no_failing_test", "no test fails after the deletion")
    return f2p, p2p, None


def check_failure_reasons(
    run: SuiteRun, fail_to_pass: list[str], deleted: set[str]
) -> Reason | None:
    for nodeid in fail_to_pass:
        outcome = run.outcome_of(nodeid)
        message = outcome.message
        if outcome.outcome == "skipped":
            return Reason("wrong_failure", f"{nodeid} is skipped after deletion instead of failing")
        if "Timeout" in message or outcome.phase in ("setup", "teardown"):
            return Reason(
                "wrong_failure", f"{nodeid} fails in {outcome.phase or 'run'}: {message[:200]}"
            )
        if outcome.phase == "collect" and not _mentions(outcome.text or message, deleted):
            return Reason(
                "wrong_failure",
                f"{nodeid} is not collected for a reason unrelated to the deletion: "
                f"{message[:200]}",
            )
        missing = message.split(":", 1)[0].strip() in _MISSING_NAME_ERRORS
        if missing and not _mentions(outcome.text or message, deleted):
            return Reason(
                "wrong_failure", f"{nodeid} fails on a name that was not deleted: {message[:200]}"
            )
    return None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
