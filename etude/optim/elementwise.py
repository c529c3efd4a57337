"""Muon's elementwise work as two passes over memory per parameter, and their byte count.

1. `momentum_direction`: read the gradient and the momentum buffer; write the advanced
   buffer and the direction to orthogonalize, already in the Newton–Schulz dtype.
2. `apply_update`: read the parameter and its orthogonalized update; write the decayed,
   updated parameter.

In a group spread over replicas the first pass comes in two (`momentum_direction_only`
over the elements this replica orthogonalizes, `momentum_advance` over the whole shard),
since the replicas' exchange overwrites the other elements' directions: only the part NS
reads waits before it, the rest runs beside it.

Each is one expression. Eagerly (the CPU path) it runs op by op, equal to the unfused
lerp-based reference to float rounding (the tests bound it at 1e-6 in fp32); under
`torch.compile` (the default on CUDA: `fused(fn)`) inductor turns each into one kernel,
which is what `element_bytes` counts, with the copies to and from Newton–Schulz that the
passes cannot do. Sharded Muon calls them once per part of a parameter's local shard
(`sharded.DataPath`): outside groups spread over replicas the momentum pass writes each
run of pieces straight into the NS stacks or send buffer and the update reads it from the
NS results or send buffer, with views of the gradient, buffer and parameter located alike.
Floats in arithmetic stay symbolic, so a changing
learning rate does not recompile, and shapes are dynamic, so one compiled kernel per tensor
rank serves every parameter. `JustInTime` issues both per parameter as Newton–Schulz
reaches it, on side streams on CUDA, so that they overlap it, and gives the sharded
runtime's copies that need no NS of their own side streams too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor


def momentum_direction(
    grad: Tensor, buf: Tensor, momentum: float, nesterov: bool, out: Tensor
) -> None:
    """Advance `buf` in place (an EMA of gradients, `buf <- buf + (1 - momentum)(grad - buf)`)
    and write the direction to orthogonalize into `out` (in its dtype, the NS dtype):
    `grad` blended toward the new buffer (Nesterov) or the buffer itself. Elementwise, so a
    local shard, or any view of it, is updated exactly as the full tensor would be. `out`
    is a view kept from step to step (sharded Muon's direction buffer, or a run of pieces
    in an NS stack or send buffer, located once per plan) of `grad`'s shape."""
    # Written out rather than as lerp: dynamo specializes lerp's weight, so a momentum
    # schedule would recompile every step, but leaves a float in arithmetic symbolic.
    buf.copy_(buf + (grad - buf) * (1 - momentum))
    out.copy_(grad + (buf - grad) * momentum if nesterov else buf)


def momentum_direction_only(
    grad: Tensor, buf: Tensor, momentum: float, nesterov: bool, out: Tensor
) -> None:
    """Write into `out` the direction `momentum_direction` writes, leaving `buf` as it is:
    the advanced buffer is the same expression, kept in registers. With
    `momentum_advance` run after it on the same elements the two give the bits of
    `momentum_direction` (a spread group's elements whose directions NS reads)."""
    advanced = buf + (grad - buf) * (1 - momentum)
    out.copy_(grad + (advanced - grad) * momentum if nesterov else advanced)


def momentum_advance(grad: Tensor, buf: Tensor, momentum: float) -> None:
    """Advance `buf` in place as `momentum_direction` does, writing no direction (the
    elements of a spread group's shard whose directions the replicas' exchange brings)."""
    buf.copy_(buf + (grad - buf) * (1 - momentum))


def apply_update(param: Tensor, update: Tensor, decay: float, step: float) -> None:
    """`param <- decay * param - step * update`, in place (decoupled weight decay, then the
    orthogonalized update scaled by the adjusted learning rate)."""
    param.mul_(decay).sub_(update * step)  # not add_(alpha=...): alpha is specialized


class SideStreams(NamedTuple):
    """The CUDA streams `JustInTime` issues work on beside the current one."""

    momentum: torch.cuda.Stream  # momentum passes
    update: torch.cuda.Stream  # updates, and the work `aside` gives it
    load: torch.cuda.Stream  # copies into a job's NS stacks (`ahead`)
    store: torch.cuda.Stream  # copies out of a job's NS results, its backward (`behind`)


class JustInTime:
    """One Muon step's two passes per parameter, issued as the Newton–Schulz runtime reaches
    each parameter (`sharded.orthogonalize`'s `prepare`, `advance` and `finished`), so
    that on CUDA they run beside the Newton–Schulz of other parameters instead of before
    and after all of it (Muon's `overlap_elementwise`), and the side streams
    `orthogonalize` gives its copies to (`aside`, `ahead`, `behind`).

    `momentum[i]` is parameter i's momentum pass (it fills the parameter's direction, in its
    direction buffer or straight in the NS stacks and send buffers), `advance[i]` the
    advance of its momentum buffer for a parameter where that is a pass of its own (a
    spread group's: `momentum_advance`), `update[i]` its update from the orthogonalized
    direction. With `streams` (CUDA) a momentum pass runs on the momentum stream and the
    current stream waits for it before Newton–Schulz or a transfer touches that direction;
    an update runs on the update stream after an event recorded on the stream that issued
    the last write into its results (NS, a copy, or the wait for a transfer), so that an
    update waiting for its results never holds back a later parameter's momentum pass.
    Without (CPU) each runs at once, in the same order. A parameter's passes cover buffers
    of several jobs, so the jobs whose parameters' passes write into them own their NS
    stacks. Either way a parameter's passes are the same ops on the same tensors as in the
    sequential step, and no pass reads what another parameter's pass writes, so the
    results are bit-identical.
    """

    def __init__(
        self,
        momentum: list[Callable[[], None]],
        advance: dict[int, Callable[[], None]],
        update: list[Callable[[], None]],
        streams: SideStreams | None = None,
    ) -> None:
        if len(momentum) != len(update) or not set(advance) <= set(range(len(update))):
            raise ValueError(
                f"{len(momentum)} momentum passes, {len(update)} updates and advances of "
                f"parameters {sorted(advance)}"
            )
        self._momentum, self._advance, self._update = momentum, advance, update
        self._streams = streams
        self._prepared: set[int] = set()
        self._advanced: set[int] = set()
        self._finished: set[int] = set()
        if streams is not None:
            self._main = torch.cuda.current_stream(streams.momentum.device)
            for stream in streams:  # gradients and parameters were last written there
                stream.wait_stream(self._main)

    def prepare(self, params: tuple[int, ...]) -> None:
        """Run the momentum pass of each of `params` not yet run; on CUDA the current stream
        then waits for it."""
        for i in params:
            if i in self._prepared:
                continue
            self._prepared.add(i)
            if self._streams is None:
                self._momentum[i]()
                continue
            with torch.cuda.stream(self._streams.momentum):
                self._momentum[i]()
            done = torch.cuda.Event()
            done.record(self._streams.momentum)
            self._main.wait_event(done)

    def advance(self, params: tuple[int, ...]) -> None:
        """Run the momentum buffer's advance of each of `params`, on the current stream
        (`orthogonalize` issues it under `aside`, whose stream has waited for the current
        one, and so for these parameters' momentum passes, which read the buffer first)."""
        for i in params:
            if i not in self._advance:
                raise RuntimeError(f"parameter {i}: its momentum buffer has no advance of its own")
            if i not in self._prepared or i in self._advanced:
                raise RuntimeError(f"parameter {i}: advance issued before its momentum or twice")
            self._advanced.add(i)
            self._advance[i]()

    def finished(self, i: int) -> None:
        """Run parameter i's update: its outputs hold the orthogonalized update (on CUDA,
        once the work issued so far on the current stream is done)."""
        if i not in self._prepared or i in self._finished:
            raise RuntimeError(f"parameter {i}: update issued before its momentum or twice")
        self._finished.add(i)
        if self._streams is None:
            self._update[i]()
            return
        written = torch.cuda.Event()
        written.record()
        self._streams.update.wait_event(written)
        with torch.cuda.stream(self._streams.update):
            self._update[i]()

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """Issue work that may wait for a transfer without holding up the current stream
        (the buffers' advance, the replicas' exchange, its unpack and the updates after it):
        on CUDA on the update stream, after the current stream's work issued so far; else
        as it comes."""
        with self._after_main(None if self._streams is None else self._streams.update):
            yield

    @contextlib.contextmanager
    def ahead(self) -> Iterator[None]:
        """Issue work the current stream needs next but which need not wait for its earlier
        work (a job's wait for its forward transfer and its loads into its own NS stacks):
        on CUDA on the load stream, the current stream waiting for it afterwards; else as it
        comes."""
        if self._streams is None:
            yield
            return
        with torch.cuda.stream(self._streams.load):
            yield
        done = torch.cuda.Event()
        done.record(self._streams.load)
        self._main.wait_event(done)

    @contextlib.contextmanager
    def behind(self) -> Iterator[None]:
        """Issue work that follows the current stream's work issued so far and that nothing
        on it waits for (a job's stores out of its own NS results, its backward transfer):
        on CUDA on the store stream; else as it comes."""
        with self._after_main(None if self._streams is None else self._streams.store):
            yield

    @contextlib.contextmanager
    def _after_main(self, stream: torch.cuda.Stream | None) -> Iterator[None]:
        if stream is None:
            yield
            return
        stream.wait_stream(self._main)
        with torch.cuda.stream(stream):
            yield

    def close(self) -> None:
        """Check every parameter was advanced where it has one and updated; on CUDA the
        current stream waits for every side stream (the next forward pass reads the
        parameters)."""
        if len(self._finished) != len(self._update):
            missing = sorted(set(range(len(self._update))) - self._finished)
            raise RuntimeError(f"parameters {missing} were never updated")
        if len(self._advanced) != len(self._advance):
            missing = sorted(set(self._advance) - self._advanced)
            raise RuntimeError(f"parameters {missing}: momentum buffers never advanced")
        if self._streams is not None:
            for stream in self._streams:
                self._main.wait_stream(stream)


_COMPILED: dict[Callable, Callable] = {}


def fused(fn: Callable) -> Callable:
    """`fn` compiled into one kernel per call (cached): dynamic shapes, full graph."""
    if fn not in _COMPILED:
        _COMPILED[fn] = torch.compile(fn, dynamic=True, fullgraph=True)
    return _COMPILED[fn]


@dataclass(frozen=True)
class ElementBytes:
    """HBM bytes of one Muon step's elementwise work per element of each count the planner
    makes per rank (`plan.predict` multiplies them):

    - local: an element of the rank's shards, read and written by the two passes;
    - update: the part of `local` the second pass (the update) moves, the rest being the
      momentum pass's (`JustInTime` issues the two at different times);
    - direction, advance: the momentum pass of a group spread over replicas, in two: a
      direction written without the buffer, over the elements of the units the rank's
      replica orthogonalizes, and the buffer's advance, over every local element (such an
      element then moves advance + update, plus direction where its replica runs it);
    - moved: an element copied on its way to a Newton–Schulz input or back (read and
      write, `ns_bytes` each; `sharded.orthogonalize` says which copies there are: those
      the passes do not do themselves);
    - owned: an element of a unit the rank orthogonalizes, whatever its method;
    - normalized: an element of a unit it orthogonalizes with the standard iteration,
      which takes the Frobenius norm in one pass and scales by it in another (the Gram
      iteration takes the norm from its Gram matrix's trace and scales the small matrix).
    """

    local: int
    update: int
    direction: int
    advance: int
    moved: int
    owned: int
    normalized: int


def element_bytes(param_bytes: int, ns_bytes: int, fused: bool) -> ElementBytes:
    """The bytes of what Muon runs, for parameters, gradients and momentum of `param_bytes`
    (fp32: 4) and the NS dtype of `ns_bytes` (bf16: 2); Nesterov on:

    - fused passes: pass 1 reads grad and buffer and writes buffer and direction (3p + n),
      pass 2 reads parameter and update and writes the parameter (2p + n): 5p + 2n;
    - unfused (one kernel per op): buffer `lerp_` 3p, Nesterov `lerp` 3p, cast to the NS
      dtype p + n, weight decay `mul_` 2p, `add_` of the update 2p + n: 11p + 2n;
    - of those, the update pass: 2p + n fused, 4p + n unfused;
    - the momentum pass split: the direction alone reads grad and buffer and writes the
      direction, 2p + n fused (unfused: the buffer's `lerp` into a new tensor 3p, the
      Nesterov `lerp` 3p, the cast p + n: 7p + n), the advance alone reads both and
      writes the buffer, 3p either way;
    - each copy reads and writes `ns_bytes`; the norm pass reads a unit, the scale reads
      and writes it: 3n.
    """
    passes = 5 * param_bytes + 2 * ns_bytes if fused else 11 * param_bytes + 2 * ns_bytes
    update = 2 * param_bytes + ns_bytes if fused else 4 * param_bytes + ns_bytes
    direction = 2 * param_bytes + ns_bytes if fused else 7 * param_bytes + ns_bytes
    return ElementBytes(
        local=passes,
        update=update,
        direction=direction,
        advance=3 * param_bytes,
        moved=2 * ns_bytes,
        owned=0,
        normalized=3 * ns_bytes,
    )
