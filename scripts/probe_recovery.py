#!/usr/bin/env python3
"""How the data's policy recovers: for each episode, the first control step
at which one observation feature falls below LOW, and the steps from there
until it first reaches HIGH again (empty when it never does), beside the
fraction of all steps spent below LOW. For a walker, the torso's height:
how long its data takes to get up from the floor, against the plan's
horizon.

    PYTHONPATH=build/python python3 scripts/probe_recovery.py walker_walk.h5 \\
        --feature 14 --low 0.5 --high 1.2 --csv recovery.csv
"""

import argparse
import csv

import numpy as np

import dfmpc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="a state dataset from `dfmpc collect`")
    parser.add_argument("--feature", type=int, required=True, help="observation column")
    parser.add_argument("--low", type=float, required=True, help="a fall: the feature below this")
    parser.add_argument("--high", type=float, required=True, help="recovered: at or above this")
    parser.add_argument("--csv", required=True, help="output CSV, one row per episode")
    args = parser.parse_args()
    if args.low >= args.high:
        parser.error(f"--low ({args.low}) must lie below --high ({args.high})")
    try:
        data = dfmpc.read_dataset(args.data, frames=False)
    except RuntimeError as error:
        parser.error(str(error))
    size = data["info"]["observation_size"]
    if not 0 <= args.feature < size:
        parser.error(f"--feature {args.feature} is not a column of {size} observations")

    rows = []
    below = 0
    for episode, (start, length) in enumerate(zip(data["episode_starts"], data["episode_lengths"])):
        values = data["observations"][start:start + length, args.feature]
        below += int(np.sum(values < args.low))
        falls = np.flatnonzero(values < args.low)
        fall = int(falls[0]) if len(falls) else None
        recovered = None
        if fall is not None:
            ups = np.flatnonzero(values[fall:] >= args.high)
            recovered = int(ups[0]) if len(ups) else None
        rows.append([episode, f"{data['episode_returns'][episode]:.1f}",
                     "" if fall is None else fall, "" if recovered is None else recovered])
    fraction = below / len(data["observations"])
    with open(args.csv, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["episode", "return", "first_fall_step", "steps_to_recover",
                         "fraction_of_all_steps_below"])
        for row in rows:
            writer.writerow(row + [f"{fraction:.3f}"])
    times = [row[3] for row in rows if row[3] != ""]
    print(f"{len(times)} of {len(rows)} episodes fall and recover; median "
          f"{np.median(times) if times else float('nan'):.0f} steps to recover; "
          f"{fraction:.1%} of all steps below {args.low}; wrote {args.csv}")


if __name__ == "__main__":
    main()
