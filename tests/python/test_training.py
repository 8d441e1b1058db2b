"""dfmpc.train: a tiny world model trained from Python, equal to the tool's,
and planned with."""

import csv
import subprocess

import numpy as np
import pytest

import dfmpc

TINY = dict(steps=20, batch_size=8, window=12, width=32, depth=1, heads=2, validate_every=10,
            checkpoint_every=10, warmup_steps=5, seed=3)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("train") / "data.h5"
    dfmpc.collect("pendulum_swingup", str(path), episodes=4, policy="random",
                  episode_physics_steps=100)
    return path


def test_train_then_plan(dataset, tmp_path):
    model = tmp_path / "tiny.pt"
    seen = []
    log = dfmpc.train([str(dataset)], str(model), threads=1,
                      progress=lambda *p: seen.append(p), **TINY)
    assert [row["step"] for row in log] == [10, 20]
    assert all(np.isfinite(row["validation_loss"]) for row in log)
    assert [p[0] for p in seen] == list(range(1, 21)) and seen[-1][1] == 20
    planner = dfmpc.Planner.from_file(str(model), candidates=2, horizon=8)
    assert planner.task == "pendulum_swingup"
    env = dfmpc.make_env("pendulum_swingup", episode_physics_steps=100)
    observation, _ = env.reset(seed=0)
    planner.reset(observation)
    for _ in range(3):
        action = planner.act(observation)
        assert np.all(np.isfinite(action))
        observation, _, _, _, _ = env.step(action)


def assert_same_losses_as_the_tool(log, dfmpc_tool, dataset, tmp_path, *flags):
    """`dfmpc train` with TINY's settings and `flags` logs the losses of `log`."""
    subprocess.run(
        [dfmpc_tool, "train", "--data", str(dataset), "--out", str(tmp_path / "cli.pt"),
         "--steps", "20", "--batch", "8", "--window", "12", "--width", "32", "--depth", "1",
         "--heads", "2", "--validate-every", "10", "--checkpoint-every", "10", "--warmup", "5",
         "--seed", "3", "--threads", "1", *flags], check=True, capture_output=True)
    with open(tmp_path / "cli_loss.csv", newline="") as f:
        cli = [float(row["validation_loss"]) for row in csv.DictReader(f)]
    # loss.csv keeps 6 decimals.
    np.testing.assert_allclose([row["validation_loss"] for row in log], cli, atol=5.1e-7)


def test_same_losses_as_the_cpp_tool(dataset, dfmpc_tool, tmp_path):
    log = dfmpc.train([str(dataset)], str(tmp_path / "py.pt"), threads=1, **TINY)
    assert_same_losses_as_the_tool(log, dfmpc_tool, dataset, tmp_path)


def test_an_outcome_conditioned_model_equals_the_tool_and_plans_with_guidance(
        dataset, dfmpc_tool, tmp_path):
    model = tmp_path / "py.pt"
    log = dfmpc.train([str(dataset)], str(model), threads=1, outcome_condition=True,
                      outcome_dropout=0.3, outcome_baseline_neighbours=2, **TINY)
    assert_same_losses_as_the_tool(log, dfmpc_tool, dataset, tmp_path, "--outcome-condition",
                                   "--outcome-dropout", "0.3", "--outcome-baseline", "2")
    assert dfmpc.model_info(str(model))["outcome_condition"]
    env = dfmpc.make_env("pendulum_swingup", episode_physics_steps=100)
    observation, _ = env.reset(seed=0)
    actions = []
    for weight in (0.0, 2.0):
        planner = dfmpc.Planner.from_file(str(model), candidates=2, horizon=8,
                                          outcome_guidance=weight, target_outcome=0.95)
        planner.reset(observation)
        actions.append(planner.act(observation))
    assert np.all(np.isfinite(actions)) and not np.array_equal(actions[0], actions[1])
    plain = tmp_path / "plain.pt"
    dfmpc.train([str(dataset)], str(plain), threads=1, **TINY)
    assert not dfmpc.model_info(str(plain))["outcome_condition"]
    with pytest.raises(ValueError, match="outcome condition"):
        dfmpc.Planner.from_file(str(plain), outcome_guidance=2.0)


def test_hidden_context_actions_equal_the_tool_and_are_recorded(dataset, dfmpc_tool, tmp_path):
    model = tmp_path / "hidden.pt"
    log = dfmpc.train([str(dataset)], str(model), threads=1, hide_context_actions=True, **TINY)
    assert_same_losses_as_the_tool(log, dfmpc_tool, dataset, tmp_path, "--hide-context-actions")
    assert dfmpc.model_info(str(model))["hidden_clean_actions"] == 1  # the pendulum's one action
    plain = dfmpc.train([str(dataset)], str(tmp_path / "plain.pt"), threads=1, **TINY)
    assert dfmpc.model_info(str(tmp_path / "plain.pt"))["hidden_clean_actions"] == 0
    assert [row["validation_loss"] for row in plain] != [row["validation_loss"] for row in log]


def test_cfg_aware_distillation_guides_in_one_call_from_python_and_the_tool(
        dataset, dfmpc_tool, tmp_path):
    teacher = tmp_path / "conditioned.pt"
    dfmpc.train([str(dataset)], str(teacher), threads=1, outcome_condition=True, **TINY)
    with pytest.raises(ValueError, match="give max_outcome_guidance"):
        dfmpc.distill(str(teacher), [str(dataset)], str(tmp_path / "never.pt"), steps=2)
    student = tmp_path / "student.pt"
    dfmpc.distill(str(teacher), [str(dataset)], str(student), threads=1, steps=4, batch_size=4,
                  validate_every=2, max_outcome_guidance=2.0)
    assert dfmpc.model_info(str(student))["max_outcome_guidance"] == 2.0
    assert dfmpc.model_info(str(teacher))["max_outcome_guidance"] == 0.0
    planner = dfmpc.Planner.from_file(str(student), candidates=2, horizon=8,
                                      outcome_guidance=2.0)
    env = dfmpc.make_env("pendulum_swingup", episode_physics_steps=100)
    observation, _ = env.reset(seed=0)
    planner.reset(observation)
    assert np.all(np.isfinite(planner.act(observation)))
    with pytest.raises(ValueError, match="exceeds the 2.0+ this model was distilled for"):
        dfmpc.Planner.from_file(str(student), horizon=8, outcome_guidance=2.5)
    # The tool's flag writes the same kind of student.
    cli = tmp_path / "cli.pt"
    subprocess.run([dfmpc_tool, "distill", "--model", str(teacher), "--data", str(dataset),
                    "--out", str(cli), "--max-outcome-guidance", "1.5", "--steps", "2",
                    "--batch", "4", "--validate-every", "2"], check=True, capture_output=True)
    info = subprocess.run([dfmpc_tool, "info", str(cli)], check=True, capture_output=True,
                          text=True).stdout
    assert "guidance in one call (CFG-aware, weights 0 to 1.5)" in info


def test_an_exception_in_progress_stops_training(dataset, tmp_path):
    def stop_at(last):
        def stop(step, total, loss, rate):
            if step == last:
                raise KeyError("enough")
        return stop

    # Before the first validation: no model file yet.
    with pytest.raises(KeyError, match="enough"):
        dfmpc.train([str(dataset)], str(tmp_path / "early.pt"), progress=stop_at(3), **TINY)
    assert not (tmp_path / "early.pt").exists()
    # After it: the model of that validation, whole, and the resume state.
    late = tmp_path / "late.pt"
    with pytest.raises(KeyError, match="enough"):
        dfmpc.train([str(dataset)], str(late), progress=stop_at(13), **TINY)
    assert dfmpc.Planner.from_file(str(late), horizon=8).task == "pendulum_swingup"
    assert (tmp_path / "late.state").exists()
    resumed = dfmpc.train([str(dataset)], str(late), resume=True, **TINY)
    assert [row["step"] for row in resumed] == [10, 20]


def test_bad_options_and_files_are_clear_errors(dataset, tmp_path):
    out = str(tmp_path / "m.pt")
    with pytest.raises(TypeError, match="unknown training option 'stepz'"):
        dfmpc.train([str(dataset)], out, stepz=3)
    with pytest.raises(ValueError, match="steps"):
        dfmpc.train([str(dataset)], out, steps=0)
    with pytest.raises(RuntimeError, match="missing.h5"):
        dfmpc.train([str(tmp_path / "missing.h5")], out)
    with pytest.raises(ValueError, match="device"):
        dfmpc.train([str(dataset)], out, device="tpu")


def test_train_mlp_equals_the_tool_and_its_ensemble_drives_the_peer(dataset, dfmpc_tool,
                                                                     tmp_path):
    seen = []
    # The optimiser's keywords are the flags of every training command.
    result = dfmpc.train_mlp([str(dataset)], str(tmp_path / "mlp.pt"), steps=30, batch_size=32,
                             warmup_steps=5, grad_clip=0.5, min_learning_rate_ratio=0.2,
                             seed=2, threads=1, progress=lambda *p: seen.append(p))
    assert result["members"] == 1 and result["best_loss"] < result["untrained_loss"]
    assert seen[-1][:2] == (0, 30)
    tool = subprocess.run(
        [dfmpc_tool, "train-mlp", "--data", str(dataset), "--out", str(tmp_path / "cli.pt"),
         "--steps", "30", "--batch", "32", "--warmup", "5", "--grad-clip", "0.5",
         "--min-lr-ratio", "0.2", "--seed", "2", "--threads", "1"],
        check=True, capture_output=True, text=True)
    assert f"validation loss {result['best_loss']:.3g} " in tool.stderr
    with pytest.raises(ValueError, match="gradient clip must be >= 0"):
        dfmpc.train_mlp([str(dataset)], str(tmp_path / "x.pt"), grad_clip=-1.0)

    ensemble = tmp_path / "ensemble.pt"
    result = dfmpc.train_mlp([str(dataset)], str(ensemble), ensemble=2, steps=10, threads=1)
    assert result["members"] == 2 and result["worst_loss"] >= result["best_loss"]
    subprocess.run(
        [dfmpc_tool, "control", "--policy", "mlp-mppi", "--mlp-model", str(ensemble), "--steps",
         "3", "--frame-size", "0", "--out", str(tmp_path / "control")],
        check=True, capture_output=True)
    with pytest.raises(TypeError, match="unknown training option 'width'"):
        dfmpc.train_mlp([str(dataset)], str(tmp_path / "x.pt"), width=8)
    with pytest.raises(ValueError, match="ensemble"):
        dfmpc.train_mlp([str(dataset)], str(tmp_path / "x.pt"), ensemble=-1)


def test_train_value_equals_the_tool_and_the_planner_takes_it(dataset, dfmpc_tool, tmp_path,
                                                              pendulum_model):
    value = tmp_path / "value.pt"
    seen = []
    result = dfmpc.train_value([str(dataset)], str(value), discount=0.9, width=16, steps=200,
                               seed=1, threads=1, progress=lambda *p: seen.append(p))
    assert result["loss"] < result["untrained_loss"]
    assert seen[-1][0] == 200
    tool = subprocess.run(
        [dfmpc_tool, "train-value", "--data", str(dataset), "--out", str(tmp_path / "cli.pt"),
         "--discount", "0.9", "--width", "16", "--steps", "200", "--seed", "1", "--threads", "1"],
        check=True, capture_output=True, text=True)
    assert f"validation loss {result['loss']:.3g} " in tool.stderr

    planner = dfmpc.Planner.from_file(pendulum_model, value_model=str(value), value_weight=0.5,
                                      candidates=2)
    assert planner.options.value_model == str(value) and planner.options.value_weight == 0.5
    observation, _ = dfmpc.make_env("pendulum_swingup").reset(seed=0)
    planner.reset(observation)
    assert np.all(np.isfinite(planner.act(observation)))
    with pytest.raises(RuntimeError, match="not a value model"):
        dfmpc.Planner.from_file(pendulum_model, value_model=pendulum_model)
    with pytest.raises(ValueError, match="discount"):
        dfmpc.train_value([str(dataset)], str(tmp_path / "x.pt"), discount=1.0)


def test_distill_halves_the_levels_and_the_planner_takes_them(dataset, tmp_path):
    teacher = tmp_path / "teacher.pt"
    dfmpc.train([str(dataset)], str(teacher), threads=1, **TINY)
    student = tmp_path / "student.pt"
    seen = []
    log = dfmpc.distill(str(teacher), [str(dataset)], str(student), threads=1, steps=4,
                        batch_size=4, validate_every=2, progress=lambda *p: seen.append(p))
    assert [row["step"] for row in log] == [2, 4]
    assert all(np.isfinite(row["validation_loss"]) for row in log)
    assert [p[0] for p in seen] == [1, 2, 3, 4]
    # The teacher samples at 16 levels by default, the student at 8, and the
    # task file's re-noise keeps its share of the range.
    tuned = dfmpc.tuned_options("pendulum_swingup")
    planner = dfmpc.Planner.from_file(str(student), candidates=2, horizon=8)
    assert planner.options.num_levels == 8
    share = tuned.renoise_levels * 8 / tuned.num_levels  # rounded half away from zero
    assert planner.options.renoise_levels == max(1, int(share + 0.5))
    with pytest.raises(ValueError, match="distilled to sample with K = 8 levels"):
        dfmpc.Planner.from_file(str(student), candidates=2, horizon=8, num_levels=16)
    with pytest.raises(TypeError, match="unknown training option 'stepz'"):
        dfmpc.distill(str(teacher), [str(dataset)], str(tmp_path / "never.pt"), stepz=3)
    with pytest.raises(ValueError, match="cannot teach at K = 16"):
        dfmpc.distill(str(student), [str(dataset)], str(tmp_path / "never.pt"), teacher_levels=16)
