"""What a trajectory has established so far, for rules that depend on history: the
workspace and working directory, files the agent created or saw, caches its own runs
produced, its test runs, what it wrote. Rules read and extend one `Context` per trajectory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from etude.monitor.answers import TestCase
from etude.monitor.findings import Hit
from etude.monitor.task import Task

DEFAULT_WORKSPACE = "/workspace"


@dataclass
class Written:
    """Content the agent put into a file: whole (`full`) or a fragment (an edit)."""

    index: int
    path: str
    rel: str | None
    text: str
    full: bool


@dataclass
class Context:
    """What the trajectory has established so far, for rules that depend on history."""

    workspace: str
    cwd: str
    task: Task | None = None
    packages: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    existing: set[str] = field(default_factory=set)
    produced: set[str] = field(default_factory=set)
    stashed: bool = False
    seen_output: list[str] = field(default_factory=list)
    test_literals: set[str] = field(default_factory=set)
    # what each test the agent saw gives the code under test and expects back
    test_cases: list[TestCase] = field(default_factory=list)
    # what the user and system messages said: the task statement
    prompt: str = ""
    test_runs: list[tuple[int, str]] = field(default_factory=list)
    # message indices of test runs that selected some tests only (`path::name`, `-k`)
    partial_runs: set[int] = field(default_factory=set)
    # message indices of test runs given test files or test ids to run (`tests/test_x.py`)
    selected_runs: set[int] = field(default_factory=set)
    written: list[Written] = field(default_factory=list)
    own_definitions: set[str] = field(default_factory=set)
    # a finding already named where deleted code came from (history, artifact, download...)
    source_found: bool = False
    # it downloaded or installed a published copy of the project: reading that copy later
    # is judged by the download
    fetched_project: bool = False
    git_aliases: dict[str, str] = field(default_factory=dict)
    # tag names that listings of refs showed: each names a revision other than the work tree
    git_tags: set[str] = field(default_factory=set)
    # (message index, option) when the latest test run left tests out on purpose
    last_run_excluded: tuple[int, str] | None = None
    # `PYTEST_ADDOPTS` as the agent's shell exported it: every later run takes its options
    addopts: str = ""
    # files a test run's output was redirected to
    test_logs: set[str] = field(default_factory=set)
    # symbolic links the agent made: link path -> the path it points to
    links: dict[str, str] = field(default_factory=dict)
    # environment variables whose path values a tool output showed (`env`, /proc/N/environ)
    env_seen: dict[str, str] = field(default_factory=dict)
    # (message index, text) of what the agent wrote down about its work for others to read
    # (a commit message): a claim there is judged like one in its answer
    reports: list[tuple[int, str]] = field(default_factory=list)
    # (path, the agent's own?) for every file the current action reads
    action_reads: list[tuple[str, bool]] = field(default_factory=list)

    def copied_literals(self) -> frozenset[str]:
        """The tests' literals that only the tests showed: a value the task statement also
        names (`per month or per quarter`) is the task's vocabulary, not a copied answer."""
        return frozenset(v for v in self.test_literals if not self._prompt_names(v))

    def copied_cases(self) -> list[TestCase]:
        """The test cases with the expected values the task statement names left out: a
        value it spells (`'month'`) may be returned by any implementation."""
        return [
            replace(c, expected=tuple(e for e in c.expected if not self._prompt_names(e)))
            for c in self.test_cases
        ]

    def _prompt_names(self, value: object) -> bool:
        text = str(value)
        return isinstance(value, str | int | float) and bool(
            re.search(rf"(?<!\w){re.escape(text)}(?!\w)", self.prompt)
        )


@dataclass
class Located:
    """A Hit placed at a message, with the text its evidence is cut from."""

    hit: Hit
    index: int
    text: str
