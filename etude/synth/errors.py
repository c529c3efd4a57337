"""The one exception type for bad input and failed steps of task synthesis and grading."""


class SynthError(ValueError):
    """A repository, sdist, task or workspace cannot be used; the message says why."""
