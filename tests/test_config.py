"""The one strict TOML loader (`etude.config`): nested dataclasses, unknown keys and wrong
types refused with the dotted key, defaults kept, and the repository's configs load."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from etude.config import ConfigError, from_dict, load_toml
from etude.recipes.coding.config import CodingConfig
from etude.recipes.toolgrid.train import RunConfig

CONFIGS = Path(__file__).parent.parent / "configs"


@dataclass
class Inner:
    steps: int = 3
    lr: float = 0.1
    weights: dict[str, float] = field(default_factory=dict)
    cap: float | None = None


@dataclass
class Outer:
    name: str = "run"
    inner: Inner = field(default_factory=Inner)
    tags: list[str] = field(default_factory=list)


def test_nested_tables_with_defaults_and_ints_for_floats():
    cfg = from_dict(Outer, {"inner": {"lr": 1, "weights": {"a": 2}}, "tags": ["x"]})
    assert cfg == Outer(inner=Inner(lr=1.0, weights={"a": 2.0}), tags=["x"])
    assert isinstance(cfg.inner.lr, float) and from_dict(Outer, {}) == Outer()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"inner": {"stepz": 1}}, "unknown key(s) inner.stepz"),
        ({"nme": "x"}, "unknown key(s) nme"),
        ({"inner": {"steps": "3"}}, "inner.steps must be int, got '3'"),
        ({"inner": {"steps": True}}, "inner.steps must be int, got True"),
        ({"inner": {"steps": 1.5}}, "inner.steps must be int, got 1.5"),
        ({"inner": {"weights": {"a": "high"}}}, "inner.weights.a: Input should be a valid"),
        ({"inner": 3}, "[inner] must be a table"),
        ({"tags": "x"}, "tags must be list[str]"),
        ({"inner": {"cap": "none"}}, "inner.cap must be float | None"),
    ],
)
def test_bad_values_are_refused_with_the_dotted_key(data, message):
    with pytest.raises(ConfigError) as err:
        from_dict(Outer, data)
    assert message in str(err.value)


def test_the_repository_configs_load(tmp_path):
    assert load_toml(RunConfig, CONFIGS / "toolgrid.toml", skip=("env",)).rl.steps > 0
    assert load_toml(CodingConfig, CONFIGS / "coding-smol.toml", skip=("env",)).iterations >= 1
    bad = tmp_path / "bad.toml"
    bad.write_text("[loss]\nclip_low = 'wide'\n")
    with pytest.raises(ConfigError, match=r"loss\.clip_low must be float"):
        load_toml(RunConfig, bad)
    with pytest.raises(ConfigError, match=r"\[loss\] is_mode must be one of"):
        from_dict(RunConfig, {"loss": {"is_mode": "clip"}})


def test_the_demo_sections_read_the_repository_configs():
    """The demo modules locate configs/ from their own path (broken once by a move)."""
    from etude.recipes.toolgrid.demo import CONFIG

    assert (CONFIGS / "toolgrid.toml").resolve() == CONFIG
    assert load_toml(RunConfig, CONFIG, skip=("env",)).rl.steps > 0
