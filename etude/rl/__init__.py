"""Targeted textual feedback: RL for multi-turn tool-using agents where hinted turns get an
on-policy distillation KL toward the same model reading the hint (see docs/textual-feedback.md).
"""
