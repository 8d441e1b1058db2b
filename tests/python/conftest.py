"""Shared fixtures of the Python tests: the shipped pendulum model and the
dfmpc tool of the same build (for comparing with the C++ path)."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def pendulum_model():
    return str(ROOT / "examples" / "models" / "pendulum_swingup.pt")


@pytest.fixture(scope="session")
def dfmpc_tool():
    tool = os.environ.get("DFMPC_TOOL")
    if not tool or not os.path.exists(tool):
        pytest.skip("DFMPC_TOOL (the dfmpc executable) is not set")
    return tool


@pytest.fixture(scope="session")
def run_script():
    """run_script(NAME, *args) runs scripts/NAME with this Python, capturing
    its output."""
    def run(name, *args):
        return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args],
                              capture_output=True, text=True)
    return run


@pytest.fixture(scope="session")
def write_observation_dataset():
    """write_observation_dataset(PATH, [observations, ...]) writes one
    episode per array of T + 1 observations, with T zero actions and
    rewards, for a probe whose answer the observations fix."""
    import dfmpc

    def write(path, paths):
        episodes = [{"observations": o, "actions": np.zeros((len(o) - 1, 1)),
                     "rewards": np.zeros(len(o) - 1)} for o in paths]
        dfmpc.write_dataset(str(path), episodes, task="toy", control_timestep=0.1,
                            episode_physics_steps=len(paths[0]) - 1)
    return write
