"""scripts/probe_behaviour_cloning.py: a clone learns actions that are a
known function of the observations, runs closed-loop on the real task the
same way twice, and names bad input."""

import csv

import numpy as np
import pytest

SCRIPT = "probe_behaviour_cloning.py"
pytest.importorskip("torch")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Two pendulum episodes of random play relabelled with the action
    0.5 * tanh(angular velocity): a function of the observation alone."""
    import dfmpc

    folder = tmp_path_factory.mktemp("clone")
    played = folder / "played.h5"
    dfmpc.collect("pendulum_swingup", str(played), episodes=2, policy="random", seed=3)
    source = dfmpc.read_dataset(str(played), frames=False)
    episodes = []
    for start, length in zip(source["episode_starts"], source["episode_lengths"]):
        observations = np.vstack([source["observations"][start:start + length],
                                  source["next_observations"][start + length - 1]])
        actions = 0.5 * np.tanh(observations[:-1, 2:3])
        episodes.append({"observations": observations, "actions": actions,
                         "rewards": source["rewards"][start:start + length]})
    info = source["info"]
    path = folder / "relabelled.h5"
    dfmpc.write_dataset(str(path), episodes, task=info["task"],
                        control_timestep=info["control_timestep"],
                        episode_physics_steps=info["episode_physics_steps"])
    return str(path)


def run_clone(run_script, data, out, *extra):
    result = run_script(SCRIPT, data, "--episodes", "1", "--runs", "1", "--steps", "400",
                        "--batch", "128", "--width", "32", "--csv", str(out), *extra)
    assert result.returncode == 0, result.stderr
    return list(csv.DictReader(open(out)))


def test_learns_a_function_of_the_observation_and_repeats(data, tmp_path, run_script):
    first = run_clone(run_script, data, tmp_path / "first.csv")
    assert len(first) == 1 and first[0]["label"] == "observation"
    # The actions' variance is about 0.1: the clone explains all but a few percent.
    assert float(first[0]["train_mse"]) < 5e-3
    assert np.isfinite(float(first[0]["return_mean"]))
    assert first[0]["episodes"] == "1" and first[0]["seed"] == "1"
    again = run_clone(run_script, data, tmp_path / "again.csv")
    assert again == first


def test_previous_action_input_and_appended_rows(data, tmp_path, run_script):
    out = tmp_path / "both.csv"
    run_clone(run_script, data, out)
    rows = run_clone(run_script, data, out, "--previous-action")
    assert [r["label"] for r in rows] == ["observation", "observation + previous action"]


def test_bad_input_is_named(data, tmp_path, run_script):
    runs = run_script(SCRIPT, data, "--runs", "0", "--csv", str(tmp_path / "x.csv"))
    assert runs.returncode != 0 and "--runs must be at least 1" in runs.stderr
    missing = run_script(SCRIPT, str(tmp_path / "absent.h5"), "--csv", str(tmp_path / "x.csv"))
    assert missing.returncode != 0 and "absent.h5" in missing.stderr
    assert not (tmp_path / "x.csv").exists()
