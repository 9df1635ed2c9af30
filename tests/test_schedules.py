"""Schedules as values (``lucid.optim.schedules``): closed forms, optimizers driven by them,
state_dict round trips and bad arguments."""

import copy
import json
import math
import pickle

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim import schedules as sch
from lucid.optim.schedules import constant, cosine, exponential, from_dict, join, linear, piecewise, step, warmup
from tolerances import SCHEDULER, close

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

EVERY_KIND = [
    constant(0.1),
    linear(0.0, 1.0, 5),
    cosine(3e-4, 1000, end=1e-5),
    exponential(1.0, 0.9),
    step(0.5, 3, gamma=0.2),
    warmup(10, cosine(0.1, 100)),
    warmup(0, 0.5),
    join([linear(0.0, 1.0, 4), 1.0, cosine(1.0, 8)], [4, 6]),
    piecewise([0.1, 0.01, 0.001], [10, 20]),
]


# --- closed forms ----------------------------------------------------------------------------------
SQRT5 = math.sqrt(5.0)
# values worked out by hand (cos(pi/5) = (1 + sqrt 5) / 4, cos(2 pi/5) = (sqrt 5 - 1) / 4), not
# with the implementation's formulas
HAND_VALUES = [
    (constant(0.1), {0: 0.1, 7: 0.1, 10**6: 0.1}),
    (linear(1.0, 0.2, 5), {0: 1.0, 1: 0.84, 3: 0.52, 4: 0.36, 5: 0.2, 100: 0.2}),
    (linear(0.0, 1.0, 4), {0: 0.0, 1: 0.25, 2: 0.5, 4: 1.0, 9: 1.0}),
    (cosine(2.0, 5, 0.5), {0: 2.0, 1: 0.5 + 0.75 * (1 + (1 + SQRT5) / 4), 2: 0.5 + 0.75 * (1 + (SQRT5 - 1) / 4),
                           3: 0.5 + 0.75 * (1 - (SQRT5 - 1) / 4), 4: 0.5 + 0.75 * (1 - (1 + SQRT5) / 4),
                           5: 0.5, 100: 0.5}),
    (cosine(1.0, 4), {2: 0.5, 1: (2 + math.sqrt(2.0)) / 4, 3: (2 - math.sqrt(2.0)) / 4}),
    (exponential(2.0, 0.9), {0: 2.0, 1: 1.8, 2: 1.62, 3: 1.458, 10: 2.0 * 0.3486784401}),
    (step(2.0, 3, 0.5), {0: 2.0, 2: 2.0, 3: 1.0, 5: 1.0, 6: 0.5, 8: 0.5, 9: 0.25, 100: 2.0 / 2**33}),
    (piecewise([3.0, 2.0, 1.0], [2, 5]), {0: 3.0, 1: 3.0, 2: 2.0, 4: 2.0, 5: 1.0, 100: 1.0}),
    (warmup(4, 2.0), {0: 0.0, 1: 0.5, 3: 1.5, 4: 2.0, 50: 2.0}),
    (warmup(2, cosine(1.0, 4)), {0: 0.0, 1: 0.5, 2: 1.0, 4: 0.5, 6: 0.0, 9: 0.0}),
    (join([linear(0.0, 1.0, 4), 1.0, cosine(1.0, 8)], [4, 6]), {2: 0.5, 4: 1.0, 5: 1.0, 6: 1.0, 10: 0.5, 20: 0.0}),
]


@pytest.mark.parametrize("schedule,values", HAND_VALUES, ids=[repr(s)[:40] for s, _ in HAND_VALUES])
def test_closed_forms_at_hand_computed_steps(schedule, values):
    got = [schedule.value(t) for t in values]
    close(got, list(values.values()), "float64", table=SCHEDULER)


def _torch_lrs(lr, make_scheduler, steps):
    """The lr torch's scheduler object gives at steps 0..steps-1 (its recursive form, live)."""
    param = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    opt = torch.optim.SGD([param], lr=lr)
    scheduler, lrs = make_scheduler(opt), []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return lrs


TORCH_EQUIVALENTS = {
    "linear": (linear(1.0, 0.2, 5), 1.0, lambda o: torch.optim.lr_scheduler.LinearLR(o, 1.0, 0.2, 5), 12),
    "linear_up": (linear(0.5, 2.0, 4), 2.0, lambda o: torch.optim.lr_scheduler.LinearLR(o, 0.25, 1.0, 4), 9),
    "cosine": (cosine(2.0, 5, 0.5), 2.0, lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 5, 0.5), 6),
    "cosine_long": (cosine(3e-4, 40), 3e-4, lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 40), 41),
    "exponential": (exponential(2.0, 0.9), 2.0, lambda o: torch.optim.lr_scheduler.ExponentialLR(o, 0.9), 30),
    "step": (step(2.0, 3, 0.5), 2.0, lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5), 20),
    "piecewise": (piecewise([3.0, 0.3, 0.03], [2, 5]), 3.0,
                  lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [2, 5], 0.1), 10),
    "constant": (constant(0.1), 0.1, lambda o: torch.optim.lr_scheduler.ConstantLR(o, 1.0, 0), 5),
    "warmup_linear": (warmup(3, linear(0.6, 0.2, 4)), 0.6,
                      lambda o: torch.optim.lr_scheduler.SequentialLR(
                          o, [torch.optim.lr_scheduler.LambdaLR(o, lambda t: t / 3),
                              torch.optim.lr_scheduler.LinearLR(o, 1.0, 1 / 3, 4)], [3]), 10),
}


@needs_torch
@pytest.mark.parametrize("kind", list(TORCH_EQUIVALENTS))
def test_schedules_equal_torchs_scheduler_objects(kind):
    """Each schedule against the torch scheduler that computes it, run live (cosine only up
    to ``steps``: torch's cosine rises again after T_max, lucid's stays at ``end``)."""
    schedule, lr, make, steps = TORCH_EQUIVALENTS[kind]
    expected = _torch_lrs(lr, make, steps)
    close([schedule.value(t) for t in range(steps)], expected, "float64", table=SCHEDULER)


def test_cosine_stays_at_end_after_steps():
    schedule = cosine(1.0, 4, end=0.1)
    assert schedule.value(0) == 1.0
    close(schedule.value(4), 0.1, "float64", table=SCHEDULER)
    assert [schedule.value(t) for t in (5, 8, 1000)] == [schedule.value(4)] * 3


def test_seed_warmup_cosine_numbers():
    schedule = warmup(100, cosine(3e-4, 10000))
    assert schedule.value(0) == 0.0
    assert schedule.value(1) == 3e-4 / 100
    assert schedule.value(50) == 1.5e-4
    assert schedule.value(99) == 3e-4 * 99 / 100
    assert schedule.value(100) == 3e-4
    close(schedule.value(100 + 5000), 1.5e-4, "float64", table=SCHEDULER)
    close(schedule.value(100 + 2500), 3e-4 * (1 + math.sqrt(0.5)) / 2, "float64", table=SCHEDULER)
    assert schedule.value(10100) == 0.0 and schedule.value(50000) == 0.0
    for t in range(100, 10101, 997):
        assert schedule.value(t) == cosine(3e-4, 10000).value(t - 100)


def test_warmup_of_a_number_and_zero_steps():
    assert [warmup(4, 2.0).value(t) for t in range(6)] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.0]
    assert warmup(0, cosine(1.0, 4)).value(2) == cosine(1.0, 4).value(2)


def test_join_restarts_each_piece():
    schedule = join([exponential(1.0, 0.5), exponential(8.0, 0.5)], [3])
    assert [schedule.value(t) for t in range(6)] == [1.0, 0.5, 0.25, 8.0, 4.0, 2.0]


@needs_torch
def test_cosine_is_torch_cosine_annealing_up_to_steps():
    param = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    opt = torch.optim.SGD([param], lr=3e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=50, eta_min=1e-5)
    schedule, torch_lrs = cosine(3e-4, 50, end=1e-5), []
    for _ in range(51):
        torch_lrs.append(sched._get_closed_form_lr()[0])
        opt.step()
        sched.step()
    close([schedule.value(t) for t in range(51)], torch_lrs, "float64", table=SCHEDULER)


# --- optimizers driven by a schedule ---------------------------------------------------------------
def _train(opt, params, steps):
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        for p in params:
            p.grad = lucid.ones_like(p)
        opt.step()
    return lrs


def test_group_lr_is_the_next_updates_value_and_count_is_kept():
    schedule = warmup(2, cosine(1.0, 4))
    w = nn.Parameter(lucid.zeros(2, dtype=lucid.float64))
    opt = optim.SGD([w], lr=schedule)
    group = opt.param_groups[0]
    assert group["lr"] == 0.0 and group["lr_schedule"] is schedule and group["lr_schedule_step"] == 0
    lrs = _train(opt, [w], 7)
    assert lrs == [schedule.value(t) for t in range(7)]
    assert group["lr_schedule_step"] == 7 and group["lr"] == schedule.value(7)
    close(w.tolist(), [-sum(lrs)] * 2, "float64", table=SCHEDULER)


@needs_torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_trajectory_equals_torch_with_lambdalr(name):
    schedule = warmup(3, cosine(0.1, 10, end=0.001))
    mine = nn.Parameter(lucid.tensor([1.0, -2.0], dtype=lucid.float64))
    theirs = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = getattr(optim, name)([mine], lr=schedule)
    topt = getattr(torch.optim, name)([theirs], lr=1.0)
    tsched = torch.optim.lr_scheduler.LambdaLR(topt, lambda t: schedule.value(t))
    for _ in range(15):
        (mine * mine).sum().backward()
        (theirs * theirs).sum().backward()
        opt.step()
        topt.step()
        tsched.step()
        opt.zero_grad()
        topt.zero_grad()
        close(mine.detach().numpy(), theirs.detach().numpy(), "float64")  # torch fuses into FMAs
        assert opt.param_groups[0]["lr"] == topt.param_groups[0]["lr"]


def test_every_optimizer_accepts_a_schedule():
    for name in optim.__all__:
        cls = getattr(optim, name)
        if not (isinstance(cls, type) and issubclass(cls, optim.Optimizer)) or cls is optim.Optimizer:
            continue
        opt = cls([nn.Parameter(lucid.zeros(3, 3))], lr=cosine(0.01, 10))
        assert opt.param_groups[0]["lr"] == 0.01, name
        assert opt.param_groups[0]["lr_schedule"] == cosine(0.01, 10), name


def test_schedules_per_group_and_groups_added_later():
    a, b, c = (nn.Parameter(lucid.zeros(1)) for _ in range(3))
    opt = optim.SGD([{"params": [a], "lr": exponential(1.0, 0.5)}, {"params": [b]}], lr=0.3)
    _train(opt, [a, b], 2)
    opt.add_param_group({"params": [c], "lr": exponential(1.0, 0.5)})
    _train(opt, [a, b, c], 1)
    assert [g["lr"] for g in opt.param_groups] == [0.125, 0.3, 0.5]
    assert "lr_schedule" not in opt.param_groups[1]


def test_default_schedule_reaches_every_group():
    opt = optim.SGD([{"params": [nn.Parameter(lucid.zeros(1))]}, {"params": [nn.Parameter(lucid.zeros(1))]}],
                    lr=linear(1.0, 0.0, 4))
    opt.step()
    assert [g["lr_schedule_step"] for g in opt.param_groups] == [1, 1]
    assert [g["lr"] for g in opt.param_groups] == [0.75, 0.75]


def test_on_every_device(device):
    w = nn.Parameter(lucid.zeros(3, device=device))
    opt = optim.Adam([w], lr=warmup(1, 0.1))
    _train(opt, [w], 3)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["lr_schedule_step"] == 3


# --- state_dict ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("schedule", EVERY_KIND, ids=repr)
def test_to_dict_is_plain_data_and_round_trips(schedule):
    data = schedule.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert from_dict(data) == schedule and repr(from_dict(data)) == repr(schedule)
    assert pickle.loads(pickle.dumps(schedule)) == schedule


def test_state_dict_saves_plain_data():
    opt = optim.AdamW([nn.Parameter(lucid.zeros(2))], lr=cosine(3e-4, 1000))
    group = opt.state_dict()["param_groups"][0]
    assert group["lr_schedule"] == {"schedule": "cosine", "peak": 3e-4, "steps": 1000, "end": 0.0}
    assert group["lr_schedule_step"] == 0 and group["lr"] == 3e-4
    json.dumps({k: v for k, v in group.items() if k not in ("params",)})


@pytest.mark.parametrize("schedule", EVERY_KIND, ids=repr)
def test_resume_continues_exactly(schedule):
    def fresh(lr):
        w = nn.Parameter(lucid.tensor([1.0, -1.0], dtype=lucid.float64))
        return w, optim.Adam([w], lr=lr)

    w, opt = fresh(schedule)
    straight = _train(opt, [w], 12)
    w1, opt1 = fresh(schedule)
    first = _train(opt1, [w1], 5)
    saved = pickle.loads(pickle.dumps(opt1.state_dict()))
    w2, opt2 = fresh(0.123)  # built with a plain lr: the schedule comes from the checkpoint
    w2.data = w1.detach().clone()
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr_schedule"] == schedule
    rest = _train(opt2, [w2], 7)
    assert first + rest == straight
    np.testing.assert_array_equal(w2.detach().numpy(), w.detach().numpy())


def test_loading_a_plain_lr_drops_the_schedule():
    plain = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.5)
    scheduled = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=cosine(0.1, 10))
    scheduled.load_state_dict(plain.state_dict())
    assert "lr_schedule" not in scheduled.param_groups[0] and scheduled.param_groups[0]["lr"] == 0.5


class Halving:
    """A schedule of one's own: anything with ``value(step)``."""

    def __init__(self, start):
        self.start = start

    def value(self, step):
        return self.start * 0.5**step


def test_any_object_with_value_works_and_is_saved_as_itself():
    w = nn.Parameter(lucid.zeros(1))
    opt = optim.SGD([w], lr=Halving(1.0))
    assert _train(opt, [w], 3) == [1.0, 0.5, 0.25]
    saved = opt.state_dict()["param_groups"][0]["lr_schedule"]
    assert isinstance(saved, Halving) and saved is not opt.param_groups[0]["lr_schedule"]
    assert warmup(2, Halving(1.0)).value(3) == 0.5


def test_a_schedule_giving_a_non_number_raises_at_use():
    class Bad:
        def value(self, step):
            return "fast"

    with pytest.raises(TypeError, match="gave str 'fast' at step 0, not a number"):
        optim.SGD([nn.Parameter(lucid.zeros(1))], lr=Bad())


def test_optimizer_repr_and_pickle_keep_the_schedule():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=warmup(5, cosine(0.1, 50)))
    assert "lr_schedule: warmup(steps=5, then=cosine(peak=0.1, steps=50, end=0.0))" in repr(opt)
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.param_groups[0]["lr_schedule"] == opt.param_groups[0]["lr_schedule"]
    copy.deepcopy(opt)


def test_a_scheduled_group_refuses_a_scheduler_object():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=cosine(0.1, 10))
    with pytest.raises(ValueError, match="takes its lr from the schedule"):
        optim.lr_scheduler.StepLR(opt, 1)


# --- bad arguments ---------------------------------------------------------------------------------
@pytest.mark.parametrize("lr", ["cosine", None, [0.1], {"schedule": "cosine"}, True])
def test_bad_lr_kinds_raise_type_error(lr):
    with pytest.raises(TypeError, match="lr must be a number, a one-element Tensor or a schedule"):
        optim.SGD([nn.Parameter(lucid.zeros(1))], lr=lr)


def test_tensor_lr_of_two_elements_raises_torchs_value_error():
    for name in ("SGD", "Adam"):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            getattr(optim, name)([nn.Parameter(lucid.zeros(1))], lr=lucid.tensor([0.1, 0.2]))
    optim.SGD([nn.Parameter(lucid.zeros(1))], lr=lucid.tensor(0.1))  # one element is torch's Tensor lr


def test_bad_lr_in_a_group_raises_type_error():
    with pytest.raises(TypeError, match="got str 'fast'"):
        optim.SGD([{"params": [nn.Parameter(lucid.zeros(1))], "lr": "fast"}], lr=0.1)


def test_negative_value_still_checked_by_the_optimizer():
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        optim.SGD([nn.Parameter(lucid.zeros(1))], lr=constant(-0.1))


@pytest.mark.parametrize("make, error, message", [
    (lambda: cosine(1.0, 0), ValueError, "steps must be at least 1, got 0"),
    (lambda: cosine(1.0, -5), ValueError, "steps must be at least 1, got -5"),
    (lambda: cosine(1.0, 2.5), TypeError, "steps must be an int, got float 2.5"),
    (lambda: cosine(lucid.tensor(1.0), 10), TypeError, "peak must be a number, got a Tensor"),
    (lambda: cosine("1e-3", 10), TypeError, "peak must be a number, got str"),
    (lambda: linear(0.0, 1.0, 0), ValueError, "steps must be at least 1"),
    (lambda: step(1.0, 0), ValueError, "step_size must be at least 1"),
    (lambda: warmup(-1, 0.1), ValueError, "steps must be at least 0, got -1"),
    (lambda: warmup(10, lucid.tensor(0.1)), TypeError, "then must be a number or a schedule, got a Tensor"),
    (lambda: warmup(10, lucid.zeros(())), TypeError, "then must be a number or a schedule, got a Tensor"),
    (lambda: warmup(10, "cosine"), TypeError, "then must be a number or a schedule, got str"),
    (lambda: join([0.1, 0.2], []), ValueError, "2 pieces need 1 boundaries, got 0"),
    (lambda: join([0.1, 0.2, 0.3], [5, 5]), ValueError, "boundaries must increase"),
    (lambda: join([], []), ValueError, "at least one piece is needed"),
    (lambda: piecewise([0.1, "x"], [3]), TypeError, r"values\[1\] must be a number"),
    (lambda: from_dict({"schedule": "sawtooth"}), ValueError, "unknown schedule 'sawtooth'"),
])
def test_bad_schedule_arguments(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_negative_step_is_refused_when_called():
    with pytest.raises(ValueError, match="step must be at least 0"):
        cosine(1.0, 10)(-1)


def test_is_schedule_and_as_schedule():
    assert sch.is_schedule(Halving(1.0)) and not sch.is_schedule(lucid.tensor(1.0))
    assert sch.as_schedule(2) == constant(2.0)
    with pytest.raises(TypeError):
        sch.as_schedule(lucid.tensor(1.0))


def test_every_step_counts_even_without_gradients():
    w = nn.Parameter(lucid.zeros(1))
    opt = optim.SGD([w], lr=exponential(1.0, 0.5))
    opt.step()  # no gradient: w does not move, but the update count goes on
    assert w.tolist() == [0.0] and opt.param_groups[0]["lr_schedule_step"] == 1
    assert _train(opt, [w], 1) == [0.5]


def test_a_hand_written_lr_does_not_survive_the_next_update():
    w = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    opt = optim.SGD([w], lr=constant(0.25))
    opt.param_groups[0]["lr"] = 100.0
    _train(opt, [w], 1)
    assert w.tolist() == [-0.25]


# --- the first update uses step 0 (the seed's "Schedules": update k reads value(k)) -----------
def _cosine_closed_form(peak, steps, end=0.0):
    return lambda t: end + (peak - end) * (1 + math.cos(math.pi * min(t, steps) / steps)) / 2


def _warmup_closed_form(warm, then):
    """The seed's formula, written out: from 0 in a straight line, then ``then`` from its step 0."""
    return lambda k: then(0) * k / warm if k < warm else then(k - warm)


@needs_torch
@pytest.mark.parametrize("schedule,closed_form,updates", [
    # the seed's warmup(100, cosine(3e-4, 10_000))
    (warmup(100, cosine(3e-4, 10_000)), _warmup_closed_form(100, _cosine_closed_form(3e-4, 10_000)), 140),
    # warmup(10, 0.02): a constant after the warm-up
    (warmup(10, 0.02), _warmup_closed_form(10, lambda t: 0.02), 130),
    # warmup(5, cosine(0.05, 20, end=0.001)): decays, then stays at end
    (warmup(5, cosine(0.05, 20, end=0.001)), _warmup_closed_form(5, _cosine_closed_form(0.05, 20, 0.001)), 130),
], ids=["seed", "warmup_number", "short_cosine"])
def test_adamw_with_warmup_cosine_equals_torch_with_the_closed_form_lr_set_by_hand(schedule, closed_form, updates):
    rng = np.random.default_rng(5)
    start = rng.normal(size=(3, 4))
    mine = nn.Parameter(lucid.tensor(start))
    theirs = torch.nn.Parameter(torch.tensor(start))
    opt = optim.AdamW([mine], lr=schedule, weight_decay=0.1)
    topt = torch.optim.AdamW([theirs], lr=0.0, weight_decay=0.1)
    for k in range(updates):
        topt.param_groups[0]["lr"] = closed_form(k)
        g = rng.normal(size=(3, 4))
        mine.grad = lucid.tensor(g)
        theirs.grad = torch.tensor(g)
        close(opt.param_groups[0]["lr"], closed_form(k), "float64")  # what the next update uses
        opt.step()
        topt.step()
        close(mine.detach().numpy(), theirs.detach().numpy(), "float64")
        if k == 0:  # update 0 read lr 0: not even the decoupled weight decay (lr * wd) moved it
            np.testing.assert_array_equal(mine.detach().numpy(), start)
    assert opt.param_groups[0]["lr_schedule_step"] == updates


@pytest.mark.parametrize("stop", [0, 3, 60, 130])
def test_the_saved_count_and_the_lr_read_after_a_resume_are_the_uninterrupted_runs(stop):
    schedule = warmup(100, cosine(3e-4, 10_000))

    def fresh(lr):
        w = nn.Parameter(lucid.tensor([1.0, -1.0, 0.5], dtype=lucid.float64))
        return w, optim.AdamW([w], lr=lr)

    w, opt = fresh(schedule)
    straight = _train(opt, [w], 140)
    w1, opt1 = fresh(schedule)
    first = _train(opt1, [w1], stop)
    saved = opt1.state_dict()
    assert saved["param_groups"][0]["lr_schedule_step"] == stop
    assert saved["param_groups"][0]["lr"] == schedule.value(stop)  # the lr update `stop` will read
    w2, opt2 = fresh(1e-3)
    w2.data = w1.detach().clone()
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == schedule.value(stop)
    rest = _train(opt2, [w2], 140 - stop)
    assert first + rest == straight == [schedule.value(k) for k in range(140)]
    np.testing.assert_array_equal(w2.detach().numpy(), w.detach().numpy())
