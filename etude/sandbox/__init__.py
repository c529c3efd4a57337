"""Sandboxed execution of repository code (see etude.sandbox.run)."""

from etude.sandbox.run import Completed, Limits, cpu_seconds_used, isolation, run

__all__ = ["Completed", "Limits", "cpu_seconds_used", "isolation", "run"]
