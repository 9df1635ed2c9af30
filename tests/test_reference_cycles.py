"""Optimizers, schedulers, wrappers and averaged models hold no reference cycle (issue 25).

An object in a cycle is freed only by the cyclic collector, late, with its parameters' state
(torch's ``test_optimizer_can_be_garbage_collected``-style check): each object here, used as
in training (stepped, saved and loaded), is freed the moment its last reference goes, with
the collector off.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import pytest

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler as S
from lucid.optim import swa_utils
from optim_registry import REGISTRY


def _freed_without_the_collector(make):
    """The names of the objects ``make()`` returns that outlive their last reference."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            objects = make()
        refs = [weakref.ref(obj) for obj in objects]
        del objects
        return [type(ref()).__name__ for ref in refs if ref() is not None]
    finally:
        if enabled:
            gc.enable()


def _param():
    return nn.Parameter(lucid.ones(3, 2) * 0.5)


@pytest.mark.parametrize("info", REGISTRY, ids=lambda info: info.name)
def test_an_optimizer_is_freed_without_the_cyclic_collector(info):
    def make():
        params = [_param()]
        optimizer = getattr(optim, info.name)(params, **info.state_kwargs)

        def closure():
            optimizer.zero_grad()
            loss = (params[0] * params[0]).sum()
            loss.backward()
            return loss
        for _ in range(2):  # the second step runs the step plan
            optimizer.step(closure)
        optimizer.load_state_dict(optimizer.state_dict())
        return [optimizer]
    assert _freed_without_the_collector(make) == []


def _with_scheduler(build):
    def make():
        optimizer = optim.SGD([_param()], lr=0.1, momentum=0.9)
        scheduler = build(optimizer)
        optimizer.step()
        scheduler.step(*([1.0] if isinstance(scheduler, S.ReduceLROnPlateau) else []))
        scheduler.load_state_dict(scheduler.state_dict())
        return [optimizer, scheduler]
    return make


SCHEDULERS = {
    "StepLR": lambda o: S.StepLR(o, 2),
    "LambdaLR": lambda o: S.LambdaLR(o, lambda epoch: 0.5),
    "OneCycleLR": lambda o: S.OneCycleLR(o, 1.0, total_steps=10),
    "CyclicLR": lambda o: S.CyclicLR(o, 0.1, 1.0),
    "ReduceLROnPlateau": lambda o: S.ReduceLROnPlateau(o),
    "SequentialLR": lambda o: S.SequentialLR(o, [S.ConstantLR(o), S.ExponentialLR(o, 0.9)], [2]),
    "ChainedScheduler": lambda o: S.ChainedScheduler([S.ConstantLR(o), S.ExponentialLR(o, 0.9)]),
    "SWALR": lambda o: swa_utils.SWALR(o, 0.05),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_a_scheduler_and_its_optimizer_are_freed_without_the_cyclic_collector(name):
    assert _freed_without_the_collector(_with_scheduler(SCHEDULERS[name])) == []


WRAPPERS = {
    "GradientAccumulation": lambda o: optim.GradientAccumulation(o, steps=2),
    "SkipNonFinite": lambda o: optim.SkipNonFinite(o),
    "both": lambda o: optim.GradientAccumulation(optim.SkipNonFinite(o), steps=2),
}


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_a_wrapper_and_its_optimizer_are_freed_without_the_cyclic_collector(name):
    def make():
        param = _param()
        optimizer = optim.Adam([param])
        wrapper = WRAPPERS[name](optimizer)
        for _ in range(2):
            param.grad = lucid.ones(3, 2)
            wrapper.step()
        wrapper.load_state_dict(wrapper.state_dict())
        return [optimizer, wrapper]
    assert _freed_without_the_collector(make) == []


def test_an_averaged_model_is_freed_without_the_cyclic_collector():
    def make():
        model = nn.Linear(2, 2)
        averaged = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
        averaged.update_parameters(model)
        averaged.update_parameters(model)
        averaged.load_state_dict(averaged.state_dict())
        return [model, averaged]
    assert _freed_without_the_collector(make) == []


def test_a_zero_redundancy_optimizer_is_freed_without_the_cyclic_collector():
    from lucid import distributed as dist
    from lucid.distributed.optim import ZeroRedundancyOptimizer

    def make():
        param = _param()
        zero = ZeroRedundancyOptimizer([param], optim.Adam, lr=0.1)
        for _ in range(2):
            param.grad = lucid.ones(3, 2)
            zero.step()
        zero.consolidate_state_dict()
        zero.load_state_dict(zero.state_dict())
        return [zero, zero.optim]
    dist.init_process_group("any")
    try:
        assert _freed_without_the_collector(make) == []
    finally:
        dist.destroy_process_group()
