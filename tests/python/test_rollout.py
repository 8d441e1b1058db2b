"""dfmpc.rollout: open-loop video prediction from Python, as the tool's."""

import csv
import subprocess

import numpy as np
import pytest

import dfmpc


def psnr(truth, predicted):
    error = ((truth.astype(np.float64) - predicted.astype(np.float64)) ** 2).mean(axis=(1, 2, 3))
    return 10 * np.log10(255.0 ** 2 / error)


def test_frames_and_the_tools_psnr(dfmpc_tool, tmp_path):
    result = dfmpc.rollout(context=8, horizon=8, seed=2, threads=1)
    assert result["task"] == "pendulum_swingup"
    for key, frames in [("context", 8), ("truth", 8), ("predicted", 8)]:
        assert result[key].shape == (frames, 64, 64, 3) and result[key].dtype == np.uint8, key
    assert not np.array_equal(result["truth"], result["predicted"])
    assert result["seconds"] > 0
    subprocess.run([dfmpc_tool, "rollout", "--context", "8", "--horizon", "8", "--seed", "2",
                    "--threads", "1", "--out", str(tmp_path)], check=True, capture_output=True)
    with open(tmp_path / "rollout_metrics.csv", newline="") as f:
        tool = [float(row["model_psnr_db"]) for row in csv.DictReader(f)]
    # The tool's table keeps 3 decimals.
    np.testing.assert_allclose(psnr(result["truth"], result["predicted"]), tool, atol=5.1e-4)


def test_options_change_the_prediction():
    a = dfmpc.rollout(context=4, horizon=4, seed=1, threads=1)
    b = dfmpc.rollout(context=4, horizon=4, seed=1, threads=1, num_levels=4)
    assert np.array_equal(a["truth"], b["truth"])
    assert not np.array_equal(a["predicted"], b["predicted"])


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="horizon must be >= 1"):
        dfmpc.rollout(horizon=0)
    with pytest.raises(TypeError, match="unknown rollout option 'levels'"):
        dfmpc.rollout(horizon=2, levels=4)
    with pytest.raises(RuntimeError, match="missing.pt"):
        dfmpc.rollout(model=str(tmp_path / "missing.pt"), horizon=2)
    with pytest.raises(ValueError, match="cache"):
        dfmpc.rollout(horizon=2, cache="fast")
    with pytest.raises((ValueError, RuntimeError), match="actions|source"):
        dfmpc.rollout(horizon=2, actions="telepathy")
