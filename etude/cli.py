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

    plan = commands.add_parser("plan", help="predict how a job distributes over GPUs")
    plans = plan.add_subparsers(dest="plan_kind", metavar="KIND", required=True)
    muon = plans.add_parser(
        "muon", help="sharded Muon: owner assignment and predicted optimizer step time"
    )
    muon.add_argument("--model", default="kimi-k2", help="model preset (tiny, kimi-k2)")
    muon.add_argument("--gpus", type=int, default=512, help="number of GPUs")
    muon.add_argument("--gpu", default="h200", choices=["h100", "h200"], help="GPU kind")
    muon.add_argument("--json", action="store_true", help="print JSON instead of a table")
    muon.set_defaults(run=_run_plan_muon)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    from etude.demo import run_demo

    return run_demo(args.out)


def _run_plan_muon(args: argparse.Namespace) -> int:
    from etude.optim.plan import main

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
