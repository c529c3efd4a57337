"""Sandboxed execution of repository code (see etude.sandbox.run)."""

from etude.sandbox.run import (
    MODE_ENV,
    MODES,
    Completed,
    Limits,
    available_modes,
    cpu_seconds_used,
    isolation,
    run,
)

__all__ = [
    "MODES",
    "MODE_ENV",
    "Completed",
    "Limits",
    "available_modes",
    "cpu_seconds_used",
    "isolation",
    "run",
]
