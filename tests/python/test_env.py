"""dfmpc.make_env: gymnasium's conventions over the C++ environments."""

import numpy as np
import pytest

import dfmpc


def run_episode(env, seed, actions):
    observation, _ = env.reset(seed=seed)
    observations, rewards = [observation], []
    for action in actions:
        observation, reward, terminated, truncated, _ = env.step(action)
        assert not terminated
        observations.append(observation)
        rewards.append(reward)
    return np.array(observations), np.array(rewards)


def test_same_seed_same_episode_bit_for_bit_and_other_seed_another():
    actions = np.random.default_rng(0).uniform(-1, 1, size=(50, 1))
    env = dfmpc.make_env("pendulum_swingup")
    first = run_episode(env, 3, actions)
    again = run_episode(dfmpc.make_env("pendulum_swingup"), 3, actions)
    other = run_episode(env, 4, actions)
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])


def test_spaces_episode_length_and_truncation():
    env = dfmpc.make_env("cartpole_swingup", action_repeat=4)
    assert env.action_low.tolist() == [-1.0] and env.action_high.tolist() == [1.0]
    assert env.observation_low.shape == (5,)
    assert env.episode_length == 250 and env.action_repeat == 4
    env.reset(seed=0)
    truncated = False
    for step in range(env.episode_length):
        _, reward, _, truncated, info = env.step(np.zeros(1))
        assert 0.0 <= reward <= 4.0
        assert info["step"] == step + 1
    assert truncated


def test_spaces_are_boxes_with_gymnasiums_names():
    env = dfmpc.make_env("cartpole_swingup")
    assert env.action_space.shape == (1,) and env.observation_space.shape == (5,)
    assert np.array_equal(env.action_space.low, env.action_low)
    assert np.array_equal(env.observation_space.high, env.observation_high)
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    action = env.action_space.sample(np.random.default_rng(0))
    assert env.action_space.contains(action) and not env.action_space.contains(action + 3.0)
    assert not env.action_space.contains(np.zeros(2))  # another shape


def test_close_frees_the_env_and_later_calls_are_value_errors():
    with dfmpc.make_env("pendulum_swingup") as env:
        env.reset(seed=0)
    with pytest.raises(ValueError, match="this Env was closed"):
        env.step(np.zeros(1))
    env.close()  # twice is fine, as gymnasium's
    other = dfmpc.make_env("pendulum_swingup")
    other.close()
    with pytest.raises(ValueError, match="closed"):
        other.reset()


def test_render_mode_is_kept_and_checked():
    assert dfmpc.make_env("pendulum_swingup").render_mode is None
    assert dfmpc.make_env("pendulum_swingup", render_mode="rgb_array").render_mode == "rgb_array"
    with pytest.raises(ValueError, match="render_mode must be None or 'rgb_array', got 'human'"):
        dfmpc.make_env("pendulum_swingup", render_mode="human")


def test_reset_without_seed_continues_the_seed_sequence():
    env = dfmpc.make_env("reacher")
    assert env.reset(seed=10)[1]["seed"] == 10
    assert env.reset()[1]["seed"] == 11
    assert np.array_equal(env.reset()[0], dfmpc.make_env("reacher").reset(seed=12)[0])


def test_success_is_reported_where_the_task_defines_it():
    assert "is_success" in dfmpc.make_env("pointmass_maze").reset(seed=0)[1]
    assert "is_success" not in dfmpc.make_env("pendulum_swingup").reset(seed=0)[1]


def test_render_is_an_rgb_image():
    env = dfmpc.make_env("pendulum_swingup")
    env.reset(seed=0)
    try:
        image = env.render(width=64, height=48)
    except RuntimeError as error:
        if not str(error).startswith("no EGL display"):
            raise  # a rendering bug, not a machine without EGL
        pytest.skip(str(error))
    assert image.shape == (48, 64, 3) and image.dtype == np.uint8
    assert image.std() > 0  # not a blank frame


def test_perturbations_are_keywords():
    env = dfmpc.make_env("pendulum_swingup", damping=1.5, mass=(0.5, 1.5))
    env.reset(seed=1)
    assert "damping=1.5" in env.perturbation and "mass=" in env.perturbation


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dfmpc.make_env("no_such_task"), "unknown task"),
        (lambda: dfmpc.make_env("pendulum_swingup", mass=(1.0, 0.5)), "low > high"),
        (lambda: dfmpc.make_env("pendulum_swingup", wind=1.0), "wind"),
        (lambda: dfmpc.make_env("pendulum_swingup", action_repeat=-1), "repeat"),
    ],
)
def test_bad_options_are_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bad_actions_are_value_errors_naming_the_shape():
    env = dfmpc.make_env("pendulum_swingup")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(1,\), got shape \(2,\)"):
        env.step(np.zeros(2))
    with pytest.raises(ValueError, match="dtype"):
        env.step(np.array(["a"]))
    with pytest.raises(ValueError, match="NaN|finite"):
        env.step(np.array([np.nan]))
