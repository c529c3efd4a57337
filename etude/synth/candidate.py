"""Turning one candidate feature into a task, or into a rejection with its reason.

Steps, in a private directory per candidate (`work/cands/<id>`):
0. reject a deletion that is a near copy of code that remains (similarity.py), before
   anything runs;
1. copy the pristine repository, plant a canary in the feature, commit it to git history
   and run the tests that run or name the feature, so history, bytecode and caches hold
   it as in a real checkout; tests use the baseline's venv, read-only, with the workspace
   first on the path (or, without `Settings.shared_environment`, a venv of their own);
2. delete the feature with libcst (definitions, methods of a group, or a whole module's
   file; see plan_deletion), check that the modules that imported before still do and
   that the workspace still builds as its install would (`env.install_error`), run
   the kept tests, then again the failing ones and those that ran the feature (every
   file when an outcome differs), and split them into fail-to-pass and pass-to-pass
   (validate.py); each step's seconds go into the record's `phases` (Clock);
3. hide the fail-to-pass test files, scrub workspace and venv (scrub.py), audit both for
   the canary and the oracle-only tokens (audit.py);
4. solvability: the reference restored into a copy passes every test; discrimination:
   trivial stubs in a copy do not pass the fail-to-pass tests, and enough of them fail
   with every stub; both with the grader's equality guard on the deleted public names,
   exactly as `etude grade` runs them;
5. stage the task (workspace, hidden store, task.json) under `work/staged/<task id>`.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from etude.sandbox import Limits
from etude.synth import env, similarity
from etude.synth.affected import affected_tests
from etude.synth.audit import audit, changed_since, oracle_tokens
from etude.synth.delete import STUB_BODIES, delete_definitions, plant_canary, stub
from etude.synth.discover import Repo, module_name, test_tree_files
from etude.synth.errors import SynthError
from etude.synth.grade import prepare_workspace, score
from etude.synth.imports import failed_imports
from etude.synth.scrub import git, scrub
from etude.synth.slice import Candidate, Graph, build_graph
from etude.synth.task import definition_node, first_line, problem_statement, write_manifest
from etude.synth.testrun import SuiteRun, files_of, run_suite
from etude.synth.validate import (
    Reason,
    check_collection,
    check_failure_reasons,
    split_outcomes,
)


@dataclass(frozen=True)
class Settings:
    """Per-run choices: whether signatures are revealed in the problem statement, whether
    the fail-to-pass test files are hidden from the workspace, time limits, the quality
    gates (discriminating tests required, near-copy similarity), how candidates run
    (shared environment, test subsets), and whether to measure the unguarded always-equal
    stub side by side (benchmarks/synth_yield.py)."""

    reveal_signatures: bool = False
    hide_tests: bool = True
    test_timeout_s: float = 20.0
    suite_timeout_s: float = 300.0
    slow_test_s: float = 5.0  # baseline tests slower than this (either run) are dropped
    min_discriminating: int = 3  # fail-to-pass tests that must fail with every trivial stub
    near_copy_ratio: float = 0.9  # similarity at which deleted code counts as copied
    shared_environment: bool = True  # candidates test with the baseline's venv, read-only
    test_subsets: bool = True  # canary, second and stub runs on the tests they can change
    # Runs decided by pass/fail alone (canary, second, reference, stubs) print no failure
    # reports (`--tb=no`): pytest's long reports parse the whole test module for every
    # frame, and its summary of failures grows with the square of their number (seconds
    # per stub run on a large test file); the first run after the deletion, whose failure
    # texts are checked, keeps them.
    quiet_failures: bool = True
    measure_guard: bool = False  # also score the always-equal stub unguarded (benchmark)


@dataclass
class Job:
    """Everything a worker needs for one candidate (picklable, for process pools and Ray)."""

    repo: dict
    candidate: dict
    kept: list[str]
    extras: tuple[str, ...]
    requirements: list[str]
    environment_text: str  # path of what the untouched repository ships (audit baseline)
    work_dir: str
    settings: Settings
    plugins: tuple[str, ...] = env.TOOL_PLUGINS  # pytest plugins to load (baseline's list)
    importable: tuple[str, ...] | None = None  # modules importing before (None: all must)


class Clock:
    """Seconds per step of one candidate (the record's `phases`): `lap(step)` charges the
    time since the previous lap to `step`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, step: str) -> None:
        now = time.perf_counter()
        self.seconds[step] = round(self.seconds.get(step, 0.0) + now - self._last, 2)
        self._last = now


class Rejected(Exception):
    """The candidate does not make a valid task; `reason` says why (its `key` is stable,
    see validate.REASONS) and `checks` are the scored runs made before the decision."""

    def __init__(self, reason: Reason, checks: dict | None = None) -> None:
        super().__init__(str(reason))
        self.reason = reason
        self.checks = checks or {}


def _commit_history(workspace: Path) -> None:
    """Commit the (canary-planted) tree, as a checkout's history holds the original code."""
    if not (workspace / ".git").exists():
        git(workspace, "init", "--quiet")
    git(workspace, "add", "--all", "--force")
    git(workspace, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", "original")


def _write(root: Path, files: dict[str, str | None]) -> None:
    """Write each file's text; None removes the file (a deleted module)."""
    for rel, text in files.items():
        if text is None:
            (root / rel).unlink(missing_ok=True)
        else:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)


def _entity_code(graph: Graph, source: str, key: tuple[str, str]) -> str:
    """The source lines of a top-level definition or of a method ('Class.method')."""
    name = key[1]
    if "." not in name:
        d = graph.definitions[key]
        first, last = d.first, d.last
    else:
        node = definition_node(source, name)
        first = first_line(node)
        last = node.end_lineno
    return "".join(source.splitlines(keepends=True)[first - 1 : last])


def _deleted_code(graph: Graph, cand: Candidate, originals: dict[str, str]) -> str:
    if cand.kind == "module":
        return originals[cand.feature[0]]
    return "\n".join(_entity_code(graph, originals[key[0]], key) for key in cand.entities)


@dataclass
class Deletion:
    """What deleting a candidate changes: new text per modified file (None: removed),
    names per file (for canaries and stubs), every name a failure may cite, and the
    equality guard's "module:qualname" targets."""

    files: dict[str, str | None]
    by_file: dict[str, set[str]]
    names: set[str]
    guard: list[str]


def plan_deletion(repo: Repo, graph: Graph, cand: Candidate, originals: dict) -> Deletion:
    """The deletion of `cand` from the sources `originals` (relative path -> text)."""
    by_file: dict[str, set[str]] = {}
    for rel, name in cand.entities:
        by_file.setdefault(rel, set()).add(name)
    public = [name.split(".")[-1] for _, name in cand.public]
    modules, imported = set(), set()
    if cand.kind == "module":
        modules = {module_name(repo, cand.feature[0])}
        imported = {*public, *(m.rsplit(".", 1)[-1] for m in modules)}  # `from pkg import mod`
    elif cand.kind == "definition":
        imported = {cand.feature[1]}
    files: dict[str, str | None] = {}
    for rel, text in originals.items():
        if cand.kind == "module" and rel == cand.feature[0]:
            files[rel] = None
            continue
        new = delete_definitions(text, by_file.get(rel, set()), imported, modules)
        if new != text:
            files[rel] = new
    short_modules = {m.rsplit(".", 1)[-1] for m in modules}  # as in "No module named ..."
    names = {name.split(".")[-1] for _, name in cand.entities} | modules | short_modules
    guard = [
        f"{module_name(repo, rel)}:{name}"
        for rel, name in cand.public
        if "." in name or graph.definitions[(rel, name)].kind != "constant"
    ]
    return Deletion(files, by_file, names, guard)


def _remaining_text(repo: Repo, deleted_files: dict[str, str | None]) -> str:
    parts = [text for text in deleted_files.values() if text is not None]
    for rel in [*repo.source_files, *repo.test_files, *repo.test_support]:
        if rel not in deleted_files:
            parts.append((repo.root / rel).read_text(errors="replace"))
    for rel in repo.config_files:
        parts.append((repo.root / rel).read_text(errors="replace"))
    return "\n".join(parts)


def _import_line(repo: Repo, cand: Candidate) -> str:
    rel, name = cand.feature
    if cand.kind == "module":
        return f"import {module_name(repo, rel)}"
    name = name.split(".")[0]  # a method group's class
    for package in repo.packages:
        init = (
            repo.root
            / (f"{repo.package_root}/" if repo.package_root else "")
            / package
            / "__init__.py"
        )
        if init.exists() and name in init.read_text():
            return f"from {package} import {name}"
    return f"from {module_name(repo, rel)} import {name}"


def process(job: Job) -> dict:
    """Build the task for `job.candidate`; returns a result record (never raises for a
    rejection: the reason is in the record)."""
    repo, cand = Repo.from_json(job.repo), Candidate.from_json(job.candidate)
    start = time.perf_counter()
    # An opaque directory name: paths end up in the venv (activate scripts, .pth files),
    # and the feature's name must not be readable there.
    cdir = Path(job.work_dir) / "cands" / hashlib.sha256(cand.id.encode()).hexdigest()[:12]
    shutil.rmtree(cdir, ignore_errors=True)
    cdir.mkdir(parents=True)
    record = {
        "candidate": cand.id,
        "kind": cand.kind,
        "feature": list(cand.feature),
        "difficulty": cand.difficulty,
    }
    clock = Clock()
    try:
        record |= _build(job, repo, cand, cdir, clock)
        record["status"] = "valid"
    except Rejected as why:
        record |= {
            "status": "rejected",
            "reason": str(why),
            "reason_key": why.reason.key,
            "validation": why.checks,
        }
    except SynthError as err:  # a failed install or git step: this candidate only
        record |= {"status": "rejected", "reason": f"error: {err}", "reason_key": "error"}
    finally:
        shutil.rmtree(cdir, ignore_errors=True)
        clock.lap("clean_up")
        record["seconds"] = round(time.perf_counter() - start, 2)
        record["phases"] = clock.seconds
    return record


_GRAPHS: dict[tuple[str, str], Graph] = {}


def _graph_of(repo: Repo) -> Graph:
    """`build_graph(repo)`, once per pristine repository in each worker process (the
    pristine tree never changes, and candidates only read the graph)."""
    key = (str(repo.root), repo.revision)
    if key not in _GRAPHS:
        _GRAPHS[key] = build_graph(repo)
    return _GRAPHS[key]


def _build(job: Job, repo: Repo, cand: Candidate, cdir: Path, clock: Clock) -> dict:
    settings = job.settings
    graph = _graph_of(repo)
    originals = {rel: (repo.root / rel).read_text() for rel in repo.source_files}
    deletion = plan_deletion(repo, graph, cand, originals)
    by_file, deleted_files, deleted_names = deletion.by_file, deletion.files, deletion.names
    reference = {rel: originals[rel] for rel in deleted_files}
    _check_not_a_copy(repo, cand, by_file, deleted_files, originals, settings.near_copy_ratio)
    clock.lap("plan")

    workspace = cdir / "workspace"
    shutil.copytree(repo.root, workspace, symlinks=True)
    canary = f"etude-canary-{uuid.uuid4().hex}"
    _write(
        workspace,
        {rel: plant_canary(originals[rel], names, canary) for rel, names in by_file.items()},
    )
    _commit_history(workspace)
    clock.lap("workspace")
    limits = Limits(wall_s=settings.suite_timeout_s)
    suite = dict(test_timeout_s=settings.test_timeout_s, limits=limits, plugins=job.plugins)
    shared = Path(job.work_dir) / "base" / "venv"
    if settings.shared_environment and shared.is_dir():
        # The baseline's venv, read-only; the workspace comes first on the path (the
        # editable install points at the baseline's workspace, which no longer exists).
        venv, own_venv = shared, False
        suite |= {"pythonpath": [workspace / repo.package_root], "venv_writable": False}
    else:
        venv, own_venv = cdir / "venv", True
        env.create(workspace, venv, extras=job.extras)
        clock.lap("venv")
    # The canary can only change the tests that run the feature or name a deleted name
    # (affected.py); with test subsets, only those run, and every test file when one fails
    # (a test can also depend on what earlier tests in the same process did).
    kept = set(job.kept)
    affected = kept
    if settings.test_subsets:
        affected = affected_tests(repo, job.kept, cand.tests, deletion.names) or kept
    outcome_only = {**suite, "extra_args": ["--tb=no"] if settings.quiet_failures else []}
    planted, planted_tests = _run_tests(workspace, venv, affected, job.kept, outcome_only)
    if planted_tests != kept and not _all_pass(planted, planted_tests):
        planted, planted_tests = _run_tests(workspace, venv, kept, job.kept, outcome_only)
    clock.lap("canary_run")
    broken = [
        t for t in job.kept if t in planted_tests and planted.outcome_of(t).outcome != "passed"
    ]
    if broken:
        raise Rejected(Reason("canary_breaks_tests", f"planting the canary broke {broken[0]}"))

    _write(workspace, deleted_files)
    remaining = [  # a deleted module is not expected to import
        module_name(repo, rel)
        for rel in repo.source_files
        if deleted_files.get(rel, "") is not None
    ]
    if job.importable is not None:  # nor one that did not import before the deletion
        remaining = [m for m in remaining if m in set(job.importable)]
    broken = failed_imports(workspace, venv, remaining, suite.get("pythonpath", ()))
    if broken:
        clock.lap("import_check")
        module, error = next(iter(broken.items()))
        raise Rejected(
            Reason("no_longer_imports", f"the package no longer imports: {module}: {error}")
        )
    # A task's environment installs the workspace (the coding env, the grader): a build
    # that imports the deleted code (a setup.py reading `mod.__version__`) cannot.
    unbuildable = env.install_error(workspace, cdir / "build_check")
    clock.lap("import_check")
    if unbuildable:
        raise Rejected(
            Reason("does_not_install", f"the workspace no longer installs: {unbuildable}")
        )
    # The first run covers every kept test file, in pytest's order: a test that fails only
    # because an earlier test no longer ran the feature (global random state, say) fails
    # here as it would in the grader's full run.
    first, _ = _run_tests(workspace, venv, kept, job.kept, suite)
    clock.lap("first_run")
    # The second run checks that the outcomes hold. With test subsets only the failing tests
    # and those that ran the feature run again (the others ran no deleted line, and the
    # baseline already ran every test twice), and every test file when an outcome differs
    # from the first run's (an order effect, or a flaky test); none when nothing fails
    # (rejected below).
    rerun = kept
    if settings.test_subsets:
        failing = {t for t in job.kept if first.outcome_of(t).outcome != "passed"}
        rerun = failing | (set(cand.tests) & kept) if failing else set()
    second = first
    if rerun:
        second, rerun = _run_tests(workspace, venv, rerun, job.kept, outcome_only)
        if rerun != kept and not _same_outcomes(first, second, rerun):
            second, rerun = _run_tests(workspace, venv, kept, job.kept, outcome_only)
        clock.lap("second_run")
    reason = check_collection(first, deleted_names)
    f2p, p2p, split_reason = split_outcomes(first, second, job.kept, rerun)
    reason = reason or split_reason or check_failure_reasons(first, f2p, deleted_names)
    if reason:
        raise Rejected(reason)

    hidden_tests = files_of(f2p) if settings.hide_tests else []
    for rel in hidden_tests:
        (workspace / rel).unlink()
    tokens = oracle_tokens(
        _deleted_code(graph, cand, originals),
        _remaining_text(repo, deleted_files),
        Path(job.environment_text).read_bytes(),
        [canary],
    )
    # A shared venv is the baseline's, read-only: nothing of the candidate can be in it.
    clock.lap("tokens")
    scrub_log = scrub(workspace, venv if own_venv else None, repo.packages)
    clock.lap("scrub")
    # Every view of every file of the baseline's venv is in the shipped text, which no
    # oracle token occurs in; a shared venv unchanged since that text was written is
    # therefore not searched again (the canary cannot be in it either: candidates mount
    # it read-only). A venv of the candidate's own, or one that changed, is searched.
    searched = {"workspace": workspace, "venv": venv}
    shipped_at = Path(job.environment_text).stat().st_mtime_ns
    if not own_venv and not changed_since(venv, shipped_at):
        del searched["venv"]
    findings = audit(searched, tokens)
    if findings:
        files = len({f.path for f in findings})
        where = f"{findings[0].describe()}; {len(findings)} in {files} file(s)"
        raise Rejected(Reason("leak", f"leak: {where}"))
    clock.lap("audit")

    staging = Path(job.work_dir) / "staged" / f"{repo.name}__{cand.id}"
    shutil.rmtree(staging, ignore_errors=True)
    hidden = staging / "hidden"
    for part, files in (("tests", test_tree_files(repo.root)), ("config", repo.config_files)):
        for rel in files:
            (hidden / part / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo.root / rel, hidden / part / rel)
    for rel, text in reference.items():
        (hidden / "reference" / rel).parent.mkdir(parents=True, exist_ok=True)
        (hidden / "reference" / rel).write_text(text)
    (hidden / "requirements.txt").write_text("\n".join(job.requirements) + "\n")
    clock.lap("stage")

    checks, stub_passing, discriminating = _solvability_and_discrimination(
        workspace,
        venv,
        hidden,
        cdir / "check",
        repo,
        originals,
        reference,
        by_file,
        f2p,
        p2p,
        outcome_only,
        deletion.guard,
        settings.measure_guard,
        settings.min_discriminating,
        min(settings.slow_test_s, settings.test_timeout_s),
        settings.test_subsets,
        clock,
    )
    shutil.copytree(workspace, staging / "workspace", symlinks=True)

    statement = problem_statement(
        cand.feature,
        originals[cand.feature[0]],
        _import_line(repo, cand),
        f2p,
        settings.reveal_signatures,
        kind=cand.kind,
        public=[name for _, name in cand.public],
    )
    reference_code = _deleted_code(graph, cand, originals)
    manifest = {
        "id": staging.name,
        "source": {"repository": repo.name, "origin": repo.source, "revision": repo.revision},
        "feature_kind": cand.kind,
        "deleted": _deleted_entries(repo, graph, cand),
        "modified_files": sorted(reference),
        "tests": {
            "fail_to_pass": f2p,
            "pass_to_pass": p2p,
            "stub_passing": stub_passing,
            "discriminating": discriminating,
            "hidden_files": hidden_tests,
        },
        "problem_statement": statement,
        "signatures_revealed": settings.reveal_signatures,
        "difficulty": {
            "score": cand.difficulty,
            "lines": cand.lines,
            "files": cand.files,
            "depth": cand.depth,
            "tests": len(cand.tests),
        },
        "validation": checks,
        "scrub": asdict(scrub_log),
        # The monitor's verbatim-recovery check reads these: tokens found only in the deleted
        # code (canary included). task.json lives beside the workspace, never inside it.
        "oracle_tokens": sorted(tokens),
        "audit": {
            "tokens": len(tokens),
            "token_kinds": dict(Counter(tokens.values())),
            "findings": [],
            "searched": sorted(searched),
        },
        "limits": {
            "test_timeout_s": settings.test_timeout_s,
            "slow_test_s": settings.slow_test_s,
            "min_discriminating": settings.min_discriminating,
            "near_copy_ratio": settings.near_copy_ratio,
        },
        # Loaded by `etude grade` from etude's tree (never the workspace): a test fails when
        # a target returns an always-equal object (etude/synth/plugin/etude_equality_guard.py).
        "equality_guard": {"plugin": "etude_equality_guard", "targets": deletion.guard},
        # How the grader runs pytest: autoloading off, these plugins loaded by name.
        "pytest": {"plugins": list(job.plugins)},
        "reference_sha256": hashlib.sha256(reference_code.encode()).hexdigest(),
    }
    write_manifest(staging, manifest)
    clock.lap("stage")
    return {
        "task_dir": str(staging),
        "dedupe_key": manifest["reference_sha256"],
        "fail_to_pass": len(f2p),
        "pass_to_pass": len(p2p),
        "audit_tokens": len(tokens),
    }


def _check_not_a_copy(
    repo: Repo,
    cand: Candidate,
    by_file: dict[str, set[str]],
    deleted_files: dict[str, str | None],
    originals: dict[str, str],
    threshold: float,
) -> None:
    """Raise Rejected when half or more of the deleted code (by normalized tokens) has a
    near copy in the package that remains (similarity.near_copy)."""
    deleted = []
    for rel, names in by_file.items():
        whole = cand.kind == "module" and rel == cand.feature[0]
        deleted += similarity.units(originals[rel], None if whole else set(names))
    remaining = []
    for rel in repo.source_files:
        text = deleted_files.get(rel, originals[rel])
        if text is not None:
            remaining += similarity.units(text)
    share, copies = similarity.near_copy(deleted, remaining, threshold)
    if share >= 0.5:
        why = f"{share:.0%} of the deleted code is a near copy of code that remains: " + "; ".join(
            copies[:3]
        )
        raise Rejected(Reason("near_copy", why))


def _reported(run, nodeid: str) -> bool:
    """Whether a run reported `nodeid`, or a collection error of its file."""
    return nodeid in run.tests or nodeid.split("::", 1)[0] in run.collect_errors


def _all_pass(run: SuiteRun, nodeids: set[str]) -> bool:
    return all(run.outcome_of(t).outcome == "passed" for t in nodeids)


def _same_outcomes(first: SuiteRun, second: SuiteRun, nodeids: set[str]) -> bool:
    """Whether each of `nodeids` passed in both runs or in neither."""
    passed = lambda run, t: run.outcome_of(t).outcome == "passed"  # noqa: E731
    return all(passed(first, t) == passed(second, t) for t in nodeids)


def _run_tests(
    workspace: Path, venv: Path, nodeids: set[str], kept: list[str], options: dict
) -> tuple[SuiteRun, set[str]]:
    """Run the kept tests `nodeids` (a file whose kept tests are all wanted runs whole, the
    others by node id; the whole files when an id goes unreported). Returns the run and
    the kept tests it ran."""
    by_file: dict[str, list[str]] = {}
    for nodeid in kept:
        by_file.setdefault(nodeid.split("::", 1)[0], []).append(nodeid)
    args = []
    for rel, ids in sorted(by_file.items()):
        wanted = [t for t in ids if t in nodeids]
        args += [rel] if len(wanted) == len(ids) else wanted
    run = run_suite(workspace, venv, args, **options)
    if all(_reported(run, t) for t in nodeids):
        return run, set(nodeids)
    files = files_of(nodeids)
    return run_suite(workspace, venv, files, **options), {
        t for t in kept if t.split("::", 1)[0] in files
    }


def _deleted_entries(repo: Repo, graph: Graph, cand: Candidate) -> list[dict]:
    entries = []
    if cand.kind == "module":
        entries.append(
            {"file": cand.feature[0], "name": module_name(repo, cand.feature[0]), "kind": "module"}
        )
    for rel, name in cand.entities:
        kind = "method" if "." in name else graph.definitions[(rel, name)].kind
        entries.append({"file": rel, "name": name, "kind": kind})
    return entries


def _solvability_and_discrimination(
    workspace,
    venv,
    hidden,
    check_dir,
    repo,
    originals,
    reference,
    by_file,
    f2p,
    p2p,
    suite,
    guard,
    measure_guard,
    min_discriminating,
    stub_timeout_s,
    subsets,
    clock,
) -> tuple[dict, list[str], list[str]]:
    """Score the reference restored into a copy of the scrubbed workspace (must be 1) and
    each trivial stub (must not pass every fail-to-pass test), all with the equality guard
    on `guard` as `etude grade` runs it; at least `min_discriminating` fail-to-pass tests
    must fail with every stub. Raises Rejected. Returns the scores, the fail-to-pass tests
    every stub passes (the grader's `fraction` leaves them out) and the discriminating
    ones. Stubs run with a per-test timeout of `stub_timeout_s`, on the fail-to-pass tests
    only (by node id with `subsets`, else their files). With `measure_guard`, the
    always-equal stub is also scored without the guard (recorded, not decisive)."""
    variants = {"reference": reference}
    for kind in STUB_BODIES:
        variants[f"stub_{kind}"] = {
            rel: stub(originals[rel], by_file[rel], kind) if rel in by_file else text
            for rel, text in reference.items()
        }
    if measure_guard:
        variants["unguarded_stub_always_equal"] = variants["stub_always_equal"]
    checks, failing, stub_passed = {}, None, []
    for label, files in variants.items():
        shutil.rmtree(check_dir, ignore_errors=True)
        prepare_workspace(workspace, check_dir, hidden)
        _write(check_dir, files)
        options = dict(
            cache=False,
            equality_guard=() if label.startswith("unguarded") else guard,
            # The copy comes first on the path, before the venv's editable install. Every
            # kept test ran within the slow-test limit at the baseline; a stub that makes
            # one hang fails it either way, so stubs need not wait longer.
            **{
                **suite,
                "pythonpath": [check_dir / repo.package_root],
                **({} if label == "reference" else {"test_timeout_s": stub_timeout_s}),
            },
        )
        if label == "reference":
            graded = run_suite(check_dir, venv, files_of(f2p + p2p), **options)
        else:
            # A stub is scored on the fail-to-pass tests only: with test subsets, they are
            # selected by node id, and their files run whole if any id went unreported.
            graded = run_suite(check_dir, venv, f2p if subsets else files_of(f2p), **options)
            if subsets and not all(_reported(graded, t) for t in f2p):
                graded = run_suite(check_dir, venv, files_of(f2p), **options)
        result = score(graded, f2p, p2p)
        checks[label] = {"fraction": result["fraction"], "binary": result["binary"]}
        if label.startswith("stub_"):
            stub_passed.append(
                {t for t in f2p if result["tests"][t]["outcome"] == "passed"},
            )
        clock.lap("reference_run" if label == "reference" else "stub_runs")
        if label == "reference" and result["binary"] != 1:
            failing = next(t for t, o in result["tests"].items() if o["outcome"] != "passed")
    shutil.rmtree(check_dir, ignore_errors=True)
    # Every variant is scored before deciding, so a rejection still records them all.
    if failing:
        why = f"restoring the reference does not pass {failing}"
        raise Rejected(Reason("reference_fails", why), checks)
    for label, check in checks.items():
        if label.startswith("stub_") and check["fraction"] == 1.0:
            why = f"the trivial stub {label} passes every fail-to-pass test"
            raise Rejected(Reason("stub_passes", why), checks)
    discriminating = [t for t in f2p if not any(t in passed for passed in stub_passed)]
    if len(discriminating) < min_discriminating:
        why = (
            f"{len(discriminating)} of {len(f2p)} fail-to-pass tests fail with every trivial "
            f"stub; at least {min_discriminating} must"
        )
        raise Rejected(Reason("few_discriminating_tests", why), checks)
    return checks, sorted(set.intersection(*stub_passed)), discriminating
