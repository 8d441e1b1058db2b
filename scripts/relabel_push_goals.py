#!/usr/bin/env python3
"""Writes a copy of a `push` dataset whose episodes chase other goals: each
episode's goal moves to a fresh draw of the task's goal distribution (0.15
to 0.30 m from the shoulder within 75 degrees of straight ahead), the
observed block-to-goal offset shifts by the move and the rewards follow (1
per step that ends with the block within 5 cm of the new goal). The goal is
a mocap body that touches nothing, so the physics is the episode's own.

In the oracle's data the block moves toward its goal whenever it moves
(scripts/probe_feature_path.py --velocity), so a model can learn that the
goal, not the peg, sets where a push goes; with other goals it cannot.

    PYTHONPATH=build/python python3 scripts/relabel_push_goals.py push.h5 relabelled.h5 \\
        --copies 2 --seed 1
    dfmpc train --data relabelled.h5 ...
"""

import argparse

import numpy as np

import dfmpc
from dataset_copy import episode_observations, write_copy

LINK = 0.2  # both links' length (push.xml); the shoulder is at the origin
GOAL_ANGLE = 1.3089969389957472  # 75 degrees either side (task.toml)
GOAL_RADIUS = (0.15, 0.30)
SUCCESS_RADIUS = 0.05
# Observation columns (task.toml): cos/sin of the shoulder and of the
# elbow, block minus peg, goal minus block.
SHOULDER, ELBOW, PEG_TO_BLOCK, BLOCK_TO_GOAL = slice(0, 2), slice(2, 4), slice(6, 8), slice(8, 10)


def goal_positions(observations):
    """The goal's table position at every observation: the peg's (forward
    kinematics) plus the block's offset from it plus the goal's from the
    block."""
    c1, s1 = observations[:, SHOULDER].T
    c2, s2 = observations[:, ELBOW].T
    peg = LINK * np.stack([c1 + c1 * c2 - s1 * s2, s1 + s1 * c2 + c1 * s2], axis=1)
    return peg + observations[:, PEG_TO_BLOCK] + observations[:, BLOCK_TO_GOAL]


def draw_goal(rng):
    angle = rng.uniform(-GOAL_ANGLE, GOAL_ANGLE)
    radius = rng.uniform(*GOAL_RADIUS)
    return radius * np.array([np.cos(angle), np.sin(angle)])


def relabel(observations, goal):
    """The episode's observations (T + 1) and rewards (T) with `goal` as its
    goal."""
    moved = observations.copy()
    moved[:, BLOCK_TO_GOAL] += goal - goal_positions(observations).mean(axis=0)
    rewards = np.linalg.norm(moved[1:, BLOCK_TO_GOAL], axis=1) <= SUCCESS_RADIUS
    return moved, rewards.astype(np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("data", help="a push dataset from `dfmpc collect`")
    parser.add_argument("out", help="where to write the relabelled copy")
    parser.add_argument("--copies", type=int, default=1, help="relabelled copies of each episode")
    parser.add_argument("--keep", action="store_true", help="also keep each episode as it was")
    parser.add_argument("--seed", type=int, default=0, help="seed of the goal draws")
    args = parser.parse_args()
    if args.copies < 1:
        parser.error(f"--copies must be >= 1, got {args.copies}")
    try:
        data = dfmpc.read_dataset(args.data, frames=False)
    except RuntimeError as error:
        parser.error(str(error))
    info = data["info"]
    if info["task"] != "push" or info["observation_size"] != 15:
        parser.error(f"{args.data} holds task '{info['task']}' with {info['observation_size']} "
                     "observations; this relabelling knows push's 15")
    rng = np.random.default_rng(args.seed)
    episodes = []
    for start, length in zip(data["episode_starts"], data["episode_lengths"]):
        observations = episode_observations(data, start, length)
        actions = data["actions"][start:start + length]
        drift = np.ptp(goal_positions(observations), axis=0).max()
        if drift > 1e-3:  # the goal stands still; a moving one means other columns
            parser.error(f"{args.data}: the goal moves {drift:.3f} m within an episode; "
                         "not push's observations")
        if args.keep:
            episodes.append({"observations": observations, "actions": actions,
                             "rewards": data["rewards"][start:start + length]})
        for _ in range(args.copies):
            moved, rewards = relabel(observations, draw_goal(rng))
            episodes.append({"observations": moved, "actions": actions, "rewards": rewards})
    write_copy(parser, args.out, episodes, info, "relabelled goals")


if __name__ == "__main__":
    main()
