"""dfmpc.Planner and dfmpc.AsyncPlanner from Python: the same actions as the
C++ tool, the error mapping, and a GIL released during model calls."""

import csv
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dfmpc


def python_episode(model, seed, steps, split=False):
    """Actions and rewards of the planner in closed loop, as `dfmpc control` runs it."""
    planner = dfmpc.Planner.from_file(model)
    env = dfmpc.make_env(planner.task, action_repeat=planner.action_repeat)
    observation, _ = env.reset(seed=seed)
    planner.reset(observation)
    actions, rewards = [], []
    for step in range(steps):
        if split:
            # Step 0 is Reset's own observation: its plan already serves it.
            if step > 0:
                planner.observe(observation)
                planner.optimize()
            action = planner.action()
        else:
            action = planner.act(observation)
        observation, reward, _, _, _ = env.step(action)
        actions.append(action)
        rewards.append(reward)
    return np.array(actions), np.array(rewards), planner


def test_round_trip(pendulum_model):
    actions, _, planner = python_episode(pendulum_model, seed=1, steps=5)
    assert actions.shape == (5, 1)
    assert np.all(np.isfinite(actions)) and np.all(np.abs(actions) <= 1.0)
    horizon = planner.options.horizon
    assert planner.plan.actions.shape == (horizon, 1)
    assert planner.plan.observations.shape == (horizon, planner.observation_dim)
    assert planner.stats.calls >= 1 and planner.stats.latency_ms > 0
    assert planner.steps == 5
    assert planner.options.mode == "warm"


def test_same_actions_and_rewards_as_the_cpp_tool(pendulum_model, dfmpc_tool, tmp_path):
    steps, seed = 20, 7
    subprocess.run(
        [dfmpc_tool, "control", "--model", pendulum_model, "--steps", str(steps), "--seed",
         str(seed), "--out", str(tmp_path), "--frame-size", "0"],
        check=True, capture_output=True)
    with open(tmp_path / "steps.csv", newline="") as f:
        rows = [row for row in csv.DictReader(f)]
    assert len(rows) == steps
    actions, rewards, _ = python_episode(pendulum_model, seed, steps)
    # steps.csv rounds to 4 decimals: agreement to half a unit of the last.
    np.testing.assert_allclose(actions[:, 0], [float(r["action0"]) for r in rows], atol=5.1e-5)
    np.testing.assert_allclose(rewards, [float(r["reward"]) for r in rows], atol=5.1e-5)


def test_observe_optimize_action_equals_act(pendulum_model):
    acted, _, _ = python_episode(pendulum_model, seed=2, steps=8)
    split, _, _ = python_episode(pendulum_model, seed=2, steps=8, split=True)
    assert np.array_equal(acted, split)


def test_a_deadline_without_time_defers_the_step(pendulum_model):
    planner = dfmpc.Planner.from_file(pendulum_model)
    observation, _ = dfmpc.make_env("pendulum_swingup").reset(seed=0)
    planner.reset(observation)
    planner.observe(observation + 0.01)
    assert planner.optimize(deadline_s=0.0) is False
    assert planner.stats.deferred
    # Nothing can start by a deadline already past, whichever its kind.
    assert planner.optimize(deadline_s=0.0, deadline_kind="start-only") is False
    with pytest.raises(ValueError, match="unknown deadline kind 'soft'"):
        planner.optimize(deadline_s=0.01, deadline_kind="soft")
    assert planner.optimize() is True


def test_options_are_the_tasks_tuned_ones_and_keywords_override_them(pendulum_model):
    tuned = dfmpc.tuned_options("pendulum_swingup")
    planner = dfmpc.Planner.from_file(pendulum_model, candidates=2, mode="replan")
    assert planner.options.candidates == 2 and planner.options.mode == "replan"
    assert planner.options.renoise_levels == tuned.renoise_levels
    assert dfmpc.tuned_options("cartpole_swingup").renoise_levels == 12
    assert (tuned.action_window, planner.options.action_window) == (8, 8)
    assert dfmpc.Planner.from_file(pendulum_model, action_window=1).options.action_window == 1
    assert (tuned.action_gain, tuned.action_gain_knee) == (2.122, 0.2244)
    assert (planner.options.action_gain, planner.options.action_gain_knee) == (2.122, 0.2244)
    plain = dfmpc.Planner.from_file(pendulum_model, action_gain=1.0, action_gain_knee=0.0)
    assert (plain.options.action_gain, plain.options.action_gain_knee) == (1.0, 0.0)


def test_the_noise_scale_reaches_the_planner_and_changes_its_plan(pendulum_model):
    observation = np.array([-1.0, 0.1, 0.5])
    plans = {}
    for scale, share in ((1.0, 1.0), (0.3, 1.0), (0.3, 0.0)):
        planner = dfmpc.Planner.from_file(
            pendulum_model, noise_scale=scale, noise_scale_share=share, mode="replan")
        assert planner.options.noise_scale == scale
        assert planner.options.noise_scale_share == share
        planner.reset(observation)
        plans[scale, share] = planner.plan.actions[:4]  # estimated rows (later ones may be NaN)
    assert np.isfinite(plans[1.0, 1.0]).all() and np.isfinite(plans[0.3, 1.0]).all()
    assert not np.allclose(plans[1.0, 1.0], plans[0.3, 1.0])
    # No candidate narrowed: the scale 1 planner's plan, bit for bit.
    np.testing.assert_array_equal(plans[0.3, 0.0], plans[1.0, 1.0])
    with pytest.raises(ValueError, match="noise_scale"):
        dfmpc.Planner.from_file(pendulum_model, noise_scale=0.0)
    with pytest.raises(ValueError, match="noise_scale_share"):
        dfmpc.Planner.from_file(pendulum_model, noise_scale_share=1.5)


def test_block_cache_options_reach_the_planner(pendulum_model):
    planner = dfmpc.Planner.from_file(pendulum_model, front_tokens=6, refresh_every=4)
    assert (planner.options.front_tokens, planner.options.refresh_every) == (6, 4)
    observation, _ = dfmpc.make_env("pendulum_swingup").reset(seed=0)
    planner.reset(observation)
    planner.act(observation)  # Reset's plan
    planner.act(observation + 0.01)  # a front step: the real token and six plan tokens
    assert planner.stats.token_forwards == 1 + 6
    with pytest.raises(ValueError, match="planner option .refresh_every. must be >= 1"):
        dfmpc.Planner.from_file(pendulum_model, refresh_every=0)


def test_bf16_products_reach_the_planner(pendulum_model):
    """The option runs the same program; only its arithmetic differs."""
    stats = {}
    for bf16 in (False, True):
        planner = dfmpc.Planner.from_file(pendulum_model, cpu_bf16=bf16)
        assert planner.options.cpu_bf16 is bf16
        env = dfmpc.make_env("pendulum_swingup")
        observation, _ = env.reset(seed=0)
        planner.reset(observation)
        for _ in range(3):
            action = planner.act(observation)
            assert np.all(np.isfinite(action)) and np.all(np.abs(action) <= 1.0)
            observation, _, _, _, _ = env.step(action)
        stats[bf16] = (planner.stats.calls, planner.stats.token_forwards)
    assert stats[True] == stats[False]


@pytest.mark.parametrize(
    "observation, message",
    [
        (np.zeros(2), r"shape \(3,\), got shape \(2,\)"),
        (np.zeros((3, 1)), r"got shape \(3,1\)"),
        (np.array(["a", "b", "c"]), "dtype"),
        (np.array([1.0, 0.0, np.nan]), "NaN"),
        ("text", "dtype"),
    ],
)
def test_bad_observations_are_value_errors(pendulum_model, observation, message):
    planner = dfmpc.Planner.from_file(pendulum_model)
    with pytest.raises(ValueError, match=message):
        planner.reset(observation)


def test_every_option_has_one_name_in_python_the_task_file_and_the_command_line(dfmpc_tool):
    table = dfmpc.option_table()
    keys = [row["key"] for row in table]
    assert "levels" in keys and "sinks" in keys and "action_gain_knee" in keys
    options = dfmpc.PlannerOptions()
    help_text = subprocess.run([dfmpc_tool, "control", "--help"], check=True,
                               capture_output=True, text=True).stdout
    flags_elsewhere = {"seed": "--planner-seed", "threads": "--planner-threads"}
    for row in table:
        assert getattr(options, row["key"]) == row["default"], row["key"]
        assert flags_elsewhere.get(row["key"], "--" + row["key"].replace("_", "-")) in help_text
    # A keyword of from_file is an attribute of PlannerOptions of the same name.
    assert dfmpc.PlannerOptions(levels=4, sinks=1).levels == 4


def test_an_override_keeps_every_tuned_option(pendulum_model):
    tuned = dfmpc.tuned_options("pendulum_swingup")
    seeded = dfmpc.Planner.from_file(pendulum_model, seed=3).options
    for row in dfmpc.option_table():
        key = row["key"]
        if key not in ("seed", "uncertainty", "context_length"):  # the last two: resolved by the model
            assert getattr(seeded, key) == getattr(tuned, key), key
    assert seeded.seed == 3


def test_bad_files_options_and_tasks_are_clear_errors(pendulum_model, tmp_path):
    with pytest.raises(RuntimeError, match="does not exist"):
        dfmpc.Planner.from_file(str(tmp_path / "missing.pt"))
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a model")
    with pytest.raises(RuntimeError, match="corrupt.pt"):
        dfmpc.Planner.from_file(str(corrupt))
    with pytest.raises(RuntimeError, match="trained for task 'pendulum_swingup'"):
        dfmpc.Planner.from_file(pendulum_model, task="reacher")
    with pytest.raises(TypeError, match="unknown planner option 'horizn' .did you mean 'horizon'"):
        dfmpc.Planner.from_file(pendulum_model, horizn=8)
    with pytest.raises(TypeError, match="planner option 'levels' must be >= 1 .an int., got float"):
        dfmpc.Planner.from_file(pendulum_model, levels=2.5)
    with pytest.raises(TypeError, match="'cpu_bf16'"):
        dfmpc.Planner.from_file(pendulum_model, cpu_bf16=1)
    with pytest.raises(ValueError, match="candidates"):
        dfmpc.Planner.from_file(pendulum_model, candidates=0)
    with pytest.raises(ValueError, match="before Reset"):
        dfmpc.Planner.from_file(pendulum_model).act(np.zeros(3))


def test_model_calls_release_the_gil(pendulum_model):
    """A second thread runs inside the window of a reset. With a switch
    interval far longer than the reset, it could only do so if reset released
    the GIL: holding it, the main thread would keep it from before the window
    opens until after it closes."""
    planner = dfmpc.Planner.from_file(pendulum_model)
    observation, _ = dfmpc.make_env("pendulum_swingup").reset(seed=0)
    ticks, go, stop = [], threading.Event(), threading.Event()

    def spin():
        go.wait()
        while not stop.is_set():
            ticks.append(time.perf_counter())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(2.0)
    thread = threading.Thread(target=spin)
    thread.start()
    try:
        go.set()
        start = time.perf_counter()
        planner.reset(observation)  # K model calls, tens of milliseconds
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    inside = sum(start < t < end for t in ticks)
    assert inside > 100, f"{inside} ticks of the other thread during reset"


def test_two_threads_sharing_a_planner_take_turns(pendulum_model):
    planner = dfmpc.Planner.from_file(pendulum_model, candidates=2)
    observation, _ = dfmpc.make_env("pendulum_swingup").reset(seed=0)
    planner.reset(observation)
    errors = []

    def act():
        try:
            for step in range(5):
                assert np.all(np.isfinite(planner.act(observation + 0.001 * (step + 1))))
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=act) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert planner.steps == 11  # step 0, then ten observed steps


def test_async_planner_starts_steps_and_stops(pendulum_model):
    planner = dfmpc.Planner.from_file(pendulum_model)
    env = dfmpc.make_env("pendulum_swingup", action_repeat=planner.action_repeat)
    observation, _ = env.reset(seed=5)
    runner = dfmpc.AsyncPlanner(planner, max_wait_s=0.05)
    with pytest.raises(ValueError, match="handed to an AsyncPlanner"):
        planner.act(observation)
    runner.reset(observation)
    for _ in range(10):
        action = runner.step(observation)
        assert action.shape == (1,) and np.all(np.abs(action) <= 1.0)
        observation, _, _, _, _ = env.step(action)
    stats = runner.stats
    assert stats.steps == 10 and stats.planner_errors == 0 and stats.plans >= 1
    with pytest.raises(ValueError, match="max_wait_s"):
        dfmpc.AsyncPlanner(dfmpc.Planner.from_file(pendulum_model), max_wait_s=-1)
    with pytest.raises(ValueError, match="unknown deadline kind"):
        dfmpc.AsyncPlanner(dfmpc.Planner.from_file(pendulum_model), deadline_kind="late")
    del runner  # joins the planning thread
