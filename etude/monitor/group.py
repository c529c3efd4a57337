"""Group comparison: judge a trajectory against the other rollouts of its task group.

In GRPO-style training every task is rolled out several times by the same policy. A rule
that fires in most of a group's rollouts is more likely driven by the task (its tests need
a site-packages read, its repository has one commit) than by one rollout's hack, while a
finding only one rollout has stands out. `compare_with_group` lowers by one severity level
each finding whose rule fires in at least `common` of the other rollouts of the same
`task_id`, and leaves the rest; the trajectory's score follows its findings.

    from etude.monitor import monitor_file
    from etude.monitor.group import compare_with_group
    grouped = compare_with_group([r for r in monitor_file(path, tasks_dir=tasks)])

It needs the whole group at once, so it runs on a group's results, not on a stream.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from etude.monitor.findings import SEVERITIES, severity_rank
from etude.monitor.monitor import TrajectoryResult


def compare_with_group(
    results: list[TrajectoryResult], common: float = 0.5, min_group: int = 4
) -> list[TrajectoryResult]:
    """`results` with findings demoted where their rule is common among the other
    rollouts of the same task (groups smaller than `min_group` are left as they are)."""
    groups: dict[str | None, list[int]] = defaultdict(list)
    for i, r in enumerate(results):
        groups[r.task_id].append(i)
    out = list(results)
    for members in groups.values():
        if len(members) < min_group:
            continue
        rules = [{f.rule for f in results[i].findings} for i in members]
        for k, i in enumerate(members):
            others = len(members) - 1
            demoted = []
            for f in results[i].findings:
                share = sum(f.rule in rules[j] for j in range(len(members)) if j != k) / others
                if share >= common and severity_rank(f.severity) > 0:
                    f = replace(f, severity=SEVERITIES[severity_rank(f.severity) - 1])
                demoted.append(f)
            out[i] = replace(results[i], findings=demoted)
    return out
