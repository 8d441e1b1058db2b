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
    second's stays at 1."""
    scales = [np.array([1.0, 0.2, 0.1, 2.0]), np.ones(4)]
    path = tmp_path / "toy.h5"
    write_observation_dataset(path, [np.column_stack([np.zeros(4), 0.3 * s, 0.4 * s])
                                     for s in scales])
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


def test_bad_options_are_named(data, tmp_path, run_script):
    column = run_script(SCRIPT, data, "--features", "1", "3", "--within", "0.2", "--csv", "x.csv")
    assert column.returncode != 0 and "--features 3 is not a column of 3" in column.stderr
    radius = run_script(SCRIPT, data, "--features", "1", "--within", "0", "--csv", "x.csv")
    assert radius.returncode != 0 and "--within must be > 0" in radius.stderr
    missing = run_script(SCRIPT, str(tmp_path / "none.h5"), "--features", "1", "--within", "1",
                         "--csv", "x.csv")
    assert missing.returncode != 0 and "none.h5" in missing.stderr
