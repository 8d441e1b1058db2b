"""`dfmpc tune` (and `python3 -m dfmpc.tuning`): the command line of the tuner."""

import argparse
import signal
import sys

from .study import tune

EPILOG = """\
The search space (defaults: horizon, levels unless the model is distilled,
renoise_levels, calls_per_step, candidates, selection, temperature,
noise_scale, noise_scale_share, action_window, action_gain, action_gain_knee,
front_tokens, refresh_every;
value_weight and value_step with --value-model) is changed by --space:
  --space temperature=0.02:0.5:log   a range (LOW:HIGH, :log for a log scale)
  --space candidates=8,16            choices
  --space selection=mppi             a fixed value
Each trial runs --episodes episodes from the initial states of `dfmpc eval
--seed SEED`; the comparison at the end adds --check-episodes of
--check-seed, which the search never saw; --score worst-quarter scores
them by their worst quarter instead of their mean. Before the choice, the
four settings of best score (and the smoothest near them) run again on
--confirm-episodes more episodes of --seed. With --perturb or --randomize
every episode runs in the perturbed task (the names of eval --help), and
the comparison adds the unseen episodes unperturbed. Ctrl-C stops the
search and writes the best finished trial's table.
"""


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="dfmpc tune", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Find a task's planner options for a model with Optuna (TPE, median "
                    "pruning) on held-out episodes under a warm-step latency budget, and "
                    "write them as the task file's [planner] table.")
    parser.add_argument("--task", required=True, help="a built-in task or a task folder")
    parser.add_argument("--model", required=True, help="the world model file (dfmpc train)")
    parser.add_argument("--budget-ms", type=float, default=10.0,
                        help="refuse settings whose warm-step p99 exceeds this (default 10)")
    parser.add_argument("--trials", type=int, default=40, help="settings tried (default 40)")
    parser.add_argument("--episodes", type=int, default=5,
                        help="episodes per trial (default 5)")
    parser.add_argument("--seed", type=int, default=1,
                        help="the trials' episode seed, as eval --seed (default 1)")
    parser.add_argument("--check-episodes", type=int, default=10,
                        help="episodes of the closing comparison per setting; 0: none "
                             "(default 10)")
    parser.add_argument("--check-seed", type=int, default=0,
                        help="the comparison's unseen episode seed (default 0)")
    parser.add_argument("--confirm-episodes", type=int, default=10,
                        help="the leading settings run again on this many more episodes "
                             "of --seed before the choice; 0: none (default 10)")
    parser.add_argument("--steps", type=int, default=0,
                        help="control steps per episode; 0: the task's episode (default 0)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="trials run at once, one process and thread each; 0: the cores")
    parser.add_argument("--minutes", type=float, default=0.0,
                        help="start no trial after this many minutes; 0: no limit")
    parser.add_argument("--space", action="append", default=[], metavar="KEY=RANGE",
                        help="search KEY over LOW:HIGH[:log] or A,B,...; KEY=VALUE fixes it")
    parser.add_argument("--keys", help="search only these keys of the default space "
                                       "(comma-separated)")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="settings within this share of the best return count as "
                             "equal, and the smoothest wins (default 0.01)")
    parser.add_argument("--score", choices=("mean", "worst-quarter"), default="mean",
                        help="what a setting's episodes score: their mean return, or the mean "
                             "of their worst quarter, which a setting that fails an initial "
                             "state loses (default mean)")
    parser.add_argument("--max-abs-da", type=float, default=0.0,
                        help="refuse settings whose executed actions change by more than "
                             "this per control step (mean |Δa| over the episodes); 0: no "
                             "limit (default 0)")
    parser.add_argument("--perturb", default="", metavar="NAME=VALUE,...",
                        help="every episode in a task perturbed by these fixed values, as "
                             "eval --perturb (e.g. mass=1.5)")
    parser.add_argument("--randomize", default="", metavar="NAME=LOW:HIGH,...",
                        help="every episode in a task perturbed by values drawn per episode "
                             "from these ranges, as eval --randomize (e.g. "
                             "mass=0.7:1.5,delay=0:2): the search scores robustness")
    parser.add_argument("--out", default="",
                        help="write the task file with the tuned table here instead of "
                             "over the task file (then the model is not stamped)")
    parser.add_argument("--csv", default="", help="the comparison's CSV "
                                                  "(default tune_TASK.csv)")
    parser.add_argument("--no-stamp", action="store_true",
                        help="do not stamp the model with the rewritten task file")
    parser.add_argument("--sampler-seed", type=int, default=0, help="the TPE sampler's seed")
    parser.add_argument("--value-model", default="",
                        help="a critic (dfmpc train-value) to plan with; adds its weight and "
                             "step to the space")
    parser.add_argument("--tool", default="", help=argparse.SUPPRESS)  # set by `dfmpc tune`
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    # SIGINT stops the search even where a shell started the tuner in the
    # background, which would have it ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    keys = tuple(k.strip() for k in args.keys.split(",") if k.strip()) if args.keys else None
    try:
        result = tune(args.task, args.model, budget_ms=args.budget_ms, trials=args.trials,
                      episodes=args.episodes, seed=args.seed,
                      check_episodes=args.check_episodes, check_seed=args.check_seed,
                      confirm_episodes=args.confirm_episodes,
                      steps=args.steps, jobs=args.jobs, minutes=args.minutes,
                      space=tuple(args.space), keys=keys, tolerance=args.tolerance,
                      score=args.score, max_abs_da=args.max_abs_da, perturb=args.perturb,
                      randomize=args.randomize,
                      out=args.out, csv=args.csv, stamp=not args.no_stamp,
                      sampler_seed=args.sampler_seed, value_model=args.value_model,
                      tool=args.tool)
    except KeyboardInterrupt:
        print("\ntune: interrupted", file=sys.stderr)
        return 130
    except (ValueError, RuntimeError, OSError) as error:
        print(f"dfmpc tune: error: {error}", file=sys.stderr)
        return 1
    if result.interrupted:
        return 130
    return 0 if result.table_path else 1


if __name__ == "__main__":
    sys.exit(main())
