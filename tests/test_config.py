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


@pytest.mark.parametrize("name", ["tiny.toml", "tiny-8rank.toml", "smollm2.toml"])
def test_the_train_configs_load_through_the_one_loader(name):
    from etude.parallel.train import load_config

    cfg = load_config(CONFIGS / name)
    assert cfg.steps > 0 and cfg.model_config().vocab_size > 0


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("steps = 200", "stepz = 200"), "unknown key(s) train.stepz"),
        (("steps = 200", "steps = '200'"), "train.steps must be int, got '200'"),
        (("lr = 0.02", "lr = true"), "train.lr must be float, got True"),
        (('preset = "tiny"', 'preset = "tiny"\ndimm = 32'), "unknown key(s) model.dimm"),
        (('preset = "tiny"', 'preset = "tiny"\ndim = 32.5'), "model.dim must be int, got 32.5"),
        (("[layout]", "[layout]\ncp = 'two'"), "layout.cp must be int, got 'two'"),
        (("[layout]", "[layout]\ntp = 2"), "unknown key(s) layout.tp"),
        (("[train]", "[optim]\nlr = 1\n[train]"), "unknown table(s) ['optim']"),
        (('[model]\npreset = "tiny"', 'model = "tiny"'), "[model] must be a table"),
        # a [train] key that is a TrainConfig field set by another table
        (("steps = 200", "steps = 200\nlayout = 1"), "unknown key(s) train.layout"),
    ],
)
def test_a_bad_train_config_is_refused_naming_the_dotted_key(tmp_path, edit, message):
    from etude.parallel.train import load_config

    bad = tmp_path / "train.toml"
    bad.write_text((CONFIGS / "tiny.toml").read_text().replace(*edit, 1))
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    assert message in str(err.value) and str(bad) in str(err.value)


def test_train_config_overrides_layout_and_accepts_arrays_for_tuples(tmp_path):
    from etude.parallel.train import load_config

    config = tmp_path / "train.toml"
    text = (CONFIGS / "tiny-8rank.toml").read_text()
    config.write_text(text.replace('preset = "tiny"', 'preset = "tiny"\ndense_layer_ids = [0]'))
    cfg = load_config(config, {"dense_shard": 1, "ep": 4})
    assert (cfg.layout.dense_shard, cfg.layout.cp, cfg.layout.ep) == (1, 2, 4)
    assert cfg.model_config().dense_layer_ids == (0,)
    with pytest.raises(ConfigError, match=r"\[layout\] the dense family spans"):
        load_config(config, {"ep": 3})
