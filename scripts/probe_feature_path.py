#!/usr/bin/env python3
"""Where a distance goes in each episode of a dataset: the norm of some
observation features (a block's offset from its goal, a fingertip's from a
target) at the start, at its smallest and at the end, and how many steps
it spends within a radius. A policy that brings the distance under the
radius and then leaves it (the minimum far below the end) found the goal
and could not stay; one whose distance never falls never found it.

    dfmpc collect --task push --policy dfmpc --model push.pt --episodes 20 --seed 100 --out planner.h5
    PYTHONPATH=build/python python3 scripts/probe_feature_path.py planner.h5 \\
        --features 8 9 --within 0.05 --csv path.csv
"""

import argparse
import csv

import numpy as np

import dfmpc


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="a state dataset from `dfmpc collect`")
    parser.add_argument("--features", type=int, nargs="+", required=True,
                        help="observation columns whose Euclidean norm is the distance")
    parser.add_argument("--within", type=float, required=True,
                        help="the radius: steps with the distance at or below it are counted")
    parser.add_argument("--csv", required=True, help="output CSV, one row per episode and a mean")
    args = parser.parse_args()
    if args.within <= 0:
        parser.error(f"--within must be > 0, got {args.within}")
    try:
        data = dfmpc.read_dataset(args.data, frames=False)
    except RuntimeError as error:
        parser.error(str(error))
    size = data["info"]["observation_size"]
    for feature in args.features:
        if not 0 <= feature < size:
            parser.error(f"--features {feature} is not a column of {size} observations")
    return args, data


def episode_rows(distances, within):
    """One row per episode from its distances, one per observation."""
    rows = []
    for episode, distance in enumerate(distances):
        smallest = int(np.argmin(distance))
        rows.append({"episode": episode, "start": float(distance[0]),
                     "min": float(distance[smallest]), "min_step": smallest,
                     "end": float(distance[-1]),
                     "steps_within": int(np.count_nonzero(distance[1:] <= within)),
                     "ends_farther_than_start": int(distance[-1] > distance[0])})
    return rows


def main():
    args, data = parse_args()
    observations, next_observations = data["observations"], data["next_observations"]
    starts, lengths = data["episode_starts"], data["episode_lengths"]
    # An episode of n steps has n + 1 observations: its n `observations`
    # and its last `next_observations`.
    distances = []
    for start, length in zip(starts, lengths):
        path = np.concatenate([observations[start:start + length],
                               next_observations[start + length - 1:start + length]])
        distances.append(np.linalg.norm(path[:, args.features], axis=1))
    rows = episode_rows(distances, args.within)
    columns = list(rows[0])
    with open(args.csv, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})
        mean = {k: f"{np.mean([r[k] for r in rows]):.4f}" for k in columns[1:]}
        writer.writerow({"episode": "mean", **mean})
    farther = sum(r["ends_farther_than_start"] for r in rows)
    print(f"{len(rows)} episodes: the distance ends farther than it started in {farther}; "
          f"mean start {np.mean([r['start'] for r in rows]):.3f}, "
          f"min {np.mean([r['min'] for r in rows]):.3f}, end {np.mean([r['end'] for r in rows]):.3f}; "
          f"wrote {args.csv}")


if __name__ == "__main__":
    main()
