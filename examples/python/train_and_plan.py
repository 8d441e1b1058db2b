#!/usr/bin/env python3
"""A world model from scratch in Python: collect a small dataset, train a
tiny model on it and plan with it in closed loop: the whole pipeline, in
about a minute on one CPU core with the defaults. The tiny model does not
control well; the shipped models train far longer (README, "The dfmpc
tool").

    PYTHONPATH=build/python python3 examples/python/train_and_plan.py --out out/python_tiny
"""

import argparse
import pathlib
import sys

import dfmpc


def progress_printer(label):
    def show(done, total, *rest):
        print(f"\r{label}: {done}/{total}", end="", file=sys.stderr, flush=True)
        if done == total:
            print(file=sys.stderr)
    return show


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="pendulum_swingup", choices=dfmpc.task_names())
    parser.add_argument("--episodes", type=int, default=20, help="episodes to collect")
    parser.add_argument("--steps", type=int, default=500, help="training steps")
    parser.add_argument("--out", default="out/python_tiny", help="directory for the files")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    data = str(out / "data.h5")
    episode_steps = dfmpc.make_env(args.task).episode_length
    total = args.episodes * episode_steps
    summary = dfmpc.collect(args.task, data, episodes=args.episodes, policy="mixed",
                            progress=lambda steps, _: progress_printer("collect")(steps, total))
    print(f"collected {summary['steps']} steps, mean return {summary['mean_return']:.1f}")

    model = str(out / "model.pt")
    log = dfmpc.train([data], model, steps=args.steps, batch_size=16, width=64, depth=2,
                      heads=4, validate_every=max(1, args.steps // 5), threads=1,
                      progress=progress_printer("train"))
    print(f"trained: validation loss {log[-1]['validation_loss']:.4f}; wrote {model}")

    planner = dfmpc.Planner.from_file(model, candidates=4)
    env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat)
    observation, _ = env.reset(seed=1)
    planner.reset(observation)
    total_reward = 0.0
    for _ in range(env.episode_length):
        observation, reward, _, _, _ = env.step(planner.act(observation))
        total_reward += reward
    # A model this small and this briefly trained is not expected to swing
    # the pendulum up; the point is the pipeline.
    print(f"closed-loop return with the tiny model: {total_reward:.1f}")


if __name__ == "__main__":
    main()
