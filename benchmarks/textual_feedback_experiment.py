"""The ToolGrid feedback-modes experiment (what `etude rl experiment toolgrid` runs).

Arms: RL only; + KL to the live hinted teacher (λ = 0.5, the seed method); advantage
re-weighting with the live and with a frozen teacher (refreshed every 10 updates when the
training reward has not dropped); gated forward KL (λ = 0.5) with the live and with the
frozen teacher. The same episode budget for every arm, several seeds, success on held-out
tool registries, paired-by-seed bootstrap 95% intervals against RL only, curves. Sizes come
from configs/toolgrid.toml. The pre-flight gap check runs first and is printed; the arms do
not start when the gap is about zero (unless --ignore-hint-check). After the arms, every
run's final policy and the warm start are evaluated again on 240 held-out episodes (the
in-run evaluations' 48 leave a standard error as large as the differences between arms):
that final evaluation, `final_evaluation` in the summary, is the experiment's comparison.

It resumes: rerun the same command after an interruption and the warm start, the gap check
and every finished run are reused (runs/toolgrid/experiment-modes/).

    .venv/bin/python benchmarks/textual_feedback_experiment.py [--seeds 0 1 2] [--workers 2]
        -> benchmarks/results/textual_feedback_modes.json and textual_feedback_modes.png
        (3 seeds: 18 runs of 4-7 minutes, two at a time, after a ~25-minute warm start:
        1.5-2 hours on the shared 2-core machine)
    .venv/bin/python benchmarks/textual_feedback_experiment.py --arms "kl λ=0.5" \
        "advantage_weight frozen"
        only those arms and "rl" (the rest can be added by a later run in the same folder)
    .venv/bin/python benchmarks/textual_feedback_experiment.py --from-logs
        rebuilds the summary from the runs' logs (arms whose seeds all finished)
    .venv/bin/python benchmarks/textual_feedback_experiment.py --quick --out /tmp/smoke
        a smoke-size run end to end (its numbers mean nothing)

On SmolLM2-135M-Instruct (a warm start that teaches it the call format, then the arms):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/textual_feedback_experiment.py \
        --config configs/toolgrid-smollm2-cpu.toml --arms "kl λ=0.5" \
        "advantage_weight frozen" --final-episodes 64 --gap-tasks 64 --gap-episodes 16 \
        --gap-mistakes 32 --out benchmarks/results/textual_feedback_smollm2
        the CPU size: 3 arms x 3 seeds, about two hours on the 2-core machine
    (the arm "advantage_weight next_turn frozen" puts the hint after the failed call and
    weights the student's next turn, "kl λ=0.5 forward next_turn frozen" distills the
    frozen teacher's whole distribution there: docs/textual-feedback.md, "The hint on the
    turn after the mistake")

The 5-seed versions for the single-H200 machine: benchmarks/textual_feedback_h200.sh (the
byte policy, on the machine's CPU cores) and benchmarks/textual_feedback_smollm2_h200.sh
(SmolLM2 on the GPU, `--device cuda`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from etude.recipes.toolgrid.experiment import main, summarize_logs
from etude.recipes.toolgrid.train import load_config

RESULTS = Path(__file__).parent / "results"
CONFIG = Path(__file__).parents[1] / "configs" / "toolgrid.toml"

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--lam", type=float, default=0.5)
    parser.add_argument("--config", default=str(CONFIG))
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument(
        "--final-episodes",
        type=int,
        default=240,
        help="held-out episodes of each run's final evaluation (0: none)",
    )
    parser.add_argument(
        "--arms",
        nargs="+",
        default=None,
        help='run only these arms (and "rl"); more can be added later in the same runs',
    )
    parser.add_argument(
        "--gap-mistakes",
        type=int,
        default=100,
        help="unhinted held-out episodes whose failed calls the gap check scores hints at "
        "(0: the first-call check alone)",
    )
    parser.add_argument(
        "--gap-tasks", type=int, default=300, help="held-out tasks of the first-call check"
    )
    parser.add_argument(
        "--gap-episodes",
        type=int,
        default=100,
        help="hinted and unhinted held-out episodes of the continuation-success check",
    )
    parser.add_argument(
        "--device", choices=["cpu", "cuda"], help="where the policies run (default: the config's)"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--ignore-hint-check", action="store_true")
    parser.add_argument("--from-logs", action="store_true")
    args = parser.parse_args()
    if args.from_logs:
        base = load_config(args.config)
        runs = Path(base.out_dir) / "experiment-modes"
        summarize_logs(runs, base, args.seeds, args.lam, Path(args.out))
        raise SystemExit(0)
    raise SystemExit(
        main(
            args.out,
            quick=args.quick,
            config=args.config,
            require_hint_reading=not args.ignore_hint_check,
            seeds=tuple(args.seeds),
            workers=args.workers,
            lam=args.lam,
            final_episodes=args.final_episodes,
            arm_names=args.arms,
            gap_mistakes=args.gap_mistakes,
            gap_tasks=args.gap_tasks,
            gap_episodes=args.gap_episodes,
            device=args.device,
        )
    )
