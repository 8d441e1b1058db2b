#!/usr/bin/env python3
"""Where does a task file's action gain act: on the robot, or through the
model's context? Plans each episode three ways with the same model and
planner seed, the gain applied here rather than by the planner:

  gain 1           the plan's action as it is;
  gain             the task file's gain above its knee, the amplified
                   action in the model's context (what the planner does);
  gain (raw context)  the amplified action applied to the robot, the plan's
                   own action given to the model as the one executed.

If the third scores like the second, the gain helps by driving the robot
harder than the model's plans do, not by showing the model a bolder past.
Writes one CSV row per arm: return mean and std, mean |a| of the applied
actions and the fraction at or above 0.9 in magnitude, beside the same
statistics of the model's training data when --data is given.

    PYTHONPATH=build/python python3 scripts/probe_action_gain.py \\
        --model examples/models/pendulum_swingup.pt --episodes 10 --seed 1 --csv gain.csv
"""

import argparse
import csv
import pathlib
import sys

import numpy as np

import dfmpc

EPISODE_SEED_STRIDE = 1000003  # `dfmpc eval --seed S`'s episodes: S * stride + i
SATURATED = 0.9


def amplify(action, gain, knee):
    magnitude = np.abs(action)
    boosted = np.sign(action) * (knee + gain * (magnitude - knee))
    return np.clip(np.where(magnitude > knee, boosted, action), -1.0, 1.0)


def run_arm(args, arm, gain, knee):
    returns, applied = [], []
    for episode in range(args.episodes):
        planner = dfmpc.Planner.from_file(args.model, action_gain=1.0, threads=1)
        env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat)
        observation, _ = env.reset(seed=args.seed * EPISODE_SEED_STRIDE + episode)
        planner.reset(observation)
        planned = planner.act(observation)
        total = 0.0
        for _ in range(env.episode_length):
            action = planned if arm == "gain 1" else amplify(planned, gain, knee)
            observation, reward, _, _, _ = env.step(action)
            total += reward
            applied.append(np.abs(action))
            planner.observe(observation, planned if arm == "gain (raw context)" else action)
            planner.optimize()
            planned = planner.action()
        returns.append(total)
        print(f"\r{arm}: episode {episode + 1}/{args.episodes}, return {total:.1f}", end="",
              file=sys.stderr, flush=True)
    print(file=sys.stderr)
    magnitudes = np.concatenate(applied)
    return [np.mean(returns), np.std(returns), magnitudes.mean(), np.mean(magnitudes >= SATURATED)]


def data_row(path):
    """The data's action statistics (its returns count physics steps, not eval's)."""
    import h5py  # only needed with --data
    with h5py.File(path, "r") as f:
        magnitudes = np.abs(np.asarray(f["actions"])).ravel()
    return [None, None, magnitudes.mean(), np.mean(magnitudes >= SATURATED)]


def format_figure(column, value):
    if value is None:
        return ""
    return f"{value:.4f}" if column > 1 else f"{value:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("--model", required=True, help="world model file")
    parser.add_argument("--episodes", type=int, default=10, help="episodes per arm")
    parser.add_argument("--seed", type=int, default=1, help="episodes of `dfmpc eval --seed S`")
    parser.add_argument("--data", help="the model's training data, for its action statistics")
    parser.add_argument("--csv", required=True, help="CSV to write")
    args = parser.parse_args()
    if args.episodes < 1:
        parser.error("--episodes must be at least 1")

    options = dfmpc.Planner.from_file(args.model).options
    gain, knee = options.action_gain, options.action_gain_knee
    if gain == 1.0:
        parser.error(f"{args.model}: its task file sets no action gain, nothing to probe")
    rows = [[arm, *run_arm(args, arm, gain, knee)]
            for arm in ("gain 1", "gain", "gain (raw context)")]
    if args.data:
        rows.append(["data", *data_row(args.data)])
    out = pathlib.Path(args.csv)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["arm", "task_gain", "task_knee", "episodes", "seed", "return_mean", "return_std",
                         "mean_abs_a", "fraction_saturated"])
        for arm, *figures in rows:
            setting = [gain, knee, args.episodes, args.seed] if arm != "data" else [""] * 4
            writer.writerow([arm, *setting] +
                            [format_figure(i, x) for i, x in enumerate(figures)])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
