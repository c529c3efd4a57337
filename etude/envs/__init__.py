"""Agent environments: rollouts of a policy on tasks, producing Chat Completions trajectories."""
