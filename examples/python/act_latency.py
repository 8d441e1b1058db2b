#!/usr/bin/env python3
"""What the Python wrapper adds to a control step: wall time of
Planner.act from Python against the C++ optimization inside the same calls
(StepStats.latency_ms), p50 and p99 over a closed-loop run, side by side.

    PYTHONPATH=build/python python3 examples/python/act_latency.py --steps 500
"""

import argparse
import pathlib
import time

import numpy as np

import dfmpc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "examples/models/pendulum_swingup.pt"))
    parser.add_argument("--steps", type=int, default=500, help="timed control steps")
    parser.add_argument("--threads", type=int, default=1, help="LibTorch intra-op threads")
    args = parser.parse_args()

    planner = dfmpc.Planner.from_file(args.model, threads=args.threads)
    env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat,
                         episode_physics_steps=10**9)
    observation, _ = env.reset(seed=0)
    planner.reset(observation)
    wall, inside = [], []
    for _ in range(args.steps + 20):  # the first 20 warm up
        start = time.perf_counter()
        action = planner.act(observation)
        wall.append((time.perf_counter() - start) * 1e3)
        inside.append(planner.stats.latency_ms)
        observation, _, _, _, _ = env.step(action)
    wall, inside = np.array(wall[20:]), np.array(inside[20:])
    print(f"{planner.task}, {args.steps} steps, {args.threads} thread(s)")
    print(f"{'':28}{'p50_ms':>8}{'p99_ms':>8}")
    for name, values in [("Planner.act from Python", wall), ("C++ optimization inside", inside)]:
        print(f"{name:28}{np.percentile(values, 50):8.3f}{np.percentile(values, 99):8.3f}")
    print("difference (wrapper, observe, action): p50 "
          f"{np.percentile(wall - inside, 50):.3f} ms = "
          f"{100 * np.percentile(wall - inside, 50) / np.percentile(inside, 50):.1f}% of the "
          "optimization")


if __name__ == "__main__":
    main()
