"""scripts/probe_feature_path.py: a distance's start, minimum, end and
steps within a radius per episode, on a dataset whose answer is known."""

import csv

import numpy as np
import pytest

SCRIPT = "probe_feature_path.py"


@pytest.fixture
def data(tmp_path, write_observation_dataset):
    """Features 1 and 2 are a 3-4-5 offset scaled by s: the first episode's
    s goes 1, 0.2, 0.1 and ends at 2 (distances 0.5, 0.1, 0.05, 1.0); the
    second's stays at 1. Features 3 and 4 are a velocity: in the first
    episode against the offset, along it, still, and below 0.01; in the
    second, still."""
    scales = [np.array([1.0, 0.2, 0.1, 2.0]), np.ones(4)]
    velocities = [np.array([[-0.3, -0.4], [0.3, 0.4], [0.0, 0.0], [0.003, 0.0]]),
                  np.zeros((4, 2))]
    path = tmp_path / "toy.h5"
    write_observation_dataset(path, [np.column_stack([np.zeros(4), 0.3 * s, 0.4 * s, v])
                                     for s, v in zip(scales, velocities)])
    return str(path)


def test_start_minimum_end_and_steps_within(data, tmp_path, run_script):
    out = tmp_path / "path.csv"
    result = run_script(SCRIPT, data, "--features", "1", "2", "--within", "0.2", "--csv", str(out))
    assert result.returncode == 0, result.stderr
    first, second, mean = list(csv.DictReader(open(out)))
    assert (first["start"], first["min"], first["min_step"], first["end"]) == (
        "0.5000", "0.0500", "2", "1.0000")
    assert first["steps_within"] == "2" and first["ends_farther_than_start"] == "1"
    assert (second["min_step"], second["steps_within"], second["ends_farther_than_start"]) == (
        "0", "0", "0")
    assert mean["episode"] == "mean" and mean["end"] == "0.7500"
    assert "ends farther than it started in 1" in result.stdout
    assert "moving_share" not in first


def test_moving_toward_the_goal(data, tmp_path, run_script):
    out = tmp_path / "path.csv"
    result = run_script(SCRIPT, data, "--features", "1", "2", "--within", "0.2",
                        "--velocity", "3", "4", "--csv", str(out))
    assert result.returncode == 0, result.stderr
    first, second, mean = list(csv.DictReader(open(out)))
    # Two of four steps move faster than 0.01, one of them toward the goal.
    assert (first["moving_share"], first["moving_toward_share"]) == ("0.5000", "0.5000")
    assert (second["moving_share"], second["moving_toward_share"]) == ("0.0000", "nan")
    assert mean["moving_toward_share"] == "0.5000"
    assert "toward the goal in 0.5000 of its moving steps" in result.stdout


def test_bad_options_are_named(data, tmp_path, run_script):
    column = run_script(SCRIPT, data, "--features", "1", "5", "--within", "0.2", "--csv", "x.csv")
    assert column.returncode != 0 and "--features 5 is not a column of 5" in column.stderr
    velocity = run_script(SCRIPT, data, "--features", "1", "2", "--within", "0.2",
                          "--velocity", "3", "--csv", "x.csv")
    assert velocity.returncode != 0 and "--velocity needs 2 columns" in velocity.stderr
    radius = run_script(SCRIPT, data, "--features", "1", "--within", "0", "--csv", "x.csv")
    assert radius.returncode != 0 and "--within must be > 0" in radius.stderr
    missing = run_script(SCRIPT, str(tmp_path / "none.h5"), "--features", "1", "--within", "1",
                         "--csv", "x.csv")
    assert missing.returncode != 0 and "none.h5" in missing.stderr
