"""Reward-hacking monitor for agent trajectories (see docs/monitor.md)."""

from etude.monitor.findings import CATEGORIES, SEVERITIES, ZEROING_SEVERITY, Finding
from etude.monitor.judge import ChatJudge
from etude.monitor.monitor import TrajectoryResult, monitor_file, monitor_trajectory
from etude.monitor.task import Task, load_task
from etude.monitor.trajectory import InputProblem, ScannedTrajectory, parse_line, read_trajectories

__all__ = [
    "CATEGORIES",
    "SEVERITIES",
    "ZEROING_SEVERITY",
    "ChatJudge",
    "Finding",
    "InputProblem",
    "ScannedTrajectory",
    "Task",
    "TrajectoryResult",
    "load_task",
    "monitor_file",
    "monitor_trajectory",
    "parse_line",
    "read_trajectories",
]
