"""The device a recipe's config names for its model, checked before anything runs."""

from __future__ import annotations


def require_device(device: str, setting: str) -> None:
    """Raise ValueError when `device` (the value of the config's `setting`, named in the
    message) is "cuda" and torch sees no CUDA device."""
    import torch  # here: the recipes' modules load without torch until they run

    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{setting} = 'cuda' but torch sees no CUDA device")
