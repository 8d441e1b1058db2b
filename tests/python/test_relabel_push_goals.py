"""scripts/relabel_push_goals.py on real push episodes: the goal moves to a
draw of the task's distribution and stays put, nothing but the goal's
offset changes, rewards follow the new goal, and other data is refused."""

import importlib.util
import pathlib
import sys

import numpy as np

import dfmpc

SCRIPT = "relabel_push_goals.py"


def load_script():
    scripts = pathlib.Path(__file__).resolve().parents[2] / "scripts"
    sys.path.insert(0, str(scripts))  # its helpers, as when run from there
    path = scripts / SCRIPT
    spec = importlib.util.spec_from_file_location("relabel_push_goals", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_episodes(task, count, steps):
    episodes = []
    with dfmpc.make_env(task) as env:
        rng = np.random.default_rng(0)
        for seed in range(count):
            observation, _ = env.reset(seed=seed)
            observations, actions, rewards = [observation], [], []
            for _ in range(steps):
                action = rng.uniform(-1, 1, env.action_space.shape)
                observation, reward, _, _, _ = env.step(action)
                observations.append(observation)
                actions.append(action)
                rewards.append(reward)
            episodes.append({"observations": np.array(observations), "actions": np.array(actions),
                             "rewards": np.array(rewards)})
        return episodes, env.control_timestep, env.action_repeat


def write(path, task, count=2, steps=30):
    episodes, timestep, repeat = random_episodes(task, count, steps)
    dfmpc.write_dataset(str(path), episodes, task, action_repeat=repeat,
                        control_timestep=timestep, episode_physics_steps=steps * repeat)
    return episodes


def test_the_goal_moves_and_nothing_else(tmp_path, run_script):
    data, out = tmp_path / "push.h5", tmp_path / "relabelled.h5"
    episodes = write(data, "push")
    result = run_script(SCRIPT, str(data), str(out), "--copies", "2", "--keep", "--seed", "3")
    assert result.returncode == 0, result.stderr
    relabelled = dfmpc.read_dataset(str(out), frames=False)
    assert len(relabelled["episode_starts"]) == 6  # each episode kept, then 2 copies
    script = load_script()
    true_goal = script.goal_positions(episodes[0]["observations"])
    # The kinematics recover one goal per episode, inside the task's draw.
    assert np.ptp(true_goal, axis=0).max() < 1e-5
    radius = np.linalg.norm(true_goal[0])
    assert 0.15 - 1e-6 <= radius <= 0.30 + 1e-6
    start, length = relabelled["episode_starts"][1], relabelled["episode_lengths"][1]
    copy = relabelled["observations"][start:start + length]
    kept = relabelled["episode_starts"][0]
    original = relabelled["observations"][kept:kept + length]  # as stored: float
    goal = script.goal_positions(copy)
    assert np.ptp(goal, axis=0).max() < 1e-5
    assert 0.15 - 1e-6 <= np.linalg.norm(goal[0]) <= 0.30 + 1e-6
    assert np.abs(np.arctan2(goal[0, 1], goal[0, 0])) <= script.GOAL_ANGLE + 1e-6
    assert np.linalg.norm(goal[0] - true_goal[0]) > 1e-3
    unchanged = [c for c in range(15) if c not in (8, 9)]
    np.testing.assert_array_equal(copy[:, unchanged], original[:, unchanged])
    np.testing.assert_array_equal(relabelled["actions"][start:start + length],
                                  relabelled["actions"][kept:kept + length])
    next_offsets = relabelled["next_observations"][start:start + length, 8:10]
    expected = (np.linalg.norm(next_offsets, axis=1) <= script.SUCCESS_RADIUS).astype(float)
    np.testing.assert_array_equal(relabelled["rewards"][start:start + length], expected)


def test_the_goal_lands_near_the_block_and_earns(tmp_path):
    """A goal drawn onto the block's own position earns every step."""
    script = load_script()
    episodes, _, _ = random_episodes("push", 1, 5)
    observations = episodes[0]["observations"]
    block = script.goal_positions(observations) - observations[:, 8:10]
    moved, rewards = script.relabel(observations, block[1:].mean(axis=0))
    assert rewards.sum() >= 4  # the block moves little in 5 random steps
    assert np.all(np.linalg.norm(moved[1:, 8:10], axis=1)[rewards == 1] <= 0.05)


def test_other_tasks_are_refused(tmp_path, run_script):
    data = tmp_path / "reacher.h5"
    write(data, "reacher", count=1, steps=5)
    result = run_script(SCRIPT, str(data), str(tmp_path / "out.h5"))
    assert result.returncode != 0 and "this relabelling knows push's 15" in result.stderr
    assert not (tmp_path / "out.h5").exists()
    copies = run_script(SCRIPT, str(data), str(tmp_path / "out.h5"), "--copies", "0")
    assert copies.returncode != 0 and "--copies must be >= 1" in copies.stderr
