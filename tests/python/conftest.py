"""Shared fixtures of the Python tests: the shipped pendulum model and the
dfmpc tool of the same build (for comparing with the C++ path)."""

import os
import pathlib

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
