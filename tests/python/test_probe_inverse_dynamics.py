"""scripts/probe_inverse_dynamics.py: the inverse model recovers the random
actions of real pendulum physics from consecutive observations, the
planner's own arm is `dfmpc eval`'s episode, and bad input is named before
anything is written."""

import csv
import subprocess

import numpy as np
import pytest

SCRIPT = "probe_inverse_dynamics.py"
pytest.importorskip("torch")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Eight pendulum episodes of uniformly random torques from random angles."""
    import dfmpc

    path = tmp_path_factory.mktemp("inverse") / "played.h5"
    dfmpc.collect("pendulum_swingup", str(path), episodes=8, policy="random", seed=3)
    return str(path)


def probe(run_script, data, model, out, *extra):
    return run_script(SCRIPT, data, "--model", model, "--episodes", "1", "--runs", "1",
                      "--steps", "3000", "--batch", "128", "--width", "64", "--held-out", "0.25",
                      "--csv", str(out), *extra)


def test_recovers_actions_and_runs_both_sources(played, pendulum_model, dfmpc_tool, tmp_path,
                                                run_script):
    import dfmpc

    out = tmp_path / "id.csv"
    result = probe(run_script, played, pendulum_model, out)
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(open(out)))
    assert [(r["arm"], r["action"]) for r in rows] == [("task file", "planner's"),
                                                       ("task file", "inverse dynamics")]
    data = dfmpc.read_dataset(played, frames=False)
    # Uniform torques in [-1, 1] vary by 1/3; the torque is what changes the
    # velocity between two observations beside gravity, so the two held-out
    # episodes' actions are recovered to a small part of that (0.005 here).
    assert np.var(data["actions"]) > 0.25
    assert float(rows[1]["held_out_mse"]) < 0.02
    assert rows[1]["ahead"] == "1" and rows[0]["held_out_mse"] == ""
    for row in rows:
        assert np.isfinite(float(row["return_mean"])) and float(row["mean_abs_da"]) > 0
    # The planner's own arm is the episode `dfmpc eval` plays.
    summary = tmp_path / "eval.csv"
    subprocess.run([dfmpc_tool, "eval", "--policy", "dfmpc", "--model", pendulum_model,
                    "--episodes", "1", "--seed", "1", "--planner-threads", "1", "--summary",
                    str(summary)], check=True, capture_output=True)
    evaluated = next(csv.DictReader(open(summary)))
    assert float(rows[0]["return_mean"]) == pytest.approx(float(evaluated["return_mean"]), abs=0.06)


def test_bad_input_is_named_before_writing(played, pendulum_model, tmp_path, run_script):
    out = tmp_path / "x.csv"
    far = probe(run_script, played, pendulum_model, out, "--ahead", "33")
    assert far.returncode != 0 and "--ahead 33 lies beyond" in far.stderr
    unknown = probe(run_script, played, pendulum_model, out, "--arm", "odd", "bogus=1")
    assert unknown.returncode != 0 and "bogus" in unknown.stderr
    missing = probe(run_script, str(tmp_path / "absent.h5"), pendulum_model, out)
    assert missing.returncode != 0 and "absent.h5" in missing.stderr
    zero = probe(run_script, played, pendulum_model, out, "--ahead", "0")
    assert zero.returncode != 0 and "--ahead must be at least 1" in zero.stderr
    assert not out.exists()
