#!/usr/bin/env python3
"""Can the data's actions be imitated from what the planner sees? Trains a
behaviour-cloning MLP (the current observation, and with --previous-action
the action before it, as a world model's token has them; to the action taken)
on a dataset from `dfmpc collect`, then runs it closed-loop on the dataset's
task over the episodes of `dfmpc eval --seed S`, and writes one CSV row per
run: its return beside the data's own. A clone that runs near the data says
the planner's policy, not the data, is what falls short; one that does not
says the data's actions are not a function of its observations that a cloner
can learn. Needs Debian's python3-torch.

    PYTHONPATH=build/python python3 scripts/probe_behaviour_cloning.py cheetah_run.h5 \\
        --episodes 10 --seed 1 --runs 3 --csv bc.csv
"""

import argparse
import csv
import sys
import time

import numpy as np

import dfmpc

EPISODE_SEED_STRIDE = 1000003  # `dfmpc eval --seed S`'s episodes: S * stride + i


def inputs_of(observations, previous_actions, use_previous):
    return np.concatenate([observations, previous_actions], axis=1) if use_previous else observations


def training_pairs(data, use_previous):
    """(inputs, actions) over every step, the previous action zero at an episode's start."""
    actions = data["actions"]
    previous = np.zeros_like(actions)
    for start, length in zip(data["episode_starts"], data["episode_lengths"]):
        previous[start + 1:start + length] = actions[start:start + length - 1]
    return inputs_of(data["observations"], previous, use_previous), actions


class Clone:
    """An MLP on normalized inputs whose output is clipped to the data's action range."""

    def __init__(self, torch, inputs, actions, width, seed):
        torch.manual_seed(seed)
        self.torch = torch
        self.mean = inputs.mean(0)
        self.scale = inputs.std(0) + 1e-6
        self.low, self.high = actions.min(0), actions.max(0)
        nn = torch.nn
        self.net = nn.Sequential(nn.Linear(inputs.shape[1], width), nn.GELU(),
                                 nn.Linear(width, width), nn.GELU(),
                                 nn.Linear(width, actions.shape[1]))

    def fit(self, inputs, actions, steps, batch, seed):
        torch = self.torch
        x = torch.tensor((inputs - self.mean) / self.scale, dtype=torch.float32)
        y = torch.tensor(actions, dtype=torch.float32)
        generator = torch.Generator().manual_seed(seed)
        optimizer = torch.optim.AdamW(self.net.parameters(), lr=1e-3, weight_decay=1e-4)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
        for step in range(steps):
            rows = torch.randint(0, len(x), (batch,), generator=generator)
            loss = torch.nn.functional.mse_loss(self.net(x[rows]), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
        with torch.no_grad():
            return float(torch.nn.functional.mse_loss(self.net(x), y))

    def act(self, inputs):
        with self.torch.no_grad():
            x = self.torch.tensor((inputs - self.mean) / self.scale, dtype=self.torch.float32)
            return np.clip(self.net(x[None])[0].numpy(), self.low, self.high)


def run_episode(clone, task, action_repeat, seed, use_previous):
    env = dfmpc.make_env(task, action_repeat=action_repeat)
    observation, _ = env.reset(seed=seed)
    previous = np.zeros_like(clone.low)
    total = 0.0
    while True:
        action = clone.act(inputs_of(observation[None], previous[None], use_previous)[0])
        observation, reward, terminated, truncated, _ = env.step(action)
        total += reward
        previous = action
        if terminated or truncated:
            return total


def add_training_arguments(parser, trained):
    """--runs, --steps, --batch and --width of the MLPs a probe trains."""
    parser.add_argument("--runs", type=int, default=3, help=f"{trained} training runs (seeds 1..RUNS)")
    parser.add_argument("--steps", type=int, default=20000, help="training steps per run")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=256, help="hidden layer width")


def torch_and_data(script, path, parser):
    """PyTorch on one thread and the dataset at `path`; exits naming what is missing."""
    try:
        import torch
    except ImportError:
        sys.exit(f"{script} needs PyTorch: sudo apt-get install python3-torch")
    torch.set_num_threads(1)
    try:
        return torch, dfmpc.read_dataset(path, frames=False)
    except RuntimeError as error:
        parser.error(str(error))


def csv_is_new(path):
    """Whether a CSV appended to needs its header."""
    try:
        return open(path).read() == ""
    except FileNotFoundError:
        return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="a state dataset from `dfmpc collect`")
    parser.add_argument("--episodes", type=int, default=10, help="closed-loop episodes per run")
    parser.add_argument("--seed", type=int, default=1, help="episodes as `dfmpc eval --seed`")
    add_training_arguments(parser, "clone")
    parser.add_argument("--previous-action", action="store_true",
                        help="the previous action as an input, as a world model's token has it")
    parser.add_argument("--label", default="", help="the CSV's label column (default: the inputs)")
    parser.add_argument("--csv", required=True, help="output CSV, appended to, one row per run")
    args = parser.parse_args()
    for name in ("episodes", "runs", "steps", "batch", "width"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    torch, data = torch_and_data("probe_behaviour_cloning.py", args.data, parser)
    info = data["info"]
    task, repeat = info["task"], int(info["action_repeat"])
    label = args.label or ("observation + previous action" if args.previous_action else "observation")
    inputs, actions = training_pairs(data, args.previous_action)
    data_return = float(np.mean(data["episode_returns"]))
    print(f"{task}: {len(inputs)} steps of {len(data['episode_starts'])} episodes, "
          f"data return {data_return:.1f}", flush=True)

    new_file = csv_is_new(args.csv)
    with open(args.csv, "a", newline="") as out:
        writer = csv.writer(out)
        if new_file:
            writer.writerow(["label", "run", "train_mse", "return_mean", "return_std",
                             "data_return", "episodes", "seed"])
        for run in range(1, args.runs + 1):
            began = time.monotonic()
            clone = Clone(torch, inputs, actions, args.width, run)
            mse = clone.fit(inputs, actions, args.steps, args.batch, run)
            returns = []
            for episode in range(args.episodes):
                returns.append(run_episode(clone, task, repeat,
                                           args.seed * EPISODE_SEED_STRIDE + episode,
                                           args.previous_action))
            writer.writerow([label, run, f"{mse:.4f}", f"{np.mean(returns):.1f}",
                             f"{np.std(returns):.1f}", f"{data_return:.1f}", args.episodes,
                             args.seed])
            out.flush()
            print(f"{label} run {run}: training mse {mse:.4f}, return {np.mean(returns):.1f} "
                  f"± {np.std(returns):.1f} ({time.monotonic() - began:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
