#!/usr/bin/env python3
"""The README's closed-loop demo from Python: the planner swings up the
pendulum with the shipped world model; prints the return and writes the
actions and rewards per step as CSV. Same seed, same actions as
`dfmpc control` (scripts/demo.sh).

    PYTHONPATH=build/python python3 examples/python/control.py --seed 0
"""

import argparse
import csv
import pathlib
import sys
import time

import dfmpc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "examples/models/pendulum_swingup.pt"),
                        help="world model file (default: the shipped pendulum model)")
    parser.add_argument("--seed", type=int, default=0, help="episode seed (initial state)")
    parser.add_argument("--steps", type=int, default=0,
                        help="control steps (0: the task's whole episode)")
    parser.add_argument("--out", default="out/python_control/steps.csv", help="CSV per step")
    args = parser.parse_args()

    planner = dfmpc.Planner.from_file(args.model)
    env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat)
    steps = args.steps or env.episode_length
    observation, _ = env.reset(seed=args.seed)
    planner.reset(observation)
    rows, total = [], 0.0
    start = time.monotonic()
    for step in range(steps):
        action = planner.act(observation)
        observation, reward, _, _, _ = env.step(action)
        total += reward
        rows.append([step, reward, *action])
        if (step + 1) % 100 == 0 or step + 1 == steps:
            print(f"\r{planner.task}: step {step + 1}/{steps}, return {total:.1f}", end="",
                  file=sys.stderr, flush=True)
    print(file=sys.stderr)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", "reward"] + [f"action{i}" for i in range(planner.action_dim)])
        writer.writerows(rows)
    print(f"return {total:.1f} over {steps} steps in {time.monotonic() - start:.1f} s; "
          f"wrote {out}")


if __name__ == "__main__":
    main()
