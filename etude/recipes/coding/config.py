"""The coding loop's configuration (`configs/coding-smol.toml`), parsed strictly: an unknown
section or key, or a value of the wrong type, is an error naming it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from etude.config import from_dict, read_toml
from etude.monitor import SEVERITIES, ZEROING_SEVERITY
from etude.recipes.coding.reward import REWARD_KINDS
from etude.rl.distill import ESTIMATORS
from etude.rl.feedback import DETECTORS
from etude.rl.feedback_modes import FeedbackMode
from etude.rl.loss import IS_MODES
from etude.rl.update import AGGREGATIONS


@dataclass
class TaskSettings:
    """Where tasks come from: an existing `tasks_dir` of synthesized tasks, or else the
    `repositories` synthesized into `<out_dir>/synth` on the first run. `heldout_dir`: tasks
    never trained on, each run `heldout_samples` times before the first update (iteration 0)
    and after every `heldout_every`-th update and the run's last, without hints; empty: no
    held-out evaluation."""

    tasks_dir: str = ""
    heldout_dir: str = ""
    heldout_samples: int = 1
    heldout_every: int = 1
    repositories: list[str] = field(default_factory=lambda: ["etude/synth/example_repo"])
    max_candidates: int = 2
    workers: int = 2


@dataclass
class ModelSettings:
    """The policy: `backend = "local"` samples from the trained SmolLM2 itself;
    `"openai"` samples from an OpenAI-compatible server. With `serve = "llama_cpp"` the loop
    runs that server itself (llama.cpp on a GGUF of the policy, re-exported and restarted
    after every update, so rollouts stay on-policy; `base_url` is then unused). With
    `serve = ""` it uses the server at `base_url`, which keeps serving its own weights: the
    rollouts are off-policy after the first update, so that needs `off_policy = true`.

    `init`: a checkpoint directory (the coding loop's format, `etude.recipes.coding.checkpoint`,
    also written by `etude sft`) whose weights the policy starts from; the optimizer is
    fresh and the run starts at iteration 0. Empty: the pretrained weights.

    `device`: where the policy trains and, with the local backend, samples: "cpu" or
    "cuda" (the current CUDA device). Episodes, grading and the monitor run on the CPU
    either way; checkpoints are the same files from both, so a run may resume on the other."""

    init: str = ""
    backend: str = "local"
    base_url: str = "http://127.0.0.1:8000/v1"
    served_model: str = "default"
    serve: str = ""
    off_policy: bool = False
    max_new_tokens: int = 192
    temperature: float = 0.8
    max_context: int = 4096
    device: str = "cpu"


@dataclass
class RolloutSettings:
    tasks_per_iteration: int = 2
    group_size: int = 2
    concurrency: int = 2
    max_turns: int = 4
    max_tokens: int = 768
    wall_s: float = 300.0
    command_timeout_s: float = 30.0
    python_env: bool = True
    keep_workspaces: bool = False


@dataclass
class RewardSettings:
    kind: str = "fraction"
    hack_severity: str = ZEROING_SEVERITY
    grade_time_limit_s: float = 300.0
    grade_concurrency: int = 2


@dataclass
class LossSettings:
    estimator: str = "reverse_kl"
    teacher_temperature: float = 1.0
    clip_low: float = 0.2
    clip_high: float = 0.28
    is_cap: float = 0.0  # truncated importance sampling cap on π/π_sampler; 0 = off
    is_mode: str = "truncate"
    effort_alpha: float = 0.0
    max_tokens: int = 4096
    # optimizer steps on each iteration's batch (PPO epochs: after the first, the ratios
    # against the sampler leave 1 and the clip range binds)
    passes: int = 1
    # "token": every trainable token of the batch weighs the same; "sequence": each
    # trajectory's tokens averaged first (etude.rl.update.StepSettings)
    aggregation: str = "token"
    # factor on negative advantages: 1 plain GRPO, 0 learns only from the episodes that beat
    # their task's mean (etude.rl.advantages.weigh_negatives)
    negative_weight: float = 1.0
    # weight of KL(policy || the weights this run started from: model.init or pretrained),
    # which holds what already works where a group has no spread; 0 = off
    ref_kl: float = 0.0
    weights: dict[str, float] = field(
        default_factory=lambda: {"monitor": 1.0, "tool_not_found": 0.5, "invalid_arguments": 0.5}
    )
    # per category: "kl", "advantage_weight" (the default) or "gated" (etude.rl.feedback_modes)
    modes: dict[str, FeedbackMode] = field(default_factory=dict)
    weight_bound: float = 2.0
    gate_temperature: float = 1.0


@dataclass
class FeedbackSettings:
    detectors: list[str] = field(
        default_factory=lambda: ["tool_not_found", "invalid_arguments", "repeated_call"]
    )


@dataclass
class JudgeSettings:
    """An LLM judge producing hints (category "judge", weighted by `loss.weights["judge"]`)
    from any OpenAI-compatible chat endpoint at `base_url`; off while `base_url` is empty.
    A judge that fails or times out is recorded in the iteration summary; the loop goes on."""

    base_url: str = ""
    served_model: str = "default"
    max_tokens: int = 256
    timeout_s: float = 60.0


@dataclass
class OptimSettings:
    """`etude.optim.Muon` (AdamW for embeddings and norms). `train_layers`: train only the
    last N decoder layers and the final norm (0: the whole model), to keep a CPU
    iteration short."""

    lr: float = 0.002
    adamw_lr: float = 1e-5
    weight_decay: float = 0.0
    train_layers: int = 0


@dataclass
class CodingConfig:
    seed: int = 0
    out_dir: str = "runs/coding-smol"
    iterations: int = 1
    checkpoint_every: int = 1
    tasks: TaskSettings = field(default_factory=TaskSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    rollout: RolloutSettings = field(default_factory=RolloutSettings)
    reward: RewardSettings = field(default_factory=RewardSettings)
    loss: LossSettings = field(default_factory=LossSettings)
    feedback: FeedbackSettings = field(default_factory=FeedbackSettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    optim: OptimSettings = field(default_factory=OptimSettings)


def parse_config(data: dict) -> CodingConfig:
    """A CodingConfig from a parsed TOML document whose `env` is "coding"."""
    if data.get("env") != "coding":
        raise ValueError(f"env must be 'coding' for the coding loop, got {data.get('env')!r}")
    cfg = from_dict(CodingConfig, {k: v for k, v in data.items() if k != "env"})
    checks = [
        (cfg.model.backend in ("local", "openai"), "model.backend must be 'local' or 'openai'"),
        (cfg.model.serve in ("", "llama_cpp"), "model.serve must be '' or 'llama_cpp'"),
        (cfg.model.device in ("cpu", "cuda"), "model.device must be 'cpu' or 'cuda'"),
        (
            cfg.model.backend == "openai" or not cfg.model.serve,
            "model.serve needs model.backend = 'openai'",
        ),
        (
            cfg.model.backend != "openai" or cfg.model.serve or cfg.model.off_policy,
            "model.backend = 'openai' with an external server (model.serve = '') trains on "
            "rollouts from weights the server never updates: set model.serve = 'llama_cpp' "
            "to sync them after each step, or model.off_policy = true to accept off-policy "
            "rollouts",
        ),
        (cfg.judge.timeout_s > 0, "judge.timeout_s must be > 0"),
        (cfg.checkpoint_every >= 1, "checkpoint_every must be at least 1"),
        (cfg.reward.kind in REWARD_KINDS, f"reward.kind must be one of {REWARD_KINDS}"),
        (cfg.reward.hack_severity in SEVERITIES, f"reward.hack_severity: one of {SEVERITIES}"),
        (cfg.loss.estimator in ESTIMATORS, f"loss.estimator must be one of {ESTIMATORS}"),
        (cfg.loss.is_mode in IS_MODES, f"loss.is_mode must be one of {IS_MODES}"),
        (cfg.loss.is_cap >= 0, "loss.is_cap must be >= 0 (0: off)"),
        (cfg.loss.weight_bound >= 1, "loss.weight_bound must be >= 1"),
        (cfg.loss.gate_temperature > 0, "loss.gate_temperature must be > 0"),
        (cfg.loss.passes >= 1, "loss.passes must be at least 1"),
        (cfg.loss.ref_kl >= 0, "loss.ref_kl must be >= 0 (0: off)"),
        (cfg.loss.negative_weight >= 0, "loss.negative_weight must be >= 0"),
        (cfg.loss.aggregation in AGGREGATIONS, f"loss.aggregation must be one of {AGGREGATIONS}"),
        (cfg.optim.train_layers >= 0, "optim.train_layers must be >= 0"),
        (cfg.iterations >= 1, "iterations must be at least 1"),
        (cfg.rollout.concurrency >= 1, "rollout.concurrency must be at least 1"),
        (cfg.rollout.group_size >= 1, "rollout.group_size must be at least 1"),
        (cfg.tasks.heldout_samples >= 1, "tasks.heldout_samples must be at least 1"),
        (cfg.tasks.heldout_every >= 1, "tasks.heldout_every must be at least 1"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(message)
    bad = [d for d in cfg.feedback.detectors if d not in DETECTORS]
    if bad:
        raise ValueError(f"unknown detector(s) {bad}; known: {', '.join(DETECTORS)}")
    return cfg


def load_config(path: str | Path) -> CodingConfig:
    """Read and parse the TOML config at `path`."""
    return parse_config(read_toml(path))
