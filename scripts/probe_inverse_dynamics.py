#!/usr/bin/env python3
"""Do the planner's predicted observations run where its planned actions do
not? Trains an inverse-dynamics MLP (the observation now and the one --ahead
steps later, to the action taken now; at --ahead 1 the Decision Diffuser's
action extraction) on a dataset from `dfmpc collect`, then runs a model's
planner closed-loop over the episodes of `dfmpc eval --seed S` for each arm
(a set of planner options): once applying the planner's own action, and once
per inverse model applying the inverse dynamics of the observation now and
the plan's predicted one --ahead steps later. The planner is told the action
applied, so its context holds what the robot did. Writes one CSV row per arm
and action source: the return, the mean |delta a|, the mean gap between
the action applied and the planner's own (mean_abs_gap: how far the plan's
actions are from the ones its observations ask for), and the inverse model's
error on held-out episodes of the data. Needs Debian's python3-torch.

    PYTHONPATH=build/python python3 scripts/probe_inverse_dynamics.py cheetah_run.h5 \\
        --model examples/models/cheetah_run.pt --episodes 10 --seed 1 --runs 3 --csv id.csv \\
        --arm "N=8 best" --arm "N=32 best" candidates=32
"""

import argparse
import csv
import time

import numpy as np

import dfmpc
from probe_behaviour_cloning import (EPISODE_SEED_STRIDE, Clone, add_training_arguments,
                                     csv_is_new, torch_and_data)
from probe_plan_realism import parse_arm


def transitions(data, episodes, ahead):
    """(o_t, o_t+ahead) pairs and a_t over the given episodes."""
    inputs, actions = [], []
    for episode in episodes:
        start = data["episode_starts"][episode]
        length = data["episode_lengths"][episode]
        observations = data["observations"][start:start + length]
        inputs.append(np.concatenate([observations[:-ahead], observations[ahead:]], axis=1))
        actions.append(data["actions"][start:start + length - ahead])
    return np.concatenate(inputs), np.concatenate(actions)


def run_episode(model, options, inverse, ahead, seed):
    """Return, mean |delta a| and mean |applied - planner's action| of one
    episode; `inverse` None applies the planner's action."""
    planner = dfmpc.Planner.from_file(model, threads=1, **options)
    env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat)
    observation, _ = env.reset(seed=seed)
    planner.reset(observation)
    total, changes, gaps, previous = 0.0, [], [], None
    while True:
        action = planner.action()
        if inverse is not None:
            predicted = np.asarray(planner.plan.observations[ahead - 1])
            planned, action = action, inverse.act(np.concatenate([observation, predicted]))
            gaps.append(np.mean(np.abs(action - planned)))
        if previous is not None:
            changes.append(np.mean(np.abs(action - previous)))
        previous = action
        observation, reward, terminated, truncated, _ = env.step(action)
        total += reward
        if terminated or truncated:
            return total, float(np.mean(changes)), float(np.mean(gaps)) if gaps else None
        planner.observe(observation, action)
        planner.optimize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="the model's training data, from `dfmpc collect`")
    parser.add_argument("--model", required=True, help="the planner's world model")
    parser.add_argument("--episodes", type=int, default=10, help="closed-loop episodes per arm")
    parser.add_argument("--seed", type=int, default=1, help="episodes as `dfmpc eval --seed`")
    add_training_arguments(parser, "inverse-model")
    parser.add_argument("--ahead", type=int, default=1,
                        help="steps between the inverse model's two observations "
                             "(plan row AHEAD - 1)")
    parser.add_argument("--held-out", type=float, default=0.1,
                        help="share of the data's episodes kept out of training (the last ones)")
    parser.add_argument("--arm", nargs="+", action="append", metavar="WORD",
                        help="LABEL [key=value ...]: planner options as Planner.from_file's "
                             "keywords; repeat for each arm (default: the model's own options)")
    parser.add_argument("--csv", required=True,
                        help="output CSV, appended to, one row per arm and action source")
    args = parser.parse_args()
    for name in ("episodes", "runs", "steps", "batch", "width", "ahead"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if not 0 < args.held_out < 1:
        parser.error("--held-out must lie in (0, 1)")
    arms = [parse_arm([words[0], args.model] + words[1:], parser)
            for words in (args.arm or [["task file"]])]
    for label, model, options in arms:
        try:
            horizon = dfmpc.Planner.from_file(model, threads=1, **options).options.horizon
        except (RuntimeError, TypeError, ValueError) as error:
            parser.error(f"--arm {label}: {error}")
        if args.ahead > horizon:
            parser.error(f"--ahead {args.ahead} lies beyond arm {label}'s plan of {horizon} tokens")
    torch, data = torch_and_data("probe_inverse_dynamics.py", args.data, parser)
    count = len(data["episode_starts"])
    held = max(1, int(round(count * args.held_out)))
    train_inputs, train_actions = transitions(data, range(count - held), args.ahead)
    test_inputs, test_actions = transitions(data, range(count - held, count), args.ahead)
    print(f"{data['info']['task']}: {len(train_inputs)} training and {len(test_inputs)} held-out "
          f"transitions", flush=True)

    inverses = []
    for run in range(1, args.runs + 1):
        began = time.monotonic()
        inverse = Clone(torch, train_inputs, train_actions, args.width, run)
        inverse.fit(train_inputs, train_actions, args.steps, args.batch, run)
        predicted = np.stack([inverse.act(row) for row in test_inputs])
        mse = float(np.mean((predicted - test_actions) ** 2))
        inverses.append((run, inverse, f"{mse:.4f}"))
        print(f"inverse model {run}: held-out mse {mse:.4f} "
              f"({time.monotonic() - began:.0f} s)", flush=True)

    new_file = csv_is_new(args.csv)
    seeds = [args.seed * EPISODE_SEED_STRIDE + i for i in range(args.episodes)]
    with open(args.csv, "a", newline="") as out:
        writer = csv.writer(out)
        if new_file:
            writer.writerow(["arm", "action", "ahead", "run", "held_out_mse", "return_mean",
                             "return_std", "mean_abs_da", "mean_abs_gap", "episodes", "seed"])
        for label, model, options in arms:
            sources = [("planner's", "", None, "")]
            sources += [("inverse dynamics", run, inverse, mse) for run, inverse, mse in inverses]
            for source, run, inverse, mse in sources:
                began = time.monotonic()
                results = [run_episode(model, options, inverse, args.ahead, seed) for seed in seeds]
                returns = [r for r, _, _ in results]
                da = float(np.mean([d for _, d, _ in results]))
                gap = f"{np.mean([g for _, _, g in results]):.3f}" if inverse else ""
                writer.writerow([label, source, args.ahead if inverse else "", run, mse,
                                 f"{np.mean(returns):.1f}", f"{np.std(returns):.1f}", f"{da:.3f}",
                                 gap, args.episodes, args.seed])
                out.flush()
                print(f"{label}, {source} action {run}: return {np.mean(returns):.1f} "
                      f"± {np.std(returns):.1f}, |da| {da:.3f} ({time.monotonic() - began:.0f} s)",
                      flush=True)


if __name__ == "__main__":
    main()
