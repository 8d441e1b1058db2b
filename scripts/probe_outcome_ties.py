#!/usr/bin/env python3
"""How many training windows share the best outcome (issue 57).

An outcome-conditioned model (`dfmpc train --outcome-condition`) learns each
window's mean reward as its quantile among the training windows. Under a
binary reward many windows tie (a pendulum upright from a window's first
step to its last). This prints, for each set of datasets trained on
together, the windows' count, the share that ties at the best outcome, the
label those windows would share at their middle rank, and the outcome a
planner's target quantile asks for, beside the episodes' mean return and
the steps short of the best reward (the swing-up of a pendulum): how many,
and the share of their actions at |a| >= 0.9, as a CSV.

Example:
  python3 scripts/probe_outcome_ties.py --window 40 --csv ties.csv \\
      --set "mixed=data.h5" --set "mixed + guided=data.h5,guided0.h5"
"""
import argparse
import csv
import sys

import h5py
import numpy as np


def window_means(path, window):
    """The mean reward of every `window` consecutive steps of each episode,
    the episodes' returns, and the steps' rewards and largest action
    magnitudes."""
    with h5py.File(path, "r") as data:
        rewards = np.asarray(data["rewards"], dtype=np.float64)
        magnitudes = np.abs(np.asarray(data["actions"], dtype=np.float64)).max(axis=1)
        starts = np.asarray(data["episode_starts"])
        lengths = np.asarray(data["episode_lengths"])
    returns = [rewards[start:start + length].sum() for start, length in zip(starts, lengths)]
    means = []
    for start, length in zip(starts, lengths):
        if length < window:
            continue
        sums = np.concatenate([[0.0], np.cumsum(rewards[start:start + length])])
        means.append((sums[window:] - sums[:-window]) / window)
    return (np.concatenate(means) if means else np.zeros(0)), returns, rewards, magnitudes


def parse_set(text):
    label, sep, paths = text.partition("=")
    if not sep or not label or not paths:
        raise argparse.ArgumentTypeError(f"expected LABEL=FILE[,FILE...], not '{text}'")
    return label, paths.split(",")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=parse_set, action="append", required=True,
                        metavar="LABEL=FILE[,FILE...]", help="datasets trained on together")
    parser.add_argument("--window", type=int, default=40, help="train --window (default 40)")
    parser.add_argument("--target", type=float, default=0.9,
                        help="the planner's target_outcome (default 0.9)")
    parser.add_argument("--csv", required=True, help="output CSV")
    args = parser.parse_args()
    if args.window < 1:
        parser.error("--window must be >= 1")
    rows = []
    for label, paths in args.set:
        try:
            read = [window_means(path, args.window) for path in paths]
        except (OSError, KeyError) as error:
            sys.exit(f"probe_outcome_ties: {label}: {error}")
        means = np.concatenate([part[0] for part in read])
        returns = [r for part in read for r in part[1]]
        rewards = np.concatenate([part[2] for part in read])
        magnitudes = np.concatenate([part[3] for part in read])
        short = rewards < rewards.max()
        if means.size == 0:
            sys.exit(f"probe_outcome_ties: {label}: no episode is {args.window} steps long")
        best = means.max()
        tied = np.abs(means - best) <= 1e-9 * max(1.0, abs(best))
        below = np.count_nonzero(~tied)
        rows.append({
            "data": label,
            "episodes": len(returns),
            "episode_return": f"{np.mean(returns):.1f}",
            "windows": means.size,
            "best_outcome": f"{best:.3f}",
            "share_tied_at_best": f"{tied.mean():.3f}",
            "mid_rank_label_of_best": f"{(below + 0.5 * tied.sum()) / means.size:.3f}",
            "target": args.target,
            "outcome_at_target": f"{np.quantile(means, args.target):.3f}",
            "steps_short_of_best": int(short.sum()),
            "saturated_when_short": f"{np.mean(magnitudes[short] >= 0.9):.3f}",
        })
    with open(args.csv, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(open(args.csv).read(), end="")


if __name__ == "__main__":
    main()
