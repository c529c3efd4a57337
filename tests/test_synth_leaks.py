"""Scrub and audit: a planted leak of every known kind is caught by the audit, and the
scrub removes every kind that is an artifact (leaving nothing for the audit to find)."""

import gzip
import io
import json
import py_compile
import shutil
import sqlite3
import subprocess
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etude.synth.audit import TokenSearch, audit, changed_since, code_tokens, oracle_tokens
from etude.synth.delete import delete_definitions, plant_canary
from etude.synth.scrub import GIT_ENV, scrub

EXAMPLE = Path(__file__).parents[1] / "etude" / "synth" / "example_repo"
SLUG = "src/textkit/slug.py"
FEATURE = ["slugify", "_strip_accents", "_collapse_separators", "_SEPARATOR_RUN"]
CANARY = "etude-canary-0123456789abcdef"


def _git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=ws,
        env={**GIT_ENV, "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )


@pytest.fixture
def task(tmp_path):
    """A workspace where the slug feature was deleted, the original (with a canary) and
    the audit tokens."""
    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLE, ws, ignore=shutil.ignore_patterns("__pycache__"))
    original = (ws / SLUG).read_text()
    planted = plant_canary(original, FEATURE, CANARY)
    (ws / SLUG).write_text(delete_definitions(original, FEATURE))
    init = ws / "src/textkit/__init__.py"
    init.write_text(delete_definitions(init.read_text(), [], imported=["slugify"]))
    remaining = "\n".join(p.read_text() for p in ws.rglob("*.py"))
    deleted = "\n".join(line for line in original.splitlines() if line not in remaining)
    tokens = oracle_tokens(deleted, remaining, b"", [CANARY])
    venv = tmp_path / "venv"
    (venv / "lib/python3.11/site-packages").mkdir(parents=True)
    return ws, venv, planted, tokens


def _plant_git_history(ws, venv, planted):
    (ws / SLUG).rename(ws / "deleted.py")
    (ws / SLUG).write_text(planted)
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "original")
    (ws / "deleted.py").rename(ws / SLUG)
    _git(ws, "commit", "-qam", "delete the feature")
    return "ws/.git"


def _plant_reflog_only(ws, venv, planted):
    """The original commit is unreachable from any branch: only reflog and objects hold it."""
    _plant_git_history(ws, venv, planted)
    _git(ws, "checkout", "-q", "--orphan", "fresh")
    _git(ws, "commit", "-qm", "fresh")
    _git(ws, "branch", "-D", "master" if _has_branch(ws, "master") else "main")
    return "ws/.git"


def _has_branch(ws, name):
    return (
        subprocess.run(
            ["git", "rev-parse", "--verify", name], cwd=ws, capture_output=True
        ).returncode
        == 0
    )


def _plant_diff(ws, venv, planted):
    (ws / f"{SLUG}.orig").write_text(planted)
    (ws / "feature.patch").write_text("".join(f"-{line}\n" for line in planted.splitlines()))
    return f"ws/{SLUG}.orig"


def _plant_bytecode(ws, venv, planted):
    source = ws / "slug_original.py"
    source.write_text(planted)
    target = ws / "src/textkit/__pycache__/slug.cpython-311.pyc"
    py_compile.compile(str(source), cfile=str(target), doraise=True)
    source.unlink()
    return "ws/src/textkit/__pycache__/slug.cpython-311.pyc"


def _plant_bytecode_in_dot_dir(ws, venv, planted):
    source = ws / "slug_original.py"
    source.write_text(planted)
    target = ws / ".tox/py311/lib/__pycache__/slug.cpython-311.pyc"
    target.parent.mkdir(parents=True)
    py_compile.compile(str(source), cfile=str(target), doraise=True)
    source.unlink()
    return "ws/.tox/"


def _plant_mypy_cache(ws, venv, planted):
    cache = ws / ".mypy_cache/3.11/textkit"
    cache.mkdir(parents=True)
    signature = {"names": {"_collapse_separators": {"type": "def (text: str, separator: str)"}}}
    (cache / "slug.data.json").write_text(json.dumps(signature))
    return "ws/.mypy_cache/"


def _plant_pytest_cache(ws, venv, planted):
    cache = ws / ".pytest_cache/v/cache"
    cache.mkdir(parents=True)
    (cache / "lastfailed").write_text(json.dumps({CANARY: True}))
    return "ws/.pytest_cache/"


def _plant_coverage_sqlite(ws, venv, planted):
    db = sqlite3.connect(ws / ".coverage")
    db.execute("create table context (id integer primary key, context text)")
    db.execute("insert into context (context) values (?)", (f"tests::{CANARY}",))
    db.commit()
    db.close()
    return "ws/.coverage"


def _plant_build_dir(ws, venv, planted):
    target = ws / "build/lib/textkit/slug.py"
    target.parent.mkdir(parents=True)
    target.write_text(planted)
    return "ws/build/"


def _plant_egg_info(ws, venv, planted):
    info = ws / "src/textkit.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Turn runs of whitespace and dashes into one separator")
    return "ws/src/textkit.egg-info/"


def _plant_installed_copy(ws, venv, planted):
    target = venv / "lib/python3.11/site-packages/textkit/slug.py"
    target.parent.mkdir(parents=True)
    target.write_text(planted)
    return "venv/lib/python3.11/site-packages/textkit/"


def _plant_pip_cache_wheel(ws, venv, planted):
    wheel = ws / ".cache/pip/wheels/ab/textkit-0.3.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("textkit/slug.py", planted)
    return "ws/.cache/"


def _plant_sdist_tar(ws, venv, planted):
    target = ws / "dist/textkit-0.3.0.tar.gz"
    target.parent.mkdir()
    data = planted.encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("textkit-0.3.0/src/textkit/slug.py")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    target.write_bytes(gzip.compress(buffer.getvalue()))
    return "ws/dist/"


LEAKS = {
    "git history": _plant_git_history,
    "reflog and dangling objects": _plant_reflog_only,
    "leftover diff": _plant_diff,
    "bytecode": _plant_bytecode,
    "bytecode in a dot-directory": _plant_bytecode_in_dot_dir,
    "mypy cache": _plant_mypy_cache,
    "pytest cache": _plant_pytest_cache,
    "coverage sqlite": _plant_coverage_sqlite,
    "build dir": _plant_build_dir,
    "egg-info": _plant_egg_info,
    "installed copy": _plant_installed_copy,
    "pip cache wheel (zip member)": _plant_pip_cache_wheel,
    "sdist (tar member in gzip)": _plant_sdist_tar,
}


def test_clean_deletion_passes_the_audit(task):
    ws, venv, _, tokens = task
    assert CANARY in tokens and "_collapse_separators" in tokens
    assert audit({"ws": ws, "venv": venv}, tokens) == []


@pytest.mark.parametrize("kind", list(LEAKS))
def test_audit_catches_planted_leak(task, kind):
    ws, venv, planted, tokens = task
    expected = LEAKS[kind](ws, venv, planted)
    findings = audit({"ws": ws, "venv": venv}, tokens)
    assert any(f.path.startswith(expected.rstrip("/")) for f in findings), findings


@pytest.mark.parametrize("kind", list(LEAKS))
def test_scrub_removes_planted_leak(task, kind):
    ws, venv, planted, tokens = task
    LEAKS[kind](ws, venv, planted)
    log = scrub(ws, venv, ["textkit"])
    assert audit({"ws": ws, "venv": venv}, tokens) == []
    assert log.git[0].startswith("one commit on refs/heads/main")


def test_fresh_history_has_one_commit_and_no_reflog(task):
    ws, venv, planted, _ = task
    _plant_reflog_only(ws, venv, planted)
    scrub(ws, venv, ["textkit"])
    log = subprocess.run(
        ["git", "log", "--all", "--oneline"], cwd=ws, capture_output=True, text=True
    ).stdout
    assert len(log.splitlines()) == 1
    reflog = subprocess.run(["git", "reflog"], cwd=ws, capture_output=True, text=True).stdout
    assert reflog == ""
    objects = subprocess.run(
        ["git", "count-objects", "-v"], cwd=ws, capture_output=True, text=True
    ).stdout
    assert "size-pack: 0" in objects


def test_code_tokens_kinds():
    tokens = code_tokens(
        "def _collapse_separators(text):\n"
        '    """Turn runs of whitespace and dashes into one."""\n'
        '    return "unusual-literal"\n'
    )
    assert tokens["_collapse_separators"] == "identifier"
    assert tokens["unusual-literal"] == "literal"
    assert tokens["Turn runs of whitespace and"] == "phrase"
    assert "return" not in tokens and "text" not in tokens


def test_findings_name_the_file_and_the_kind_of_place(task):
    ws, venv, planted, tokens = task
    _plant_git_history(ws, venv, planted)
    _plant_bytecode(ws, venv, planted)
    (venv / "lib/x-1.0.dist-info").mkdir(parents=True)
    (venv / "lib/x-1.0.dist-info/METADATA").write_text(planted)
    found = audit({"ws": ws, "venv": venv}, tokens)
    places = {f.place for f in found}
    assert {"git object", "bytecode", "package metadata"} <= places, places
    # A git object is named by its id and, when reachable, the path it holds.
    blob = next(f for f in found if f.place == "git object" and "blob" in f.where)
    assert blob.where.endswith("(blob src/textkit/slug.py)") and blob.path == "ws/.git"
    assert blob.describe().startswith(f"{blob.kind} {blob.token!r} in ws/.git (git object ")
    pyc = next(f for f in found if f.place == "bytecode")
    assert pyc.path == "ws/src/textkit/__pycache__/slug.cpython-311.pyc"


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.lists(st.text(alphabet="ab_é\n\x00", min_size=1, max_size=6), max_size=8),
    data=st.binary(max_size=60) | st.text(alphabet="ab_é\n\x00", max_size=40).map(str.encode),
)
def test_token_search_equals_one_substring_search_per_token(tokens, data):
    # The audit's one-pass search finds exactly what `token in data` finds, token by token:
    # overlapping and nested tokens, non-ASCII tokens, and data that is not UTF-8.
    expected = {t for t in tokens if t.encode() in data}
    assert TokenSearch(tokens).found_in(data) == expected


def test_token_search_finds_nested_overlapping_and_surrogate_tokens():
    search = TokenSearch(["foobar", "foobarbaz", "oobarb", "barbazz", "\ud800x", "zz"])
    assert search.found_in(b"xxfoobarbazyy") == {"foobar", "foobarbaz", "oobarb"}
    assert search.found_in("\ud800x".encode("utf-8", "surrogatepass")) == {"\ud800x"}
    assert TokenSearch([]).found_in(b"anything") == set()


def _venv_then_shipped_text(tmp_path):
    venv = tmp_path / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    (venv / "lib/site-packages/pkg").mkdir(parents=True)
    (venv / "lib/site-packages/pkg/mod.py").write_text("x = 1\n")
    time.sleep(0.05)  # file times tick coarsely: the shipped text is read after the venv
    shipped = tmp_path / "environment.txt"
    shipped.write_bytes(b"")
    return venv, shipped.stat().st_mtime_ns


def test_changed_since_sees_every_kind_of_change(tmp_path):
    # A shared venv is searched again only when something in it changed after its shipped
    # text was written: a new file deep down, a rewrite, a chmod or a removal all count.
    venv = tmp_path / "venv"
    changes = [
        lambda: (venv / "lib/site-packages/pkg/new.py").write_text("leak\n"),
        lambda: (venv / "lib/site-packages/pkg/mod.py").write_text("y = 2\n"),
        lambda: (venv / "lib/site-packages/pkg/mod.py").chmod(0o600),
        lambda: (venv / "lib/site-packages/pkg/mod.py").unlink(),
    ]
    for change in changes:
        venv, moment = _venv_then_shipped_text(tmp_path)
        assert not changed_since(venv, moment)
        change()
        assert changed_since(venv, moment)
