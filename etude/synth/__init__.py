"""Feature-deletion task synthesis: turn a Python repository with tests into verifiable
tasks (`etude synth`) and grade re-implementations against them (`etude grade`).

Pipeline modules, in order: discover, env, baseline, coverage, slice, delete, validate,
scrub, audit, task; candidate.py runs them for one candidate and pipeline.py for many.
"""

from pathlib import Path

EXAMPLE_REPO = Path(__file__).parent / "example_repo"
"""The shipped example repository: a small package with tests, for demos and tests."""
