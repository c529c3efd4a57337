"""Which parameters Muon orthogonalizes, at which granularity, and which go to AdamW.

Each parameter is routed by the first rule below that applies to it; the route records the
rule, so `Muon.routing` / `Muon.routing_report()` can say, per parameter, where it went and
why. Rules, in order:

1. `group_algorithm`: the param group says `"algorithm": "muon" | "adamw"`.
2. `group_granularity`: the group says `"heads"` or `"experts"`: Muon at that granularity.
3. `not_a_matrix`: fewer than 2 dims (norms, biases, scalars): AdamW.
4. `embedding_or_head`: the name is known and its module is an embedding, output head or
   router (`lm_head`, `output`, `wte`, `wpe`, `router`, `gate`, `embed*`, `*embedding*`):
   AdamW.
5. `stacked_experts`: a 3-D tensor with no group option is a stack `[E, out, in]` of
   experts: Muon, one unit per expert (as a plain parameter list of an MoE is passed to
   `torch.optim.Muon`, with no way to say more).
6. `matrix`: a 2-D tensor: Muon, the whole matrix as one unit.
7. `no_unit`: 4 or more dims without a group option: AdamW, as a fallback. This is the
   only rule that moves a matrix-shaped tensor to AdamW without being told to, and
   `strict=True` refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from etude.optim.units import Granularity, unit_matrix_shape

ADAMW_MODULE_NAMES = frozenset({"lm_head", "output", "wte", "wpe", "router", "gate"})


@dataclass(frozen=True)
class Route:
    """Where one parameter goes: `algorithm` "muon" or "adamw", by `rule`, for `reason`.

    `granularity` is None for AdamW. `label` is the parameter's name, or its position
    ("group 0, parameter 3") when names were not given."""

    label: str
    shape: tuple[int, ...]
    algorithm: str
    granularity: Granularity | None
    rule: str
    reason: str

    @property
    def units(self) -> str:
        """The Newton–Schulz units in words, e.g. "8 experts of 32x64", or "-" for AdamW."""
        g = self.granularity
        if g is None:
            return "-"
        rows, cols = unit_matrix_shape(self.shape, g)
        if g.kind == "experts":
            return f"{self.shape[0]} experts of {rows}x{cols}"
        if g.kind == "heads":
            side = "rows" if g.head_dim == 0 else "columns"
            return f"{g.heads} heads of {rows}x{cols} ({side})"
        return f"1 matrix of {rows}x{cols}"


def _module(name: str | None) -> str | None:
    if name is None:
        return None
    return name.rsplit(".", 1)[0].rsplit(".", 1)[-1] if "." in name else ""


def _group_granularity(options: dict, ndim: int) -> Granularity:
    if options.get("experts") or ("heads" not in options and ndim == 3):
        return Granularity("experts")
    if "heads" in options:
        return Granularity("heads", int(options["heads"]), int(options.get("head_dim", 0)))
    return Granularity("matrix")


@dataclass(frozen=True)
class Rule:
    """One routing rule: when it `applies` (name or None, ndim, group options) and what it
    `decides` (ndim, options) -> (algorithm, granularity or None)."""

    name: str
    explanation: str
    applies: Callable[[str | None, int, dict], bool]
    decides: Callable[[int, dict], tuple[str, Granularity | None]]


def _group_algorithm(ndim: int, options: dict) -> tuple[str, Granularity | None]:
    algorithm = options["algorithm"]
    if algorithm not in ("muon", "adamw"):
        raise ValueError(f"algorithm must be 'muon' or 'adamw', got {algorithm!r}")
    return ("muon", _group_granularity(options, ndim)) if algorithm == "muon" else ("adamw", None)


def _is_embedding_or_head(name: str | None) -> bool:
    module = _module(name)
    if module is None:
        return False
    return module in ADAMW_MODULE_NAMES or module.startswith("embed") or "embedding" in module


RULES = (
    Rule(
        "group_algorithm",
        "the param group's 'algorithm' option",
        lambda name, ndim, options: "algorithm" in options,
        _group_algorithm,
    ),
    Rule(
        "group_granularity",
        "the param group's 'heads' or 'experts' option",
        lambda name, ndim, options: "heads" in options or bool(options.get("experts")),
        lambda ndim, options: ("muon", _group_granularity(options, ndim)),
    ),
    Rule(
        "not_a_matrix",
        "fewer than 2 dims (norm, bias or scalar)",
        lambda name, ndim, options: ndim < 2,
        lambda ndim, options: ("adamw", None),
    ),
    Rule(
        "embedding_or_head",
        "its module is an embedding, output head or router",
        lambda name, ndim, options: _is_embedding_or_head(name),
        lambda ndim, options: ("adamw", None),
    ),
    Rule(
        "stacked_experts",
        "a 3-D tensor with no group option is taken as [E, out, in] experts",
        lambda name, ndim, options: ndim == 3,
        lambda ndim, options: ("muon", Granularity("experts")),
    ),
    Rule(
        "matrix",
        "a 2-D matrix",
        lambda name, ndim, options: ndim == 2,
        lambda ndim, options: ("muon", Granularity("matrix")),
    ),
    Rule(
        "no_unit",
        "no Newton–Schulz unit is defined for 4 or more dims, so it fell back to AdamW "
        "(say so with a group {'algorithm': 'adamw'}, or reshape it to [E, out, in])",
        lambda name, ndim, options: True,
        lambda ndim, options: ("adamw", None),
    ),
)
FALLBACK_RULES = frozenset({"no_unit"})


def route(label: str, name: str | None, shape: tuple[int, ...], options: dict) -> Route:
    """The route of one parameter of `shape` in a group with `options` (module docstring).

    `name` is the parameter's name when known (None otherwise); `label` names it in
    messages either way."""
    for rule in RULES:
        if rule.applies(name, len(shape), options):
            algorithm, granularity = rule.decides(len(shape), options)
            reason = rule.explanation
            if rule.name == "matrix" and name is None:
                reason += " (name not given: embedding / output-head names were not checked)"
            return Route(label, tuple(shape), algorithm, granularity, rule.name, reason)
    raise AssertionError("the no_unit rule applies to every parameter")  # pragma: no cover


def check_strict(r: Route) -> None:
    """Raise if `r` sends a matrix-shaped parameter to AdamW by fallback (`strict=True`)."""
    if r.rule in FALLBACK_RULES and len(r.shape) >= 2:
        raise ValueError(
            f"parameter {r.label!r} (shape {r.shape}) would fall back to AdamW: {r.reason}; "
            "strict=True refuses a matrix-shaped parameter Muon was not told what to do with"
        )


def report(routes: list[Route]) -> str:
    """A plain-text table of `routes`: parameter, shape, algorithm, units, rule and reason."""
    header = ("parameter", "shape", "to", "units", "rule: reason")
    rows = [
        (r.label, "x".join(map(str, r.shape)) or "scalar", r.algorithm, r.units, r.rule)
        for r in routes
    ]
    rows = [(*row[:4], f"{row[4]}: {r.reason}") for row, r in zip(rows, routes)]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header[:4])]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4]
        for row in (header, *rows)
    ]
    muon = sum(_numel(r.shape) for r in routes if r.algorithm == "muon")
    total = sum(_numel(r.shape) for r in routes)
    lines.append(
        f"{sum(r.algorithm == 'muon' for r in routes)} of {len(routes)} parameters "
        f"({muon} of {total} elements) go to Muon"
    )
    return "\n".join(lines)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
