"""Many episodes at once: each in its own sandboxed workspace, written to a JSONL file as
soon as it finishes.

A task that fails validation, an environment that cannot be built, a backend that fails
or a budget that runs out end that episode only: it is recorded with `end` and `error` and
the others go on. Lines are appended and flushed one at a time under a lock, so an
interrupted run keeps every episode finished before the interruption.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from etude.envs.coding import Backend, Budget, CodingEnv, EnvSettings, Episode, run_episode
from etude.rl.trajectory import JsonlWriter


@dataclass(frozen=True)
class Job:
    """One episode to run: the task directory and the directory its workspace goes in."""

    task_dir: Path
    episode_dir: Path
    group: int


def _one(job: Job, backend: Backend, settings: EnvSettings, budget: Budget) -> Episode:
    start = time.perf_counter()
    try:
        env = CodingEnv.for_task(job.task_dir, job.episode_dir, settings)
    except Exception as err:  # recorded, not lost: the others go on
        return Episode(
            id=uuid.uuid4().hex[:12],
            task_id=Path(job.task_dir).name,
            messages=[],
            end="error",
            error=f"environment could not start: {type(err).__name__}: {err}",
            seconds=time.perf_counter() - start,
        )
    try:
        episode = run_episode(env, backend, budget)
    finally:
        env.close(keep_workspace=True)  # the grader reads the workspace
    episode.seconds = time.perf_counter() - start
    return episode


def run_rollouts(
    jobs: list[Job],
    backend: Backend,
    out: Path,
    *,
    settings: EnvSettings = EnvSettings(),  # noqa: B008 (frozen dataclass)
    budget: Budget = Budget(),  # noqa: B008
    concurrency: int = 2,
    on_done: Callable[[Episode], None] | None = None,
) -> list[tuple[Job, Episode]]:
    """Run every job with up to `concurrency` episodes at once; append each finished
    episode's trajectory (plus its `group`) to `out`. Returns (job, episode) in job order."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    writer = JsonlWriter(out)
    results: dict[int, Episode] = {}
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = {
            pool.submit(_one, job, backend, settings, budget): i for i, job in enumerate(jobs)
        }
        for future in as_completed(futures):
            i = futures[future]
            episode = future.result()  # _one records every failure in the episode
            episode.extra["group"] = jobs[i].group
            writer.write(episode.to_record())
            results[i] = episode
            if on_done is not None:
                on_done(episode)
    return [(job, results[i]) for i, job in enumerate(jobs)]
