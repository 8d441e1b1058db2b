#!/usr/bin/env python3
"""Do the planner's plans come true? Runs a model's planner closed-loop and,
at every control step, holds the kept plan's predicted observations against
the ones the robot then reaches: plan row k (the token of step p + k + 1,
tokens.h) against the observation k + 1 steps later.

Writes one CSV row per arm and look-ahead k: the error of the predicted
observations in units of each feature's spread in the training data (root
mean square over steps and features), and the mean predicted and reached
value of one feature (--feature, e.g. a speed the reward reads). A plan
that promises a speed the robot never reaches is the model's error the
planner chose; a plan that promises none is a planner that never found one.

Each arm is LABEL MODEL [key=value ...], the planner options overridden
as in Planner.from_file:

    PYTHONPATH=build/python python3 scripts/probe_plan_realism.py \\
        --data data.h5 --feature 8 --episodes 5 --seed 1 --ahead 1 8 16 31 --csv realism.csv \\
        --arm none none0.pt --arm "reward w=1" reward0.pt outcome_guidance=1
"""

import argparse
import csv
import sys

import numpy as np

import dfmpc

EPISODE_SEED_STRIDE = 1000003  # `dfmpc eval --seed S`'s episodes: S * stride + i


def parse_arm(words, parser):
    """LABEL MODEL [key=value ...] into (label, model, planner overrides)."""
    if len(words) < 2:
        parser.error(f"--arm needs LABEL MODEL [key=value ...], got {words}")
    options = {}
    for item in words[2:]:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--arm {words[0]}: expected key=value, not '{item}'")
        for kind in (int, float, str):  # candidates=1, outcome_guidance=1.5, selection=mppi
            try:
                options[key] = kind(value)
                break
            except ValueError:
                continue
    return words[0], words[1], options


def run_episode(model, options, seed, horizon_rows):
    """The episode's return, its observations and every step's predicted ones."""
    planner = dfmpc.Planner.from_file(model, threads=1, **options)
    env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat)
    observation, _ = env.reset(seed=seed)
    planner.reset(observation)
    action = planner.act(observation)
    observations, predictions, total = [observation], [], 0.0
    for _ in range(env.episode_length):
        predictions.append(np.array(planner.plan.observations[:horizon_rows]))
        observation, reward, terminated, truncated, _ = env.step(action)
        total += reward
        observations.append(observation)
        if terminated or truncated:
            break
        action = planner.act(observation)
    return total, np.array(observations), predictions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("--arm", nargs="+", action="append", required=True,
                        metavar="WORD", help="LABEL MODEL [key=value ...]; repeat for each arm")
    parser.add_argument("--data", required=True, help="the models' training data (for spreads)")
    parser.add_argument("--feature", type=int, required=True, help="observation column to follow")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1, help="episodes as `dfmpc eval --seed`")
    parser.add_argument("--ahead", type=int, nargs="+",
                        help="look-aheads (plan rows + 1) to write; default: every one")
    parser.add_argument("--csv", required=True, help="output CSV")
    args = parser.parse_args()
    if args.episodes < 1:
        parser.error("--episodes must be >= 1")

    arms = [parse_arm(words, parser) for words in args.arm]
    try:
        data = dfmpc.read_dataset(args.data, frames=False)
    except RuntimeError as error:
        parser.error(str(error))
    spread = np.asarray(data["observations"]).std(axis=0)
    if not 0 <= args.feature < spread.size:
        parser.error(f"--feature must be in [0, {spread.size}), the data's observation columns")
    spread[spread == 0] = 1.0

    rows = []
    for label, model, options in arms:
        try:
            horizon = int(dfmpc.Planner.from_file(model, **options).options.horizon)
        except (RuntimeError, ValueError, TypeError) as error:
            parser.error(f"--arm {label}: {error}")
        squared = np.zeros(horizon)
        predicted, reached, counts = np.zeros(horizon), np.zeros(horizon), np.zeros(horizon)
        returns = []
        for episode in range(args.episodes):
            total, observations, predictions = run_episode(
                model, options, args.seed * EPISODE_SEED_STRIDE + episode, horizon)
            returns.append(total)
            steps = len(observations) - 1
            for p, plan in enumerate(predictions):
                k = min(len(plan), steps - p)  # rows whose step the episode reached
                valid = ~np.isnan(plan[:k]).any(axis=1)
                ahead = np.arange(k)[valid]
                truth = observations[p + 1 + ahead]
                error = (plan[ahead] - truth) / spread
                squared[ahead] += (error ** 2).mean(axis=1)
                predicted[ahead] += plan[ahead, args.feature]
                reached[ahead] += truth[:, args.feature]
                counts[ahead] += 1
            print(f"\r{label}: episode {episode + 1}/{args.episodes}, return {total:.1f}",
                  end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        for k in range(horizon):
            if counts[k] == 0 or (args.ahead and k + 1 not in args.ahead):
                continue
            rows.append({"arm": label, "return_mean": f"{np.mean(returns):.1f}",
                         "ahead": k + 1,
                         "error_rms": f"{np.sqrt(squared[k] / counts[k]):.3f}",
                         "feature_predicted": f"{predicted[k] / counts[k]:.3f}",
                         "feature_reached": f"{reached[k] / counts[k]:.3f}"})
    with open(args.csv, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.csv}", file=sys.stderr)


if __name__ == "__main__":
    main()
