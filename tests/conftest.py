"""Shared fixtures: the devices to run on, and a fixed seed for every test."""

import numpy as np
import pytest

import lucid

DEVICES = ["cpu"] + (["gpu"] if lucid.is_available("gpu") else [])


@pytest.fixture(autouse=True)
def _seed():
    lucid.manual_seed(0)
    np.random.seed(0)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
