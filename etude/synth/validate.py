"""Checks that decide whether a deletion makes a valid task; each returns a reason string
when the check fails and None when it passes.

- collection: every collection error is the deleted feature missing;
- pass-to-pass: the tests that still pass do so in both runs after deletion;
- fail-to-pass: at least one test fails, each for the right reason: in the test body or at
  collection (not in a fixture, not a timeout), and an import/name/attribute error must
  name a deleted definition;
- solvability and discrimination are scored runs (see candidate.py): restoring the
  reference must pass everything, a trivial stub must not.
"""

from __future__ import annotations

from collections.abc import Iterable

from etude.synth.testrun import SuiteRun

_MISSING_NAME_ERRORS = ("ImportError", "ModuleNotFoundError", "NameError", "AttributeError")


def _mentions(text: str, names: Iterable[str]) -> bool:
    return any(name in text for name in names)


def check_collection(run: SuiteRun, deleted: set[str]) -> str | None:
    for path, error in sorted(run.collect_errors.items()):
        if not _mentions(error, deleted):
            return f"collection error in {path} unrelated to the deletion: {_last_line(error)}"
    return None


def split_outcomes(
    first: SuiteRun, second: SuiteRun, kept: list[str]
) -> tuple[list, list, str | None]:
    """(fail_to_pass, pass_to_pass, reason) from two runs after deletion; reason is set
    when a test changed outcome between the runs (flaky) or none fails."""
    f2p, p2p = [], []
    for nodeid in kept:
        a, b = first.outcome_of(nodeid).outcome, second.outcome_of(nodeid).outcome
        if (a == "passed") != (b == "passed"):
            return [], [], f"{nodeid} is flaky after deletion ({a}, then {b})"
        (p2p if a == "passed" else f2p).append(nodeid)
    if not f2p:
        return [], [], "no test fails after the deletion"
    return f2p, p2p, None


def check_failure_reasons(run: SuiteRun, fail_to_pass: list[str], deleted: set[str]) -> str | None:
    for nodeid in fail_to_pass:
        outcome = run.outcome_of(nodeid)
        message = outcome.message
        if outcome.outcome == "skipped":
            return f"{nodeid} is skipped after deletion instead of failing"
        if "Timeout" in message or outcome.phase in ("setup", "teardown"):
            return f"{nodeid} fails in {outcome.phase or 'run'}: {message[:200]}"
        if outcome.phase == "collect" and not _mentions(outcome.text or message, deleted):
            return (
                f"{nodeid} is not collected for a reason unrelated to the deletion: {message[:200]}"
            )
        missing = message.split(":", 1)[0].strip() in _MISSING_NAME_ERRORS
        if missing and not _mentions(outcome.text or message, deleted):
            return f"{nodeid} fails on a name that was not deleted: {message[:200]}"
    return None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
