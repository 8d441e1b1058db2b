"""Your own robot from Python: a task folder (examples/robots/arm3) works
wherever a task is named, a model of it carries it, and a dataset written
with h5py alone (examples/python/write_dataset.py, the recipe of
envs/DATASET.md) reads back through dfmpc unchanged."""

import importlib.util
import pathlib

import numpy as np
import pytest

import dfmpc

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARM3 = str(ROOT / "examples" / "robots" / "arm3")


def load_example():
    spec = importlib.util.spec_from_file_location(
        "write_dataset", ROOT / "examples" / "python" / "write_dataset.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_h5py_dataset_reads_back_and_trains(tmp_path):
    example = load_example()
    rng = np.random.default_rng(1)
    episodes = []
    for length in (7, 5):
        episodes.append((rng.normal(size=(length + 1, 4)), rng.uniform(-1, 1, size=(length, 2)),
                         rng.uniform(0, 1, size=length)))
    path = str(tmp_path / "logged.h5")
    example.write_dataset(path, "my_robot", episodes, control_timestep=0.05)
    data = dfmpc.read_dataset(path)
    assert data["info"]["task"] == "my_robot"
    assert data["episode_lengths"].tolist() == [7, 5]
    assert np.allclose(data["observations"][:7], episodes[0][0][:-1], atol=1e-6)
    assert np.allclose(data["next_observations"][7:], episodes[1][0][1:], atol=1e-6)
    assert np.allclose(data["actions"][7:], episodes[1][1], atol=1e-6)
    assert np.isclose(data["episode_returns"][1], episodes[1][2].sum())


def test_a_task_folder_works_from_python_and_its_data_writes(tmp_path):
    out = str(tmp_path / "arm3.h5")
    env = dfmpc.make_env(ARM3)
    assert env.name == "arm3" and env.action_low.shape == (3,)
    assert env.episode_length == 500  # the task file's default
    assert dfmpc.tuned_options(ARM3).horizon == 16  # its [planner] table, not the default 32
    example = load_example()
    observation, _ = env.reset(seed=0)
    observations, actions, rewards = [observation], [], []
    for _ in range(10):
        observation, reward, _, _, _ = env.step(np.zeros(3))
        observations.append(observation)
        actions.append(np.zeros(3))
        rewards.append(reward)
    example.write_dataset(out, env.name, [(np.array(observations), np.array(actions),
                                           np.array(rewards))], env.control_timestep)
    assert dfmpc.read_dataset(out)["observations"].shape == (10, 11)


def test_a_model_of_a_folder_task_is_planned_with_and_no_task_named(tmp_path):
    data, model = str(tmp_path / "arm3.h5"), str(tmp_path / "arm3.pt")
    dfmpc.collect(ARM3, data, episodes=2, policy="random", episode_physics_steps=60)
    assert dfmpc.read_dataset(data)["info"]["task"] == "arm3"
    dfmpc.train([data], model, threads=1, steps=10, batch_size=4, window=12, width=32, depth=1,
                heads=2, validate_every=10, checkpoint_every=10, warmup_steps=2, seed=3)
    planner = dfmpc.Planner.from_file(model, horizon=4, candidates=2)  # the model's own task
    env = dfmpc.make_env(ARM3)
    observation, _ = env.reset(seed=1)
    planner.reset(observation)
    action = planner.act(observation)
    assert action.shape == (3,) and np.all(np.abs(action) <= 1.0)
    with pytest.raises(Exception, match="model was trained for task 'arm3', not 'reacher'"):
        dfmpc.Planner.from_file(model, task="reacher")


def arm3_with(tmp_path, replace):
    """A copy of the arm3 folder with parts of its task file replaced."""
    folder = tmp_path / "arm3_formulas"
    folder.mkdir()
    text = (pathlib.Path(ARM3) / "task.toml").read_text()
    for old, new in replace:
        assert old in text, old
        text = text.replace(old, new)
    (folder / "task.toml").write_text(text)
    (folder / "arm3.xml").write_text((pathlib.Path(ARM3) / "arm3.xml").read_text())
    return str(folder)


REWARD_FACTOR = ('[[reward.factor]]\nnorm = ["to_target_x", "to_target_y"]\n'
                 'tolerance = { bounds = [0, 0.03] }\n')


def test_formulas_in_a_task_folder_reward_and_plan_from_python(tmp_path):
    folder = arm3_with(tmp_path, [
        (REWARD_FACTOR, '[reward]\nexpression = """\n'
         'distance = sqrt(to_target_x^2 + to_target_y^2),\n'
         'tolerance(distance, 0, 0.03, 0, sigmoid.gaussian, 0.1)\n"""\n'),
        ('term = "action"\nweight = 0.01',
         'term = "expression"\nexpression = "(action.motor1^2 + action.motor2^2 + '
         'action.motor3^2) / 3"\nweight = 0.01')])
    factors, formulas = dfmpc.make_env(ARM3), dfmpc.make_env(folder)
    for env in (factors, formulas):
        env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(50):
        action = rng.uniform(-1, 1, size=3)
        assert formulas.step(action)[1] == pytest.approx(factors.step(action)[1], abs=1e-12)
    planner = dfmpc.Planner.from_file(str(ROOT / "examples" / "models" / "arm3.pt"), task=folder,
                                      candidates=2)
    observation, _ = formulas.reset(seed=1)
    planner.reset(observation)
    assert np.all(np.abs(planner.act(observation)) <= 1.0)


def test_a_misspelt_formula_names_the_file_and_key(tmp_path):
    folder = arm3_with(tmp_path, [(REWARD_FACTOR, '[reward]\nexpression = "to_target_z"\n')])
    with pytest.raises(ValueError, match=r"reward.expression: unknown variable 'to_target_z' "
                                         r"\(did you mean 'to_target_x'\?\)"):
        dfmpc.make_env(folder)
