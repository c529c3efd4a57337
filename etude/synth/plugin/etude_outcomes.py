"""A pytest plugin (loaded with `-p etude_outcomes`) writing per-test outcomes as JSON.

It runs inside the sandboxed test process, so it depends on nothing but pytest. The file
named by $ETUDE_OUTCOMES receives {"tests": {nodeid: {...}}, "collect_errors": {...}}.
"""

import json
import os

_MAX_TEXT = 4000
_tests = {}
_collect_errors = {}


def _text(report):
    return str(report.longreprtext)[-_MAX_TEXT:] if report.longrepr is not None else ""


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    return crash.message if crash is not None else _text(report)[-300:]


def pytest_collectreport(report):
    if report.failed:
        _collect_errors[report.nodeid] = _text(report)


def pytest_runtest_logreport(report):
    entry = _tests.setdefault(
        report.nodeid, {"outcome": "passed", "phase": "", "message": "", "text": "", "seconds": 0.0}
    )
    entry["seconds"] += report.duration
    if report.failed and entry["outcome"] != "failed":
        entry.update(
            outcome="failed", phase=report.when, message=_message(report), text=_text(report)
        )
    elif report.skipped and entry["outcome"] == "passed":
        entry.update(outcome="skipped", phase=report.when, message=_message(report))


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("ETUDE_OUTCOMES")
    if path:
        with open(path, "w") as f:
            json.dump({"tests": _tests, "collect_errors": _collect_errors}, f)
