"""Helpers of the scripts that read a dataset and write a changed copy."""

import sys

import numpy as np

import dfmpc


def episode_observations(data, start, length):
    """An episode's T + 1 observations: its T `observations` and the last
    `next_observations`."""
    return np.vstack([data["observations"][start:start + length],
                      data["next_observations"][start + length - 1]])


def write_copy(parser, out, episodes, info, policy):
    """Writes `episodes` with the source dataset's `info` (task, seed,
    action repeat, timing) as `policy`'s data, whole or not at all; a
    refusal ends the script through `parser`."""
    try:
        dfmpc.write_dataset(out, episodes, info["task"], policy=policy, seed=info["seed"],
                            action_repeat=info["action_repeat"],
                            control_timestep=info["control_timestep"],
                            episode_physics_steps=info["episode_physics_steps"])
    except (RuntimeError, ValueError) as error:
        parser.error(str(error))
    print(f"wrote {out}: {len(episodes)} episodes", file=sys.stderr)
