"""Datasets from Python: collect, read and write, with the format's rules."""

import subprocess

import numpy as np
import pytest

import dfmpc


def episodes_of(data):
    """The dataset's episodes as write_dataset takes them."""
    episodes = []
    for start, length in zip(data["episode_starts"], data["episode_lengths"]):
        steps = slice(start, start + length)
        episodes.append({
            "observations": np.vstack([data["observations"][steps],
                                       data["next_observations"][start + length - 1]]),
            "actions": data["actions"][steps],
            "rewards": data["rewards"][steps],
        })
    return episodes


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "random.h5"
    calls = []
    summary = dfmpc.collect("pendulum_swingup", str(path), episodes=3, policy="random", seed=4,
                            episode_physics_steps=60, progress=lambda s, e: calls.append((s, e)))
    return path, summary, calls


def test_collect_writes_what_it_reports(collected):
    path, summary, calls = collected
    data = dfmpc.read_dataset(str(path))
    assert summary["episodes"] == 3 and summary["steps"] == 180
    assert data["observations"].shape == (180, 3) and data["actions"].shape == (180, 1)
    assert data["observations"].dtype == np.float32
    assert data["episode_lengths"].tolist() == [60, 60, 60]
    assert data["timeouts"].sum() == 3 and not data["terminals"].any()
    np.testing.assert_allclose(
        data["episode_returns"],
        [data["rewards"][s:s + n].sum() for s, n in
         zip(data["episode_starts"], data["episode_lengths"])], rtol=1e-5)
    assert data["info"]["task"] == "pendulum_swingup" and data["info"]["policy"] == "random"
    assert data["frames"] is None
    assert calls[-1] == (180, 2) and [s for s, _ in calls] == sorted(s for s, _ in calls)


def test_collect_equals_the_cpp_tool(collected, dfmpc_tool, tmp_path):
    path, _, _ = collected
    cli = tmp_path / "cli.h5"
    subprocess.run([dfmpc_tool, "collect", "--task", "pendulum_swingup", "--episodes", "3",
                    "--policy", "random", "--seed", "4", "--episode-physics-steps", "60",
                    "--out", str(cli)], check=True, capture_output=True)
    ours, theirs = dfmpc.read_dataset(str(path)), dfmpc.read_dataset(str(cli))
    for key in ["observations", "next_observations", "actions", "rewards", "episode_returns"]:
        assert np.array_equal(ours[key], theirs[key]), key


def test_write_then_read_is_exact_and_needs_no_builtin_task(collected, tmp_path):
    path, _, _ = collected
    data = dfmpc.read_dataset(str(path))
    copy = tmp_path / "copy.h5"
    dfmpc.write_dataset(str(copy), episodes_of(data), task="my_robot", control_timestep=0.02,
                        episode_physics_steps=60)
    again = dfmpc.read_dataset(str(copy))
    for key in ["observations", "next_observations", "actions", "rewards", "timeouts",
                "episode_lengths"]:
        assert np.array_equal(data[key], again[key]), key
    assert again["info"]["task"] == "my_robot" and again["info"]["policy"] == "python"


def test_frames_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, size=(4, 6, 8, 3), dtype=np.uint8)
    episode = {"observations": rng.normal(size=(5, 2)), "actions": rng.uniform(-1, 1, (4, 1)),
               "rewards": rng.uniform(0, 1, 4), "frames": frames}
    path = tmp_path / "frames.h5"
    dfmpc.write_dataset(str(path), [episode], task="toy", control_timestep=0.1,
                        episode_physics_steps=4, frame_width=8, frame_height=6)
    assert np.array_equal(dfmpc.read_dataset(str(path))["frames"], frames)
    assert dfmpc.read_dataset(str(path), frames=False)["frames"] is None


def good_episode():
    return {"observations": np.zeros((4, 3)), "actions": np.zeros((3, 1)),
            "rewards": np.zeros(3)}


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda e: e["observations"].__setitem__((1, 1), np.nan), "episode 1 holds NaN"),
        (lambda e: e.__setitem__("actions", np.zeros((2, 1))),
         r"episode 1 actions must be a float array of shape \(3,1\), got shape \(2,1\)"),
        (lambda e: e.__setitem__("rewards", np.zeros((3, 1))), "episode 1 rewards"),
        (lambda e: e.pop("rewards"), "episode 1 has no 'rewards'"),
        (lambda e: e.__setitem__("observations", np.zeros((4, 2))), "episode 1 observations"),
    ],
)
def test_bad_episodes_are_value_errors_and_write_nothing(tmp_path, change, message):
    bad = good_episode()
    change(bad)
    path = tmp_path / "bad.h5"
    with pytest.raises(ValueError, match=message):
        dfmpc.write_dataset(str(path), [good_episode(), bad], task="toy", control_timestep=0.1)
    assert not path.exists()


def test_bad_files_and_options_are_clear_errors(tmp_path):
    with pytest.raises(RuntimeError, match="missing.h5"):
        dfmpc.read_dataset(str(tmp_path / "missing.h5"))
    corrupt = tmp_path / "corrupt.h5"
    corrupt.write_bytes(b"not hdf5")
    with pytest.raises(RuntimeError, match="corrupt.h5"):
        dfmpc.read_dataset(str(corrupt))
    with pytest.raises(ValueError, match="unknown task"):
        dfmpc.collect("no_such_task", str(tmp_path / "x.h5"), episodes=1)
    with pytest.raises(ValueError, match="episodes must be >= 1"):
        dfmpc.collect("pendulum_swingup", str(tmp_path / "x.h5"), episodes=0)
    with pytest.raises(ValueError, match="control_timestep"):
        dfmpc.write_dataset(str(tmp_path / "x.h5"), [good_episode()], task="toy",
                            control_timestep=0.0)
    assert not (tmp_path / "x.h5").exists()


def test_an_exception_in_progress_stops_collect_and_writes_nothing(tmp_path):
    path = tmp_path / "stopped.h5"

    def stop(steps, episode):
        if steps == 10:
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        dfmpc.collect("pendulum_swingup", str(path), episodes=2, policy="random",
                      episode_physics_steps=50, progress=stop)
    assert not path.exists()


def test_the_python_env_replays_the_tools_episodes(dfmpc_tool, tmp_path):
    """Actions of a dataset the tool collected, replayed in dfmpc.make_env from
    the same episode seed: the same initial states exactly, and the same
    trajectories up to the float32 rounding of the stored actions (the
    policy applied them in float64)."""
    path = tmp_path / "tool.h5"
    subprocess.run([dfmpc_tool, "collect", "--task", "cartpole_swingup", "--episodes", "2",
                    "--policy", "mixed", "--seed", "9", "--action-repeat", "2",
                    "--episode-physics-steps", "200", "--out", str(path)],
                   check=True, capture_output=True)
    data = dfmpc.read_dataset(str(path))
    env = dfmpc.make_env("cartpole_swingup", action_repeat=2, episode_physics_steps=200)
    for episode, (start, length) in enumerate(zip(data["episode_starts"],
                                                  data["episode_lengths"])):
        observation, _ = env.reset(seed=9 * 1000003 + episode)  # the tool's episode seed
        assert np.array_equal(np.float32(observation), data["observations"][start])
        observations, rewards = [], []
        for action in data["actions"][start:start + length]:
            observation, reward, _, _, _ = env.step(action.astype(np.float64))
            observations.append(observation)
            rewards.append(reward)
        # Measured: at most 3.4e-7 apart (float32 storage of values up to
        # about 3, and the rounded actions); a different episode or a lost
        # action differs by far more than the bound.
        steps = slice(start, start + length)
        np.testing.assert_allclose(observations, data["next_observations"][steps], atol=1e-5)
        np.testing.assert_allclose(rewards, data["rewards"][steps], atol=1e-5)
