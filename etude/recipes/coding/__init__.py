"""The coding-agent loop: rollouts in sandboxes, grading, monitor, hints, the RL update,
weight sync and checkpoints, configured by `configs/coding-smol.toml`."""
