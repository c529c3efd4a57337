"""The device a recipe's config names for its model, checked before anything runs, and the
Newton–Schulz precision Muon uses there."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def require_device(device: str, setting: str) -> None:
    """Raise ValueError when `device` (the value of the config's `setting`, named in the
    message) is "cuda" and torch sees no CUDA device."""
    import torch  # here: the recipes' modules load without torch until they run

    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{setting} = 'cuda' but torch sees no CUDA device")


def newton_schulz_dtype(device: str) -> torch.dtype:
    """Muon's Newton–Schulz precision for a model on `device`: bfloat16 on a GPU (as
    torch.optim.Muon), float32 on the CPU, where bfloat16 matmuls without hardware support
    are emulated: `benchmarks/results/ns_throughput.json` has batched Newton–Schulz 5x slower
    in bfloat16 than in float32 on 2 CPU cores, and an SFT step of every SmolLM2 layer on an
    AMD EPYC without AVX-512 took 502 s with bfloat16 against 53-80 s with float32."""
    import torch

    return torch.bfloat16 if device == "cuda" else torch.float32
