"""The `etude` command. Each subcommand lives with the part that implements it; this file
only builds the argument parser and dispatches, importing a part when its command runs."""

from __future__ import annotations

import argparse
import sys

from etude import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etude",
        description="etude: an open training stack for agentic coding models, on PyTorch.",
    )
    parser.add_argument("--version", action="version", version=f"etude {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo", help="a miniature run of every part, ending with a report (minutes on a CPU)"
    )
    demo.add_argument("--out", default="runs/demo", help="directory for the report and logs")
    demo.set_defaults(run=_run_demo)

    synth = commands.add_parser(
        "synth", help="turn Python repositories with tests into feature-deletion tasks"
    )
    synth.add_argument("repo", nargs="+", help="repository directory or sdist tarball")
    synth.add_argument("--out", required=True, help="directory for tasks/ and summary.json")
    synth.add_argument("--workers", type=int, default=2, help="parallel workers (default 2)")
    synth.add_argument("--executor", default="local", choices=["local", "ray"])
    synth.add_argument("--max-candidates", type=int, default=None, help="per repository")
    synth.add_argument(
        "--reveal-signatures", action="store_true", help="show signatures in the statement"
    )
    synth.add_argument(
        "--slow-test-limit",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="drop baseline tests slower than this in either run (default 5)",
    )
    synth.set_defaults(run=_run_synth)

    agent = commands.add_parser(
        "synth-agent",
        help="a model, in the coding environment, deletes one feature: a task if it is clean",
    )
    agent.add_argument("repo", help="repository directory (with its tests)")
    agent.add_argument("feature", help="FILE:NAME, e.g. src/textkit/slug.py:slugify")
    agent.add_argument("--out", required=True, help="directory for tasks/ and deletions.jsonl")
    agent.add_argument("--backend", default="local", choices=["local", "openai"])
    agent.add_argument("--endpoint", default="", help="OpenAI-compatible base URL (/v1)")
    agent.add_argument("--model", default="default", help="model name sent to the endpoint")
    agent.add_argument("--max-turns", type=int, default=12, help="turn budget (default 12)")
    agent.add_argument("--max-new-tokens", type=int, default=512, help="tokens per turn")
    agent.set_defaults(run=_run_synth_agent)

    grade = commands.add_parser("grade", help="grade a workspace against a task's hidden tests")
    grade.add_argument("task", help="task directory (holds task.json)")
    grade.add_argument("workspace", help="the candidate workspace to grade")
    grade.add_argument("--out", default=None, help="also write the reward JSON here")
    grade.add_argument("--time-limit", type=float, default=600.0, help="seconds for the tests")
    grade.set_defaults(run=_run_grade)

    plan = commands.add_parser("plan", help="predict how a job distributes over GPUs")
    plans = plan.add_subparsers(dest="plan_kind", metavar="KIND", required=True)
    muon = plans.add_parser(
        "muon", help="sharded Muon: owner assignment and predicted optimizer step time"
    )
    muon.add_argument("--model", default="kimi-k2", help="model preset (tiny, kimi-k2)")
    muon.add_argument("--gpus", type=int, default=512, help="number of GPUs")
    muon.add_argument("--gpu", default="h200", choices=["h100", "h200"], help="GPU kind")
    muon.add_argument(
        "--gpus-per-node", type=int, default=8, help="GPUs per node: the dense shard group"
    )
    muon.add_argument(
        "--ep", type=int, default=None, help="expert-parallel size (default: chosen to fit)"
    )
    muon.add_argument(
        "--ns-efficiency",
        type=float,
        default=0.6,
        help="fraction of peak bf16 FLOP/s Newton–Schulz sustains",
    )
    muon.add_argument(
        "--job-numel",
        type=int,
        default=1 << 24,
        help="Muon's job_numel (elements per member per job)",
    )
    muon.add_argument("--ns-steps", type=int, default=5, help="Muon's ns_steps")
    muon.add_argument(
        "--ns-block",
        type=int,
        default=None,
        metavar="ROWS",
        help="Muon's ns_block: opt into block-triangular symmetric products with blocks of "
        "ROWS rows (default: full products; with it, e.g. --ns-block 256 --job-numel "
        "134217728)",
    )
    muon.add_argument(
        "--ns-accuracy",
        default=None,
        metavar="FILE",
        help="Muon's ns_accuracy: per unit shape, 4 minimax_4 steps where this accuracy "
        "table (benchmarks/results/ns_accuracy.json) puts them within 1.10x the 5-step "
        "quintic's polar error and they cost fewer FLOPs, 5 quintic steps elsewhere",
    )
    muon.add_argument(
        "--ns-fp8",
        action="store_true",
        help="Muon's ns_fp8 (needs --ns-accuracy): the table may also choose 5 quintic steps "
        "whose first steps run FP8 products, at the FP8 peak's rate",
    )
    muon.add_argument(
        "--spread",
        default="auto",
        choices=["auto", "on", "off"],
        help="dense units spread over HSDP replicas (Muon's spread_replicas); auto: "
        "whichever the planner predicts faster",
    )
    muon.add_argument(
        "--no-overlap",
        action="store_true",
        help="Muon's overlap_elementwise=False: every momentum pass before Newton–Schulz and "
        "every update after it (default: overlapped with it, as Muon runs on CUDA)",
    )
    muon.add_argument(
        "--rates",
        default=None,
        help="calibration JSON from benchmarks/muon_calibrate.py: measured NS and HBM rates",
    )
    muon.add_argument("--json", action="store_true", help="print JSON instead of a table")
    muon.set_defaults(run=_run_plan_muon)
    layout = plans.add_parser(
        "layout", help="dual-mesh HSDP: per-family memory, collective bytes and minimum GPUs"
    )
    layout.add_argument("--model", default="kimi-k2", help="model preset (tiny, kimi-k2)")
    layout.add_argument("--gpus", type=int, default=512, help="number of GPUs")
    layout.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per node")
    layout.add_argument("--seq-len", type=int, default=8192, help="tokens per sequence")
    layout.add_argument("--batch-size", type=int, default=None, help="global sequences per step")
    layout.add_argument("--json", action="store_true", help="print JSON instead of a table")
    layout.set_defaults(run=_run_plan_layout)

    train = commands.add_parser(
        "train", help="train the MoE transformer under a dual-mesh layout (torchrun or 1 process)"
    )
    train.add_argument("--config", required=True, help="TOML config, e.g. configs/tiny.toml")
    train.add_argument(
        "--layout", default=None, help="layout overrides, e.g. dense_shard=2,cp=2,ep=8"
    )
    train.add_argument("--steps", type=int, default=None, help="override [train] steps")
    train.add_argument("--out", default=None, help="override [train] out directory")
    train.add_argument("--optimizer", choices=["muon", "adamw"], default=None)
    train.add_argument(
        "--resume", action="store_true", help="continue from the latest checkpoint in --out"
    )
    train.add_argument(
        "--init",
        default=None,
        metavar="PATH",
        help="continue training an open checkpoint (Hugging Face directory or GGUF)",
    )
    train.add_argument(
        "--data", nargs="*", default=None, help="text or JSONL files (default: stdlib corpus)"
    )
    train.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="let a tokenizer shipped as Python code in the checkpoint run (Kimi-K2's)",
    )
    train.set_defaults(run=_run_train)

    export = commands.add_parser(
        "export", help="write a training checkpoint or an open checkpoint as a HF directory"
    )
    export.add_argument("source", help="checkpoints/step_<N>, a HF directory or a .gguf file")
    export.add_argument("--hf", required=True, metavar="OUT", help="new output directory")
    export.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="let a tokenizer shipped as Python code in the checkpoint run (Kimi-K2's)",
    )
    export.set_defaults(run=_run_export)

    monitor = commands.add_parser(
        "monitor", help="find reward hacking in agent trajectories (JSONL); exit 1 if found"
    )
    monitor.add_argument("trajectories", help="JSONL file, one trajectory per line")
    monitor.add_argument("--tasks", help="directory holding <task_id>/task.json")
    monitor.add_argument("--json", action="store_true", help="print JSON instead of tables")
    monitor.add_argument("--html", help="also write a one-page HTML report to this file")
    monitor.add_argument(
        "--fail-on",
        default=None,
        choices=["info", "low", "medium", "high", "critical"],
        help="exit 1 if any finding is at least this severe (default: the severity that "
        "zeroes a reward, etude.monitor.ZEROING_SEVERITY)",
    )
    monitor.add_argument(
        "--group",
        action="store_true",
        help="judge each trajectory against the other rollouts of its task (same task_id)",
    )
    monitor.add_argument("--workspace", help="the agent's starting directory (default: /workspace)")
    monitor.set_defaults(run=_run_monitor)

    rl = commands.add_parser(
        "rl", help="RL with targeted textual feedback: `--config FILE` or `experiment toolgrid`"
    )
    rl.add_argument("--config", help="TOML config whose `env` picks the trainer")
    rl.add_argument("experiment", nargs="*", help="`experiment toolgrid`: the multi-seed study")
    rl.add_argument("--out", default="benchmarks/results", help="experiment output directory")
    rl.add_argument("--quick", action="store_true", help="experiment: a tiny smoke-size run")
    rl.add_argument(
        "--ignore-hint-check",
        action="store_true",
        help="experiment: run the arms even if the warm start does not read hints",
    )
    rl.add_argument(
        "--resume", action="store_true", help="coding env: continue from out_dir's checkpoint"
    )
    rl.set_defaults(run=_run_rl)

    curriculum = commands.add_parser(
        "curriculum", help="coding tasks from the example repo and sdists, split train/held-out"
    )
    curriculum.add_argument("--out", required=True, help="curriculum directory")
    curriculum.add_argument("--sdist", nargs="*", default=[], help="sdists to synthesize from")
    curriculum.add_argument("--no-example", action="store_true", help="leave the example out")
    curriculum.add_argument("--heldout-repository", nargs="*", default=[], help="held out whole")
    curriculum.add_argument("--heldout-share", type=float, default=0.3)
    curriculum.add_argument("--seed", type=int, default=0)
    curriculum.add_argument("--max-candidates", type=int, default=4, help="per repository")
    curriculum.add_argument("--max-lines", type=int, default=None, help="deleted, per task")
    curriculum.add_argument("--workers", type=int, default=2)
    curriculum.set_defaults(run=_run_curriculum)

    demos = commands.add_parser(
        "demonstrations", help="scripted-solver trajectories of a curriculum's train tasks"
    )
    demos.add_argument("--curriculum", required=True, help="a directory `etude curriculum` made")
    demos.add_argument("--out", required=True, help="JSONL file (appended; reruns resume)")
    demos.add_argument("--per-task", type=int, default=1)
    demos.add_argument("--seed", type=int, default=0)
    demos.add_argument(
        "--style",
        # demonstrations.STYLES (importing it loads torch)
        choices=("varied", "plain", "grounded", "top", "top_quick", "top_check_first"),
        default="varied",
        help="the solver's style: varied; plain (read, edit, run, answer); grounded (plain, "
        "with no line number or anchor the episode has not shown); top (grounded, every edit "
        "in the file's top: new definitions after the imports); top_quick (top, then only "
        "the import check and the answer); top_check_first (top_quick, with the import check "
        "run first as well, where it fails)",
    )
    demos.set_defaults(run=_run_demonstrations)

    sft = commands.add_parser("sft", help="supervised warm start on trajectory JSONL")
    sft.add_argument("--config", required=True, help="TOML config (configs/sft-smol.toml)")
    sft.add_argument("--resume", action="store_true", help="continue from out_dir's checkpoint")
    sft.set_defaults(run=_run_sft)
    return parser


def _run_sft(args: argparse.Namespace) -> int:
    from etude.recipes.sft import main

    return main(args)


def _run_curriculum(args: argparse.Namespace) -> int:
    from etude.recipes.coding.curriculum import main

    return main(args)


def _run_demonstrations(args: argparse.Namespace) -> int:
    from etude.recipes.coding.demonstrations import main

    return main(args)


def _run_demo(args: argparse.Namespace) -> int:
    from etude.demo import run_demo

    return run_demo(args.out)


def _run_synth(args: argparse.Namespace) -> int:
    from etude.synth.pipeline import main

    return main(
        args.repo,
        args.out,
        workers=args.workers,
        executor=args.executor,
        reveal_signatures=args.reveal_signatures,
        max_candidates=args.max_candidates,
        slow_test_limit=args.slow_test_limit,
    )


def _run_synth_agent(args: argparse.Namespace) -> int:
    from etude.recipes.synth_agent import main

    return main(
        args.repo,
        args.feature,
        args.out,
        backend=args.backend,
        endpoint=args.endpoint,
        model=args.model,
        max_turns=args.max_turns,
        max_new_tokens=args.max_new_tokens,
    )


def _run_grade(args: argparse.Namespace) -> int:
    from etude.synth.grade import main

    return main(args.task, args.workspace, args.out, args.time_limit)


def _run_plan_muon(args: argparse.Namespace) -> int:
    from etude.optim.plan import main

    return main(args)


def _run_plan_layout(args: argparse.Namespace) -> int:
    from etude.parallel.plan import main

    return main(args)


def _run_train(args: argparse.Namespace) -> int:
    from etude.parallel.train import main

    return main(args)


def _run_export(args: argparse.Namespace) -> int:
    from etude.parallel.export import main

    return main(args)


def _run_monitor(args: argparse.Namespace) -> int:
    from etude.monitor.cli import main

    return main(args)


def _run_rl(args: argparse.Namespace) -> int:
    from etude.recipes.cli import main

    return main(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `etude` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 0
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError) as err:
        print(f"etude {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
