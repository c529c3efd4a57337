"""Dual-mesh HSDP: independent FSDP2 layouts for dense and expert weights, with expert and
context parallelism on the same ranks. See docs/dual-mesh.md."""

from etude.parallel.fsdp import parallelize
from etude.parallel.layout import Layout, LayoutError, gradient_reductions
from etude.parallel.mesh import Meshes, build_meshes

__all__ = ["Layout", "LayoutError", "Meshes", "build_meshes", "gradient_reductions", "parallelize"]
