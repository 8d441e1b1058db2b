"""scripts/probe_recovery.py: when a feature falls below a level and how
many steps it takes to come back, on a dataset whose answer is known."""

import csv

import numpy as np
import pytest

SCRIPT = "probe_recovery.py"


@pytest.fixture
def data(tmp_path, write_observation_dataset):
    """Feature 1 falls below 0.5 at step 2 of the first episode and is back
    at 1.2 three steps later; the second episode never falls."""
    heights = [np.array([1.3, 1.0, 0.3, 0.2, 0.8, 1.25, 1.3, 1.3]), np.full(8, 1.3)]
    path = tmp_path / "toy.h5"
    write_observation_dataset(path, [np.column_stack([np.zeros(8), h]) for h in heights])
    return str(path)


def test_finds_the_fall_and_the_steps_back(data, tmp_path, run_script):
    out = tmp_path / "recovery.csv"
    result = run_script(SCRIPT, data, "--feature", "1", "--low", "0.5", "--high", "1.2",
                        "--csv", str(out))
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(open(out)))
    assert [(r["first_fall_step"], r["steps_to_recover"]) for r in rows] == [("2", "3"), ("", "")]
    # Two of the 14 steps lie below 0.5.
    assert all(r["fraction_of_all_steps_below"] == "0.143" for r in rows)


def test_bad_options_are_named(data, run_script):
    levels = run_script(SCRIPT, data, "--feature", "1", "--low", "1.2", "--high", "0.5",
                        "--csv", "x.csv")
    assert levels.returncode != 0 and "--low (1.2) must lie below --high (0.5)" in levels.stderr
    column = run_script(SCRIPT, data, "--feature", "2", "--low", "0.5", "--high", "1.2",
                        "--csv", "x.csv")
    assert column.returncode != 0 and "--feature 2 is not a column of 2" in column.stderr
