"""`etude rl --config configs/toolgrid.toml`: warm-start the tiny policy (or, with `[model]
pretrained`, a pretrained chat model such as SmolLM2: configs/toolgrid-smollm2.toml) on noisy
scripted demonstrations, then train it on ToolGrid with RL + targeted textual feedback,
evaluating on held-out tool registries; episodes are sampled `[rl] rollout_batch` at a time
in one KV cache. `[loss.modes]` picks how each hint category enters the update,
`[teacher]` whose weights the hinted teacher runs with (`etude.rl.teacher_weights`).
Writes `log.jsonl` (one record per step and per evaluation), `plots.png`, and `policy.pt`
under the run directory."""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
from torch import nn

from etude.config import from_dict, read_toml
from etude.envs.toolgrid import (
    Episode,
    Registry,
    Task,
    demonstration,
    lookup_drill,
    random_registry,
    sample_task,
    split_registries,
    tool_errors,
)
from etude.models import MoEConfig
from etude.recipes.device import require_device
from etude.recipes.toolgrid.policy import BytePolicy, freeze_all_but_last_layers, muon_optimizer
from etude.recipes.toolgrid.pretrained import pretrained_chat, pretrained_policy
from etude.recipes.toolgrid.warmstart import warm_start
from etude.rl.feedback import DETECTORS, Hint, detect_all
from etude.rl.policy import NativePolicy
from etude.rl.teacher import SCOPES
from etude.rl.teacher_weights import TeacherSettings, TeacherWeights
from etude.rl.trajectory import ByteChat, ChatTokenizer, Trajectory, sample_of
from etude.rl.update import StepSettings, has_signal, rl_update, scheduled
from etude.serving.native import rollouts

PLACEBO_TEXT = "Note: the weather report says it will be mild and dry this afternoon."
TARGETED = ("tool_not_found", "invalid_arguments")


@dataclass
class ModelSettings:
    """The byte policy's shape, or `pretrained`: a checkpoint to start from instead
    ("smollm2", a Hugging Face directory or a GGUF file; `etude.recipes.toolgrid.pretrained`),
    whose own shape then applies. `max_seq_len` bounds an episode's tokens either way.
    `device`: where the policy samples, trains and is evaluated, "cpu" or "cuda" (the
    sampling generators stay on the CPU, so a seed draws the same tokens from the same
    probabilities on either)."""

    pretrained: str = ""
    device: str = "cpu"
    dim: int = 64
    n_layers: int = 3
    n_heads: int = 4
    n_kv_heads: int = 2
    dense_ffn_dim: int = 256
    max_seq_len: int = 384

    def config(self) -> MoEConfig:
        return MoEConfig(
            vocab_size=256,
            dim=self.dim,
            n_layers=self.n_layers,
            n_heads=self.n_heads,
            n_kv_heads=self.n_kv_heads,
            head_dim=self.dim // self.n_heads,
            n_experts=0,
            top_k=1,
            expert_ffn_dim=0,
            n_shared_experts=0,
            n_dense_layers=self.n_layers,
            dense_ffn_dim=self.dense_ffn_dim,
            max_seq_len=self.max_seq_len,
        )


def new_policy(settings: ModelSettings) -> nn.Module:
    """A randomly initialized byte policy of these settings, or the pretrained checkpoint,
    on `settings.device`."""
    require_device(settings.device, "[model] device")
    policy = (
        pretrained_policy(settings.pretrained)
        if settings.pretrained
        else BytePolicy(settings.config())
    )
    return policy.to(settings.device)


def chat_tokenizer(settings: ModelSettings) -> ChatTokenizer:
    """How episodes become the policy's tokens: ByteChat for the byte policy, the
    checkpoint's tokenizer and chat template for a pretrained one."""
    return pretrained_chat(settings.pretrained) if settings.pretrained else ByteChat()


@dataclass
class EnvSettings:
    n_tools: int = 3
    n_requests: int = 2
    slack: int = 0
    train_registries: int = 300
    heldout_registries: int = 100
    registry_seed: int = 1234

    def registries(self) -> tuple[list[Registry], list[Registry]]:
        """The disjoint training and held-out registry lists these settings describe."""
        return split_registries(
            self.registry_seed, self.train_registries, self.heldout_registries, self.n_tools
        )


@dataclass
class WarmStartSettings:
    steps: int = 600
    batch: int = 16  # demonstrations per step
    drills: int = 0  # lookup drills per step, besides the demonstrations
    optimizer: str = "muon"  # or "adamw" (betas 0.9, 0.98; no weight decay)
    lr: float = 0.02
    p_error: float = 0.3
    p_hint: float = 0.2  # a hint before a call (or a drill's answer), then the right action


@dataclass
class RLSettings:
    """`optimizer`: "muon" (`muon_optimizer`) or "adamw" (betas 0.9, 0.999, no weight
    decay); `skip_no_signal`: take no optimizer step on a batch that carries no gradient
    signal (every group's rewards equal and no hint distilled), since a momentum optimizer
    would otherwise step in its stale direction at full size (Muon normalizes the step);
    `fresh_registries`: draw each RL task's registry at random (never a held-out one)
    instead of from the training registries the warm start saw, so that the RL reward can
    only rise by reading the tool list, not by recalling a registry; `train_layers`: train
    only the last N decoder layers and the final norm (`freeze_all_but_last_layers`; 0: all)."""

    steps: int = 40
    tasks_per_step: int = 4
    group_size: int = 8
    lr: float = 0.005
    optimizer: str = "muon"
    skip_no_signal: bool = False
    fresh_registries: bool = False
    temperature: float = 1.0
    max_turn_tokens: int = 40
    rollout_batch: int = 64  # episodes sampled together in one KV cache
    train_layers: int = 0


@dataclass
class FeedbackSettings:
    detectors: list[str] = field(default_factory=lambda: ["tool_not_found", "invalid_arguments"])
    placebo: bool = False


@dataclass
class EvalSettings:
    every: int = 10
    episodes: int = 48


@dataclass
class RunConfig:
    """Everything a ToolGrid run reads from its TOML file (sections as below)."""

    seed: int = 0
    out_dir: str = "runs/toolgrid"
    model: ModelSettings = field(default_factory=ModelSettings)
    toolgrid: EnvSettings = field(default_factory=EnvSettings)
    warm_start: WarmStartSettings = field(default_factory=WarmStartSettings)
    rl: RLSettings = field(default_factory=RLSettings)
    loss: StepSettings = field(default_factory=StepSettings)
    teacher: TeacherSettings = field(default_factory=TeacherSettings)
    feedback: FeedbackSettings = field(default_factory=FeedbackSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)


def parse_config(data: dict) -> RunConfig:
    """A RunConfig from a parsed TOML document (the `env` key already checked); unknown keys
    and unknown detectors are errors."""
    data = {k: v for k, v in data.items() if k != "env"}
    cfg = from_dict(RunConfig, data)
    bad = [d for d in cfg.feedback.detectors if d not in DETECTORS]
    if bad:
        raise ValueError(f"unknown detector(s) {bad}; known: {', '.join(DETECTORS)}")
    for section in ("warm_start", "rl"):
        name = getattr(cfg, section).optimizer
        if name not in ("muon", "adamw"):
            raise ValueError(f"[{section}] optimizer must be 'muon' or 'adamw', got {name!r}")
    if cfg.loss.lambda_schedule not in ("constant", "linear"):
        raise ValueError(
            "[loss] lambda_schedule must be 'constant' or 'linear', "
            f"got {cfg.loss.lambda_schedule!r}"
        )
    if cfg.model.device not in ("cpu", "cuda"):
        raise ValueError(f"[model] device must be 'cpu' or 'cuda', got {cfg.model.device!r}")
    if cfg.rl.train_layers < 0:
        raise ValueError(f"[rl] train_layers must be >= 0, got {cfg.rl.train_layers}")
    if cfg.rl.rollout_batch < 1:
        raise ValueError(f"[rl] rollout_batch must be at least 1, got {cfg.rl.rollout_batch}")
    if cfg.loss.scope not in SCOPES:
        raise ValueError(f"[loss] scope must be one of {SCOPES}, got {cfg.loss.scope!r}")
    return cfg


def load_config(path: str | Path) -> RunConfig:
    data = read_toml(path)
    if data.get("env") != "toolgrid":
        raise ValueError(
            f"{path}: env must be 'toolgrid' for this trainer, got {data.get('env')!r}"
        )
    return parse_config(data)


def _hints(traj: Trajectory, detectors, placebo: bool) -> list[Hint]:
    found = detect_all(traj, detectors)
    if placebo:
        found = [replace(h, text=PLACEBO_TEXT) for h in found]
    return found


def play(
    policy, tok: ChatTokenizer, episodes: list[Episode], seeds: list[int], cfg: RunConfig
) -> list[Episode]:
    """`episodes` played out together, `cfg.rl.rollout_batch` at a time, at the run's
    temperature and length limits; episode k samples from a generator seeded `seeds[k]`, so
    it plays the same whichever episodes share its batch."""
    if len(seeds) != len(episodes):
        raise ValueError(f"one seed per episode: {len(episodes)} episodes, {len(seeds)} seeds")
    size = cfg.rl.rollout_batch
    for at in range(0, len(episodes), size):
        rollouts(
            policy,
            tok,
            episodes[at : at + size],
            [torch.Generator().manual_seed(s) for s in seeds[at : at + size]],
            temperature=cfg.rl.temperature,
            max_turn_tokens=cfg.rl.max_turn_tokens,
            max_len=cfg.model.max_seq_len,
        )
    return episodes


def episode_seeds(rng: random.Random, n: int) -> list[int]:
    """`n` sampling seeds (63-bit) drawn from `rng`."""
    return [rng.getrandbits(63) for _ in range(n)]


def evaluate(policy, tok: ChatTokenizer, tasks, cfg: RunConfig, seed: int) -> dict:
    """Success rate, targeted error rate (tool-not-found or invalid-argument calls per call)
    and tool calls per episode of sampled rollouts on `tasks` (the sampling seeds drawn from
    `seed`). (The error rate alone can fall because a policy stops calling tools; calls per
    episode shows that.)"""
    episodes = [Episode(task, cfg.toolgrid.slack) for task in tasks]
    play(policy, tok, episodes, episode_seeds(random.Random(seed), len(tasks)), cfg)
    success = errors = calls = 0
    for ep in episodes:
        success += ep.reward
        e, c = tool_errors(ep.trajectory())
        errors, calls = errors + e, calls + c
    return {
        "heldout_success": success / len(tasks),
        "heldout_error_rate": errors / max(calls, 1),
        "heldout_calls_per_episode": calls / len(tasks),
    }


def eval_tasks(cfg: RunConfig) -> list[Task]:
    """The fixed evaluation tasks: `cfg.eval.episodes` tasks on held-out registries."""
    _, heldout = cfg.toolgrid.registries()
    rng = random.Random(cfg.toolgrid.registry_seed + 7)
    return [
        sample_task(heldout[i % len(heldout)], cfg.toolgrid.n_requests, rng, f"heldout-{i}")
        for i in range(cfg.eval.episodes)
    ]


def warm_started_policy(
    cfg: RunConfig,
    train: list[Registry],
    log: Callable[[int, float, nn.Module], None] | None = None,
    policy: nn.Module | None = None,
) -> nn.Module:
    """A policy (`new_policy`, on `cfg.model.device`; or `policy`, trained in place: a checkpoint
    already loaded need not be loaded again) trained on `cfg.warm_start.steps` batches of
    noisy demonstrations (and lookup drills, when `cfg.warm_start.drills` asks for them) in
    its chat template. `log(step, loss, policy)` runs after each step."""
    torch.manual_seed(cfg.seed)
    policy = (new_policy(cfg.model) if policy is None else policy).to(cfg.model.device)
    ws = cfg.warm_start
    if ws.optimizer == "adamw":
        opt = torch.optim.AdamW(policy.parameters(), lr=ws.lr, betas=(0.9, 0.98), weight_decay=0)
    else:
        opt = muon_optimizer(policy, ws.lr)
    rng = random.Random(cfg.seed)

    def demos(step: int):
        batch = [
            demonstration(
                sample_task(rng.choice(train), cfg.toolgrid.n_requests, rng),
                rng,
                ws.p_error,
                ws.p_hint,
            )
            for _ in range(ws.batch)
        ]
        drills = [lookup_drill(rng.choice(train), rng, p_hint=ws.p_hint) for _ in range(ws.drills)]
        return batch + drills

    on_step = None if log is None else lambda step, loss: log(step, loss, policy)
    warm_start(policy, opt, chat_tokenizer(cfg.model), demos, ws.steps, on_step=on_step)
    return policy


def rl_optimizer(policy: nn.Module, rl: RLSettings) -> torch.optim.Optimizer:
    """The RL step's optimizer: `rl.optimizer` at `rl.lr`, over the trained parameters."""
    if rl.optimizer == "adamw":
        trained = [p for p in policy.parameters() if p.requires_grad]
        return torch.optim.AdamW(trained, lr=rl.lr, weight_decay=0)
    return muon_optimizer(policy, rl.lr)


def sampled_nll(trajs: list[Trajectory]) -> float:
    """Mean −log π_sampler of the sampled tokens: at temperature 1 an unbiased estimate of
    the policy's per-token entropy on its own rollouts (0.0 without sampled tokens)."""
    lps = [
        lp
        for t in trajs
        for m in t.messages
        if (s := sample_of(m)) is not None
        for lp in s.logprobs
        if lp is not None
    ]
    return -sum(lps) / len(lps) if lps else 0.0


def train(cfg: RunConfig, policy: nn.Module | None = None, progress: bool = True) -> list[dict]:
    """Run warm start (unless `policy` is given) and RL; returns the log records (also
    written to `<out_dir>/log.jsonl`)."""
    from rich.progress import Progress

    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "log.jsonl"
    partial = log_path.with_suffix(".jsonl.partial")
    records: list[dict] = []
    tok = chat_tokenizer(cfg.model)
    train_regs, heldout_regs = cfg.toolgrid.registries()
    heldout = set(heldout_regs)
    tasks = eval_tasks(cfg)
    detectors = [DETECTORS[name]() for name in cfg.feedback.detectors]
    with open(partial, "w") as logf, Progress(disable=not progress) as bar:

        def emit(rec: dict) -> None:
            records.append(rec)
            logf.write(json.dumps(rec) + "\n")
            logf.flush()

        if policy is None:
            task = bar.add_task("warm start", total=cfg.warm_start.steps)
            policy = warm_started_policy(
                cfg, train_regs, lambda s, _loss, _policy: bar.update(task, completed=s + 1)
            )
        reference = copy.deepcopy(policy).requires_grad_(False) if cfg.loss.ref_kl else None
        freeze_all_but_last_layers(policy, cfg.rl.train_layers)
        opt = rl_optimizer(policy, cfg.rl)
        teacher = TeacherWeights(cfg.teacher, policy)
        window: list[float] = []  # training rewards since the teacher's last reward check
        rng = random.Random(cfg.seed + 1)
        sampling = random.Random(cfg.seed + 2)  # the episodes' sampling seeds
        episodes = 0
        emit({"episodes": 0, **evaluate(policy, tok, tasks, cfg, cfg.seed + 3)})
        task = bar.add_task("RL", total=cfg.rl.steps)
        for step in range(cfg.rl.steps):
            start = time.perf_counter()
            played, groups = [], []
            for g in range(cfg.rl.tasks_per_step):
                if cfg.rl.fresh_registries:
                    registry = random_registry(rng, cfg.toolgrid.n_tools, heldout)
                else:
                    registry = rng.choice(train_regs)
                t = sample_task(registry, cfg.toolgrid.n_requests, rng, f"s{step}g{g}")
                played += [Episode(t, cfg.toolgrid.slack) for _ in range(cfg.rl.group_size)]
                groups += [g] * cfg.rl.group_size
            play(policy, tok, played, episode_seeds(sampling, len(played)), cfg)
            trajs = [ep.trajectory() for ep in played]
            episodes += len(trajs)
            hints = [_hints(t, detectors, cfg.feedback.placebo) for t in trajs]
            sample_s = time.perf_counter() - start
            settings = scheduled(cfg.loss, step, cfg.rl.steps)
            if cfg.rl.skip_no_signal and not has_signal(trajs, groups, hints, settings):
                metrics = {"skipped": True}
            else:
                metrics = rl_update(
                    NativePolicy(policy),
                    opt,
                    tok,
                    trajs,
                    groups,
                    hints,
                    settings,
                    NativePolicy(reference) if reference is not None else None,
                    teacher=None if teacher.module is None else NativePolicy(teacher.module),
                )
            window.extend(t.reward for t in trajs)
            check = (step + 1) % cfg.teacher.every == 0
            # the reward check of a "no_reward_drop" teacher reads the training rollouts'
            # mean reward since the last check, leaving the held-out evaluation a clean test
            teacher.after_update(policy, reward=sum(window) / len(window))
            if check:
                window = []
            errs = [tool_errors(t) for t in trajs]
            rec = {
                "step": step,
                "episodes": episodes,
                "reward": sum(t.reward for t in trajs) / len(trajs),
                "error_rate": sum(e for e, _ in errs) / max(sum(c for _, c in errs), 1),
                "hints": sum(len(h) for h in hints),
                "sampled_nll": sampled_nll(trajs),
                "teacher_refreshes": teacher.refreshes,
                "sample_s": round(sample_s, 3),
                "update_s": round(time.perf_counter() - start - sample_s, 3),
                **metrics,
            }
            if (step + 1) % cfg.eval.every == 0 or step + 1 == cfg.rl.steps:
                rec.update(evaluate(policy, tok, tasks, cfg, cfg.seed + 3))
            emit(rec)
            bar.update(task, completed=step + 1, description=f"RL reward {rec['reward']:.2f}")
    partial.replace(log_path)  # a log only appears complete once the run is
    torch.save(policy.state_dict(), out / "policy.pt")
    plot(records, out / "plots.png")
    return records


def plot(records: list[dict], path: Path) -> None:
    """Reward (train, held-out), targeted error rate, and KL (or mean advantage weight) per
    category against episodes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    steps = [r for r in records if "step" in r]
    evals = [r for r in records if "heldout_success" in r]
    x = [r["episodes"] for r in steps]
    axes[0].plot(x, [r["reward"] for r in steps], label="train reward", alpha=0.6)
    axes[0].plot(
        [r["episodes"] for r in evals],
        [r["heldout_success"] for r in evals],
        "o-",
        label="held-out success",
    )
    axes[1].plot(x, [r["error_rate"] for r in steps], label="train", alpha=0.6)
    axes[1].plot(
        [r["episodes"] for r in evals],
        [r["heldout_error_rate"] for r in evals],
        "o-",
        label="held-out",
    )
    cats = sorted({k for r in steps for k in r if k.startswith(("kl/", "credit/"))})
    for c in cats:
        axes[2].plot(
            [r["episodes"] for r in steps if c in r], [r[c] for r in steps if c in r], label=c
        )
    titles = ["reward / success", "targeted error rate", "KL / advantage weight per category"]
    for ax, title in zip(axes, titles):
        ax.set_title(title)
        ax.set_xlabel("episodes")
        if ax.has_data():
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
