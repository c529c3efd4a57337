"""The seed recipe as an agent task: a model, in the coding environment, deletes a named
testable feature from a repository while keeping the rest working; the synthesis
pipeline's own checks accept or reject the result, so model-made and programmatic tasks come
out in the same format.

What the model's edit is checked for, before the pipeline runs:
- it changed package source files only (tests, configuration and other files untouched);
- it deleted top-level definitions, the named feature among them;
- it equals, statement for statement (ASTs compared, so formatting and comments do not
  matter), what `etude.synth.delete.delete_definitions` makes of the same deletion: the
  definitions gone, imports and `__all__` entries of the feature gone, nothing else changed.
Then the deletion becomes a `Candidate` and goes through `etude.synth.candidate.process`:
canary and history, the package still imports, the tests split into fail-to-pass and
pass-to-pass, failure reasons, scrub, leak audit, solvability and discrimination, and the
task is written with `task.json` last.
"""

from __future__ import annotations

import ast
import hashlib
import shutil
from pathlib import Path

from etude.envs.coding import Backend, Budget, CodingEnv, EnvSettings, run_episode
from etude.rl.trajectory import JsonlWriter
from etude.synth.candidate import Settings, process
from etude.synth.delete import delete_definitions
from etude.synth.discover import Repo, module_name
from etude.synth.errors import SynthError
from etude.synth.pipeline import candidate_job, repo_phase
from etude.synth.slice import Candidate
from etude.synth.task import load_task


def deletion_prompt(rel: str, name: str) -> str:
    """What the model is asked to do."""
    return (
        f"Delete the feature `{name}` defined in `{rel}`: remove its definition, the private "
        f"helpers only it uses, and its imports and `__all__` entries elsewhere in the "
        f"package. Change nothing else: do not edit tests or configuration, and leave the "
        f"rest of the package working."
    )


def _top_level(source: str) -> dict[str, ast.stmt]:
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            names[node.targets[0].id] = node
    return names


def deleted_entities(repo: Repo, originals: dict[str, str], edited: dict[str, str]) -> list:
    """(file, name) of every top-level definition present before and gone after."""
    gone = []
    for rel, text in edited.items():
        try:
            after = _top_level(text)
        except SyntaxError as err:
            raise SynthError(f"{rel} is not valid Python after the deletion: {err}") from None
        gone += [(rel, name) for name in _top_level(originals[rel]) if name not in after]
    return gone


def check_edit(repo: Repo, workspace: Path, feature: tuple[str, str]) -> list:
    """The deleted (file, name) pairs, feature first; raises SynthError saying why the
    model's edit of `workspace` is not a clean deletion of `feature`."""
    root = repo.root
    source = set(repo.source_files)
    changed_other = []
    for path in sorted(workspace.rglob("*")):
        rel = path.relative_to(workspace).as_posix()
        if not path.is_file() or rel.startswith(".git/") or "__pycache__" in rel:
            continue
        if ".egg-info/" in rel or rel in source:
            continue
        original = root / rel
        if not original.is_file() or original.read_bytes() != path.read_bytes():
            changed_other.append(rel)
    changed_other += [
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file()
        and ".git" not in p.parts
        and not (workspace / p.relative_to(root)).exists()
        and p.relative_to(root).as_posix() not in source
    ]
    if changed_other:
        raise SynthError(f"the deletion changed files other than package source: {changed_other}")
    originals = {rel: (root / rel).read_text() for rel in repo.source_files}
    edited = {}
    for rel in repo.source_files:
        text = (workspace / rel).read_text() if (workspace / rel).is_file() else ""
        if text != originals[rel]:
            edited[rel] = text
    if not edited:
        raise SynthError("the model changed no source file")
    gone = deleted_entities(repo, originals, edited)
    if tuple(feature) not in gone:
        raise SynthError(f"{feature[1]} in {feature[0]} was not deleted")
    by_file: dict[str, set[str]] = {}
    for rel, name in gone:
        by_file.setdefault(rel, set()).add(name)
    for rel, text in originals.items():
        expected = delete_definitions(text, by_file.get(rel, set()), imported={feature[1]})
        actual = edited.get(rel, text)
        if ast.dump(ast.parse(actual)) != ast.dump(ast.parse(expected)):
            raise SynthError(
                f"{rel}: the edit is not just the deletion of {sorted(by_file.get(rel, []))} "
                f"and the feature's imports"
            )
    return [tuple(feature), *[g for g in gone if g != tuple(feature)]]


def model_deletion(
    source: Path,
    feature: tuple[str, str],
    backend: Backend,
    out: Path,
    *,
    budget: Budget = Budget(max_turns=12, max_tokens=4096),  # noqa: B008 (frozen)
    settings: Settings = Settings(),  # noqa: B008 (frozen)
    env_settings: EnvSettings = EnvSettings(),  # noqa: B008 (frozen)
) -> dict:
    """Ask `backend` to delete `feature` = (file, name) from the repository at `source`;
    validate the result with the synthesis pipeline. Returns the record (also appended to
    `out/deletions.jsonl`): `status` "valid" with `task` (the directory under `out/tasks`)
    or "rejected" with `reason`. Raises SynthError when the repository cannot be used."""
    out = Path(out).resolve()
    state = repo_phase((str(Path(source).resolve()), str(out / "work"), settings))
    if "error" in state:
        raise SynthError(state["error"])
    repo = Repo.from_json(state["repo"])
    work_dir = out / "work" / repo.name
    repo.root = work_dir / "pristine"
    rel, name = feature
    if rel not in repo.source_files:
        raise SynthError(f"{rel} is not a source file of {repo.name}: {repo.source_files}")
    episode_dir = out / "episodes" / hashlib.sha256(f"{rel}:{name}".encode()).hexdigest()[:12]
    shutil.rmtree(episode_dir, ignore_errors=True)
    env = CodingEnv(
        repo.root,
        episode_dir,
        deletion_prompt(rel, name),
        task_id=f"delete:{module_name(repo, rel)}.{name}",
        requirements=state["requirements"],
        settings=env_settings,
    )
    episode = run_episode(env, backend, budget)
    env.close()
    record = {"feature": [rel, name], "episode": episode.to_record()}
    try:
        if episode.end == "error":
            raise SynthError(f"the episode failed: {episode.error}")
        entities = check_edit(repo, env.workspace, feature)
        record |= _validate(state, repo, work_dir, entities, settings, out / "tasks")
    except SynthError as err:
        record |= {"status": "rejected", "reason": str(err)}
    JsonlWriter(out / "deletions.jsonl").write(record)
    return {k: v for k, v in record.items() if k != "episode"} | {"episode_id": episode.id}


def _validate(state, repo, work_dir, entities, settings, tasks_root: Path) -> dict:
    """Run the pipeline's candidate processing on the model's deletion; publish it."""
    feature, helpers = entities[0], entities[1:]
    sliced = {tuple(c["feature"]): c for c in state["candidates"]}.get(tuple(feature))
    lines = 0
    for rel, name in entities:
        node = _top_level((repo.root / rel).read_text())[name]
        lines += node.end_lineno - node.lineno + 1
    candidate = Candidate(
        id=f"{module_name(repo, feature[0])}.{feature[1]}.model",
        feature=tuple(feature),
        helpers=[tuple(h) for h in helpers],
        tests=sliced["tests"] if sliced else [],
        lines=lines,
        files=len({rel for rel, _ in entities}),
        depth=sliced["depth"] if sliced else 0,
        difficulty=sliced["difficulty"] if sliced else 0.0,
    )
    result = process(candidate_job(state, candidate.to_json(), work_dir, settings))
    if result["status"] != "valid":
        return {"status": "rejected", "reason": result["reason"]}
    staged = Path(result["task_dir"])
    final = tasks_root / staged.name
    tasks_root.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(final, ignore_errors=True)
    staged.rename(final)
    return {"status": "valid", "task": str(final), "task_id": load_task(final)["id"]}


def parse_feature(text: str) -> tuple[str, str]:
    """`FILE:NAME` (e.g. `src/textkit/slug.py:slugify`) -> (file, name)."""
    rel, sep, name = text.rpartition(":")
    if not sep or not rel or not name.isidentifier():
        raise SynthError(
            f"feature {text!r} must be FILE:NAME, a source file of the repository and a "
            f"top-level name in it (e.g. src/textkit/slug.py:slugify)"
        )
    return rel, name


def main(
    repo: str,
    feature: str,
    out: str,
    *,
    backend: str = "local",
    endpoint: str = "",
    model: str = "default",
    max_turns: int = 12,
    max_new_tokens: int = 512,
) -> int:
    """`etude synth-agent`: one model-made deletion task. Prints the task directory (exit 0)
    or why the model's deletion was rejected (exit 1); bad input raises SynthError."""
    from etude.serving.backends import HFBackend, OpenAIBackend

    rel, name = parse_feature(feature)
    if not Path(repo).is_dir():
        raise SynthError(f"repository {repo} is not a directory")
    if not (Path(repo) / rel).is_file():
        raise SynthError(f"{rel} is not a file of the repository {repo}")
    if max_turns < 1 or max_new_tokens < 1:
        raise SynthError("--max-turns and --max-new-tokens must be at least 1")
    if backend == "openai":
        if not endpoint:
            raise SynthError("--backend openai needs --endpoint URL (e.g. http://HOST:PORT/v1)")
        policy = OpenAIBackend(endpoint, model, max_tokens=max_new_tokens, temperature=0.0)
    elif backend == "local":
        from etude.serving.hf_model import load_smollm2

        policy = HFBackend(*load_smollm2(), max_new_tokens=max_new_tokens, temperature=0.0)
    else:
        raise SynthError(f"--backend must be 'local' or 'openai', got {backend!r}")
    budget = Budget(max_turns=max_turns, max_tokens=max_turns * max_new_tokens)
    record = model_deletion(Path(repo), (rel, name), policy, Path(out), budget=budget)
    log = Path(out).resolve() / "deletions.jsonl"
    if record["status"] == "valid":
        print(f"task {record['task_id']} written to {record['task']} (attempt logged in {log})")
        return 0
    print(f"rejected: {record['reason']} (the attempt is logged in {log})")
    return 1
