#!/usr/bin/env python3
"""Where a distance goes in each episode of a dataset: the norm of some
observation features (a block's offset from its goal, a fingertip's from a
target) at the start, at its smallest and at the end, and how many steps
it spends within a radius. A policy that brings the distance under the
radius and then leaves it (the minimum far below the end) found the goal
and could not stay; one whose distance never falls never found it.

With --velocity (the moving thing's velocity, as many columns as
--features, which then must be the offset from it to its goal: goal minus
object), also the share of steps it moves faster than --min-speed and,
of those, the share that moves it toward the goal (velocity along the
offset). Data in which the object only ever moves toward its goal teaches
a model that it does, whatever pushes it.

    dfmpc collect --task push --policy dfmpc --model push.pt --episodes 20 --seed 100 --out planner.h5
    PYTHONPATH=build/python python3 scripts/probe_feature_path.py planner.h5 \\
        --features 8 9 --within 0.05 --velocity 12 13 --csv path.csv
"""

import argparse
import csv

import numpy as np

import dfmpc
from dataset_copy import episode_observations


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="a state dataset from `dfmpc collect`")
    parser.add_argument("--features", type=int, nargs="+", required=True,
                        help="observation columns whose Euclidean norm is the distance")
    parser.add_argument("--within", type=float, required=True,
                        help="the radius: steps with the distance at or below it are counted")
    parser.add_argument("--velocity", type=int, nargs="+", default=[],
                        help="the object's velocity columns, one per --features column")
    parser.add_argument("--min-speed", type=float, default=0.01,
                        help="with --velocity: a step moves above this speed (default 0.01)")
    parser.add_argument("--csv", required=True, help="output CSV, one row per episode and a mean")
    args = parser.parse_args()
    if args.within <= 0:
        parser.error(f"--within must be > 0, got {args.within}")
    if args.velocity and len(args.velocity) != len(args.features):
        parser.error(f"--velocity needs {len(args.features)} columns, one per --features column, "
                     f"got {len(args.velocity)}")
    try:
        data = dfmpc.read_dataset(args.data, frames=False)
    except RuntimeError as error:
        parser.error(str(error))
    size = data["info"]["observation_size"]
    for option, columns in (("--features", args.features), ("--velocity", args.velocity)):
        for column in columns:
            if not 0 <= column < size:
                parser.error(f"{option} {column} is not a column of {size} observations")
    return args, data


def episode_row(offsets, velocities, within, min_speed):
    """One episode's row from its offsets (and velocities: None or the same
    shape), one per observation."""
    distance = np.linalg.norm(offsets, axis=1)
    smallest = int(np.argmin(distance))
    row = {"start": float(distance[0]), "min": float(distance[smallest]), "min_step": smallest,
           "end": float(distance[-1]),
           "steps_within": int(np.count_nonzero(distance[1:] <= within)),
           "ends_farther_than_start": int(distance[-1] > distance[0])}
    if velocities is not None:
        moving = np.linalg.norm(velocities, axis=1) > min_speed
        closing = np.sum(velocities[moving] * offsets[moving], axis=1) > 0
        row["moving_share"] = float(np.mean(moving))
        row["moving_toward_share"] = float(np.mean(closing)) if closing.size else float("nan")
    return row


def main():
    args, data = parse_args()
    rows = []
    for episode, (start, length) in enumerate(zip(data["episode_starts"], data["episode_lengths"])):
        path = episode_observations(data, start, length)
        velocities = path[:, args.velocity] if args.velocity else None
        rows.append({"episode": episode, **episode_row(path[:, args.features], velocities,
                                                       args.within, args.min_speed)})
    columns = list(rows[0])
    with open(args.csv, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})
        mean = {k: f"{np.nanmean([r[k] for r in rows]):.4f}" for k in columns[1:]}
        writer.writerow({"episode": "mean", **mean})
    farther = sum(r["ends_farther_than_start"] for r in rows)
    toward = (f"; moving toward the goal in {mean['moving_toward_share']} of its moving steps"
              if args.velocity else "")
    print(f"{len(rows)} episodes: the distance ends farther than it started in {farther}; "
          f"mean start {mean['start']}, min {mean['min']}, end {mean['end']}{toward}; "
          f"wrote {args.csv}")


if __name__ == "__main__":
    main()
