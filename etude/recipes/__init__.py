"""Applications built on the library packages: ToolGrid training and its experiment
(`toolgrid`), the coding-agent loop (`coding`), model-made deletion tasks (`synth_agent`) and
the `etude rl` command (`cli`). Library packages never import from here."""
