#!/usr/bin/env python3
"""Writes a dfmpc dataset with h5py alone, from trajectories of your own.

Every command that reads data (`dfmpc train`, `train-mlp`, `eval-model`)
then takes the file. Here the trajectories come from dfmpc's environment for
brevity; yours come from your robot's logs. envs/DATASET.md lists every
field.

    /usr/bin/python3 examples/python/write_dataset.py --task examples/robots/arm3 \
        --out data/arm3_h5py.h5
"""
import argparse

import h5py
import numpy as np


def fixed(text):
    # dfmpc's string attributes are fixed-length ASCII, which numpy bytes
    # give; a plain Python str becomes a variable-length string, which
    # dfmpc refuses ("attribute 'format' is not a fixed-length string").
    return np.bytes_(text.encode("ascii"))


def write_dataset(path, task, episodes, control_timestep, action_repeat=1,
                  task_file="", task_mjcf=""):
    """episodes: a list of (observations [L+1, obs], actions [L, act],
    rewards [L]) with observations o_0 .. o_L around the L actions."""
    obs = np.concatenate([e[0][:-1] for e in episodes]).astype(np.float32)
    next_obs = np.concatenate([e[0][1:] for e in episodes]).astype(np.float32)
    actions = np.concatenate([e[1] for e in episodes]).astype(np.float32)
    rewards = np.concatenate([e[2] for e in episodes]).astype(np.float32)
    lengths = np.array([len(e[1]) for e in episodes], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    timeouts = np.zeros(len(rewards), dtype=np.uint8)
    timeouts[starts + lengths - 1] = 1  # every episode ended at its time limit
    with h5py.File(path, "w") as f:
        for name, value in [("format", "dfmpc-dataset"), ("library_version", "h5py"),
                            ("task", task), ("policy", "logged"), ("perturbation", "")]:
            f.attrs[name] = fixed(value)
        if task_file:  # the task's files travel on to the models trained on the data
            f.attrs["task_file"] = fixed(task_file)
            f.attrs["task_mjcf"] = fixed(task_mjcf)
        for name, value in [("format_version", 3), ("seed", 0),
                            ("observation_size", obs.shape[1]), ("action_size", actions.shape[1]),
                            ("action_repeat", action_repeat),
                            ("episode_physics_steps", int(lengths.max()) * action_repeat),
                            ("frame_width", 0), ("frame_height", 0),
                            ("num_episodes", len(lengths)), ("num_steps", len(rewards))]:
            f.attrs[name] = np.int64(value)
        f.attrs["control_timestep"] = np.float64(control_timestep)
        f["observations"] = obs
        f["next_observations"] = next_obs
        f["actions"] = actions
        f["rewards"] = rewards
        f["terminals"] = np.zeros(len(rewards), dtype=np.uint8)
        f["timeouts"] = timeouts
        f["episode_starts"] = starts
        f["episode_lengths"] = lengths
        f["episode_returns"] = np.array([e[2].sum() for e in episodes], dtype=np.float64)
        f["episode_success"] = np.zeros(len(lengths), dtype=np.uint8)
        names = "obs_noise,obs_noise_rel,delay,gain,mass,damping,friction"
        # Nominal episodes: no noise or delay, unit gain, mass, damping, friction.
        nominal = np.array([[0, 0, 0, 1, 1, 1, 1]] * len(lengths), dtype=np.float64)
        f["episode_perturbations"] = nominal
        f["episode_perturbations"].attrs["names"] = fixed(names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="examples/robots/arm3")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import dfmpc  # only to produce example trajectories

    env = dfmpc.make_env(args.task)
    rng = np.random.default_rng(0)
    episodes = []
    for seed in range(args.episodes):
        observations, actions, rewards = [env.reset(seed=seed)[0]], [], []
        for _ in range(env.episode_length):
            action = rng.uniform(env.action_low, env.action_high)
            observation, reward, _, _, _ = env.step(action)
            observations.append(observation)
            actions.append(action)
            rewards.append(reward)
        episodes.append((np.array(observations), np.array(actions), np.array(rewards)))
    write_dataset(args.out, env.name, episodes, env.control_timestep, env.action_repeat)
    print(f"wrote {args.out}: {len(episodes)} episodes")


if __name__ == "__main__":
    main()
