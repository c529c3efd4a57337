"""A curriculum for a small coding agent: feature-deletion tasks from the shipped example
repository and small real sdists (through `etude.synth.pipeline.synthesize`, the task format
unchanged), split into train and held-out by repository and by feature.

Layout of `--out DIR`:
    synth/              the pipeline's output (resumable: a rerun skips what is stored)
    train/<task id>/    training tasks (demonstrations and RL rollouts come from here)
    heldout/<task id>/  held-out tasks (evaluation only)
    curriculum.json     the manifest: sources, the split rule, task ids per split (written last)

The split is deterministic: every task of a repository named in `heldout_repositories` is
held out; within the other repositories, tasks are grouped by the file their feature is
deleted from (a module task and a class task of the same file share code, so they share a
split), and a group is held out when the hash of (seed, repository, file) falls under
`heldout_share`; a repository with two or more groups always keeps at least one group of
each split. Held-out tasks are never demonstrated: `refuse_heldout` checks a task directory
against the manifest of the curriculum it belongs to.

    etude curriculum --out runs/curriculum --sdist ~/.cache/etude/sdists/inflection-0.5.1.tar.gz
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from etude.synth import EXAMPLE_REPO
from etude.synth.pipeline import synthesize
from etude.synth.task import load_task

MANIFEST = "curriculum.json"
SPLITS = ("train", "heldout")


class HeldOutError(ValueError):
    """A held-out task offered where only training tasks may go (demonstrations)."""


@dataclass(frozen=True)
class SplitRule:
    """How tasks are split (see module doc)."""

    seed: int = 0
    heldout_share: float = 0.3
    heldout_repositories: tuple[str, ...] = ()


@dataclass
class Curriculum:
    """The manifest: `train` and `heldout` task ids, each task's group (repository and
    feature file), and what the curriculum was built from."""

    sources: list[str]
    rule: SplitRule
    groups: dict[str, str] = field(default_factory=dict)
    train: list[str] = field(default_factory=list)
    heldout: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {**asdict(self), "rule": asdict(self.rule)}


def task_group(task: dict) -> tuple[str, str]:
    """(repository, file of the first deleted definition): tasks that share it share code."""
    return task["source"]["repository"], task["deleted"][0]["file"]


def _unit(*parts: object) -> float:
    """A number in [0, 1) from a hash of `parts` (the same on every machine)."""
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


def split_tasks(tasks: dict[str, dict], rule: SplitRule) -> tuple[list[str], list[str]]:
    """(train ids, held-out ids) of `tasks` (id -> manifest) under `rule`."""
    by_repo: dict[str, dict[str, list[str]]] = {}
    for task_id, task in sorted(tasks.items()):
        repo, file = task_group(task)
        by_repo.setdefault(repo, {}).setdefault(file, []).append(task_id)
    train, heldout = [], []
    for repo, groups in sorted(by_repo.items()):
        if repo in rule.heldout_repositories:
            heldout += [t for ids in groups.values() for t in ids]
            continue
        files = sorted(groups, key=lambda f: _unit(rule.seed, repo, f))
        held = [f for f in files if _unit(rule.seed, repo, f) < rule.heldout_share]
        if len(files) >= 2:  # each split gets at least one group of this repository
            held = held[: len(files) - 1] or files[:1]
        for f in files:
            (heldout if f in held else train).extend(groups[f])
    return sorted(train), sorted(heldout)


def build_curriculum(
    out: Path,
    sdists: list[Path] = (),
    rule: SplitRule = SplitRule(),
    *,
    include_example: bool = True,
    max_candidates: int = 4,
    max_lines: int | None = None,
    workers: int = 2,
) -> Curriculum:
    """Synthesize tasks from the example repository (unless `include_example` is False)
    and `sdists` into `out/synth`, split them, copy them to `out/train` and `out/heldout`
    and write the manifest last (an interrupted build leaves no manifest). `max_candidates`
    and `max_lines` are the pipeline's (per repository; deleted lines per task)."""
    sources = ([EXAMPLE_REPO] if include_example else []) + [Path(s) for s in sdists]
    if not sources:
        raise ValueError("a curriculum needs at least one source (the example repo or sdists)")
    for source in sources:
        if not Path(source).exists():
            raise FileNotFoundError(f"curriculum source {source} does not exist")
    if not 0 <= rule.heldout_share < 1:
        raise ValueError(f"heldout_share must be in [0, 1), got {rule.heldout_share}")
    out = Path(out)
    (out / MANIFEST).unlink(missing_ok=True)  # the old split no longer holds while rebuilding
    synthesize(
        sources, out / "synth", workers=workers, max_candidates=max_candidates, max_lines=max_lines
    )
    found = {}
    for task_dir in sorted((out / "synth" / "tasks").iterdir()):
        if (task_dir / "task.json").is_file():
            found[task_dir.name] = load_task(task_dir)
    if not found:
        raise ValueError(f"no task was synthesized from {[str(s) for s in sources]}")
    train, heldout = split_tasks(found, rule)
    curriculum = Curriculum(
        sources=[str(s) for s in sources],
        rule=rule,
        groups={t: "/".join(task_group(found[t])) for t in sorted(found)},
        train=train,
        heldout=heldout,
    )
    for split, ids in (("train", train), ("heldout", heldout)):
        shutil.rmtree(out / split, ignore_errors=True)
        for task_id in ids:
            shutil.copytree(out / "synth" / "tasks" / task_id, out / split / task_id, symlinks=True)
    staging = out / (MANIFEST + ".tmp")
    staging.write_text(json.dumps(curriculum.to_json(), indent=2) + "\n")
    staging.rename(out / MANIFEST)
    return curriculum


def load_curriculum(root: Path) -> Curriculum:
    """The manifest of the curriculum at `root`; ValueError if there is none."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise ValueError(f"{root} is not a curriculum (no {MANIFEST}; build it first)")
    data = json.loads(path.read_text())
    return Curriculum(
        sources=data["sources"],
        rule=SplitRule(
            data["rule"]["seed"],
            data["rule"]["heldout_share"],
            tuple(data["rule"]["heldout_repositories"]),
        ),
        groups=data["groups"],
        train=data["train"],
        heldout=data["heldout"],
    )


def split_dirs(root: Path, split: str) -> list[Path]:
    """The task directories of one split of the curriculum at `root`."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    curriculum = load_curriculum(root)
    return [Path(root) / split / t for t in getattr(curriculum, split)]


def refuse_heldout(task_dirs: list[Path]) -> None:
    """Raise HeldOutError if any task directory is a held-out task: it lies in a
    `heldout/` directory, or its id is held out in the manifest of a curriculum it lies
    under (its split directory or the pipeline's `synth/tasks/`)."""
    for task_dir in task_dirs:
        task_dir = Path(task_dir).resolve()
        heldout = task_dir.parent.name == "heldout"
        for root in task_dir.parents[:3]:
            if (root / MANIFEST).is_file():
                heldout = heldout or task_dir.name in load_curriculum(root).heldout
        if heldout:
            raise HeldOutError(
                f"{task_dir} is a held-out task of the curriculum: held-out tasks are for "
                "evaluation and are never demonstrated (use the train split)"
            )


def main(args) -> int:
    """`etude curriculum --out DIR [--sdist SDIST ...] [...]`: build and summarize."""
    curriculum = build_curriculum(
        Path(args.out),
        [Path(s) for s in args.sdist],
        SplitRule(args.seed, args.heldout_share, tuple(args.heldout_repository)),
        include_example=not args.no_example,
        max_candidates=args.max_candidates,
        max_lines=args.max_lines,
        workers=args.workers,
    )
    print(
        f"{len(curriculum.train)} train and {len(curriculum.heldout)} held-out tasks in "
        f"{args.out} (manifest {Path(args.out) / MANIFEST})"
    )
    return 0
