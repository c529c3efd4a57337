"""ToolGrid: the tiny byte policy, its warm start, RL training with targeted textual feedback,
the hint-reading check and the multi-seed experiment."""
