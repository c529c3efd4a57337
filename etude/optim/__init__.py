"""Optimizers: Muon with per-head / per-expert Newton–Schulz, exact under sharding."""

from etude.optim.elementwise import momentum_direction
from etude.optim.muon import Muon, adjusted_lr
from etude.optim.newton_schulz import POLAR_EXPRESS, QUINTIC, newton_schulz, ns_flops
from etude.optim.sharded import StepStats

__all__ = [
    "POLAR_EXPRESS",
    "QUINTIC",
    "Muon",
    "StepStats",
    "adjusted_lr",
    "momentum_direction",
    "newton_schulz",
    "ns_flops",
]
