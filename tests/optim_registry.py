"""The optimizers under test: one entry per public optimizer of lucid.optim, from which the
generic tests take what they run.

torch's suite drives its generic optimizer tests from its ``OptimizerInfo`` database, optax
from its ``_OPTIMIZERS_UNDER_TEST`` table; this is lucid's. An entry names the optimizer
(its class is ``lucid.optim.<name>``) and holds:

* ``cases``: its golden cases (:class:`optim_cases.OptimCase`), each replayed through the
  reference into ``tests/golden/optim/`` by ``tools/make_golden.py`` and through lucid by
  tests/test_optim_parity.py, on both devices; ``flags``, the constructor arguments the cases
  must set at least once (tests/test_golden_files.py);
* ``reference``: what makes its reference class (torch.optim's, or another library's),
  ``reference_package`` the distribution it comes from (a live replay needs it installed),
  ``reference_names`` the reference's names of lucid's hyperparameters where they differ
  (lucid keeps torch's), ``reference_context`` a context to step it in (Muon's iteration in
  the parameter dtype); ``reference_state`` what makes the function giving the reference's
  state of a parameter by lucid's names (SOAP's lists of factors); ``trajectory_table`` the
  float32 runs' (FACTOR, FLOOR) where not tolerances.TRAJECTORY (SOAP's eigenbases);
* ``state_kwargs``: options under which it keeps and uses all its state: state following
  ``.to()``/``.double()``/``.half()``, the ``state_dict`` round trip (tests/test_optim_state.py,
  tests/test_properties.py);
* ``bad_input_kwargs``: the options its bad-input cases start from (tests/test_bad_input.py);
* ``sparse``: "accepts" row-sparse gradients, "refuses" them with torch's message
  (tests/test_sparse.py, tests/test_properties.py), or None where no sparse step applies
  (LBFGS steps on a closure);
* ``resume``: ``(run name, kwargs[, model])`` runs that checkpoint and resume in another
  process (tests/resume_runs.py; the lr is scaled, the model is a small quadratic unless
  named: "matrices" (its 2-D weight only), "sparse_table" or "dense_table" (an embedding));
* ``closure`` (steps on a closure: LBFGS, whose golden cases are tests/lbfgs_cases.py),
  ``matrices_only`` (2-D parameters only: Muon).

Adding an optimizer is its file in lucid/optim, its export, one entry here, and its golden
files (``python tools/make_golden.py --new``). tests/test_optim_registry.py checks that the
entries name exactly the optimizers of ``lucid.optim.__all__``.

This module imports neither torch nor lucid: ``tools/make_golden.py`` reads it.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from optim_cases import (ADAFACTOR_3D_SHAPES, MUON_SHAPES, NONE_GRAD, NONE_GRAD_LATE_EMPTY, NS_CONVERGENT,
                         SOAP_1D_SHAPES, SOAP_CHANNELS_LAST_SHAPES, SOAP_MERGE_SHAPES, SOAP_NONE_GRAD, TENSOR_BETAS,
                         TENSOR_LR, OptimCase, make_case, schedule_free_case, with_shapes)
from tolerances import TRAJECTORY_EIGENBASIS, TRAJECTORY_SCHEDULE_FREE


def _load(module: str, name: str):
    """``module.name``, imported when first asked for."""
    return getattr(importlib.import_module(module), name)


def _attribute(module: str, name: str) -> Callable:
    """A function returning ``module.name`` (imported on call: torch stays unimported until then)."""
    return functools.partial(_load, module, name)


def _torch_optim(name: str) -> Callable[[], type]:
    return _attribute("torch.optim", name)


def _schedule_free(name: str) -> Callable[[], type]:
    """``schedulefree.<name>``, put in training mode once made (torch_reference.schedule_free_class)."""
    return lambda: _load("torch_reference", "schedule_free_class")(name)


def _made_by(module: str, name: str) -> Callable[[], type]:
    """A function returning what ``module.name()`` makes (a reference class built on first use)."""
    return lambda: _load(module, name)()


@dataclass(frozen=True)
class OptimizerInfo:
    """One optimizer under test (see the module docstring)."""

    name: str
    reference: Callable[[], type]
    state_kwargs: dict
    cases: tuple[OptimCase, ...] = ()
    flags: frozenset = frozenset()
    reference_package: str = "torch"
    reference_names: dict = field(default_factory=dict)
    reference_context: Callable | None = None
    reference_state: Callable | None = None
    trajectory_table: dict | None = None
    bad_input_kwargs: dict = field(default_factory=dict)
    sparse: str | None = "refuses"
    resume: tuple = ()
    closure: bool = False
    matrices_only: bool = False

    def __post_init__(self):
        object.__setattr__(self, "flags", frozenset(self.flags))

    @property
    def cls(self) -> type:
        """The optimizer class, ``lucid.optim.<name>``."""
        return _load("lucid.optim", self.name)


REGISTRY: tuple[OptimizerInfo, ...] = (
    OptimizerInfo(
        "SGD",
        cases=(
            # SGD: torch's OptimizerInfo configs (default, lr, tensor lr, wd, momentum,
            # wd+maximize, dampening, momentum+wd, nesterov+wd), then extra combinations.
            make_case("sgd_default", "SGD", {}, {"lr": 0.05}),
            make_case("sgd_lr", "SGD", {"lr": 0.01}, {"lr": 0.002}),
            make_case("sgd_tensor_lr", "SGD", {"lr": TENSOR_LR}, {"lr": 0.01}),
            make_case("sgd_wd", "SGD", {"weight_decay": 0.5}, {"weight_decay": 0.0}),
            make_case("sgd_momentum", "SGD", {"lr": 0.01, "momentum": 0.9}, {"lr": 0.05}),
            make_case("sgd_wd_maximize", "SGD", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, {"maximize": False}),
            make_case("sgd_dampening", "SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.5}, {"dampening": 0.0}),
            make_case("sgd_momentum_wd", "SGD", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}, {"weight_decay": 0.01}),
            make_case(
                "sgd_nesterov_wd",
                "SGD",
                {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
                {"momentum": 0.5},
            ),
            make_case(
                "sgd_momentum_wd_maximize",
                "SGD",
                {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1, "maximize": True},
                {"lr": 0.03},
            ),
            # Group 0 keeps no state at all (momentum 0) next to a momentum group.
            make_case("sgd_mixed_momentum", "SGD", {"lr": 0.01, "momentum": 0.9}, {}, {"momentum": 0.0}),
        ),
        flags={"lr", "momentum", "dampening", "nesterov", "weight_decay", "maximize"},
        reference=_torch_optim("SGD"),
        state_kwargs={"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
        bad_input_kwargs={"momentum": 0.9},
        sparse="accepts",
        resume=(
            ("sgd", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
            ("sgd_dampening", {"lr": 0.01, "momentum": 0.5, "dampening": 0.3}),
        ),
    ),
    OptimizerInfo(
        "Adam",
        cases=(
            # Adam: OptimizerInfo's CPU configs (default, lr, wd, wd+maximize,
            # wd+amsgrad), then extra combinations.
            make_case("adam_default", "Adam", {}, {"lr": 0.01}),
            make_case("adam_lr", "Adam", {"lr": 0.01}, {"betas": (0.5, 0.9)}),
            make_case("adam_wd", "Adam", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("adam_wd_maximize", "Adam", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.005}),
            # Group 1 without amsgrad: max_exp_avg_sq exists for params 0-1 only.
            make_case("adam_wd_amsgrad", "Adam", {"weight_decay": 0.1, "amsgrad": True}, {"amsgrad": False}),
            make_case("adam_amsgrad_maximize", "Adam", {"lr": 0.01, "amsgrad": True, "maximize": True}, {"eps": 1e-3}),
            # Group 1 falls back to L2 weight decay: same wd, different placement.
            make_case(
                "adam_decoupled_wd",
                "Adam",
                {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
                {"decoupled_weight_decay": False},
            ),
            make_case("adam_tensor_betas", "Adam", {"betas": TENSOR_BETAS, "amsgrad": True}, {"lr": 0.01}),
            make_case("adam_tensor_lr", "Adam", {"lr": TENSOR_LR, "weight_decay": 0.1}, {"lr": 0.01}),
            make_case("adam_betas_eps", "Adam", {"betas": (0.8, 0.99), "eps": 1e-6}, {"betas": (0.5, 0.9), "eps": 1e-4}),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay"},
        reference=_torch_optim("Adam"),
        state_kwargs={"lr": 0.05, "weight_decay": 0.01},
        bad_input_kwargs={"amsgrad": True},
        resume=(
            ("adam_amsgrad", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.01}),
        ),
    ),
    OptimizerInfo(
        "AdamW",
        cases=(
            # AdamW: the same OptimizerInfo configs as Adam, then extra combinations.
            make_case("adamw_default", "AdamW", {}, {"weight_decay": 0.1}),
            make_case("adamw_lr", "AdamW", {"lr": 0.01}, {"lr": 0.001}),
            make_case("adamw_wd", "AdamW", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("adamw_wd_maximize", "AdamW", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.005}),
            make_case("adamw_wd_amsgrad", "AdamW", {"weight_decay": 0.1, "amsgrad": True}, {"lr": 0.01}),
            make_case("adamw_amsgrad", "AdamW", {"lr": 0.01, "amsgrad": True}, {"amsgrad": False}),
            make_case("adamw_maximize", "AdamW", {"lr": 0.01, "maximize": True}, {"maximize": False}),
            make_case("adamw_tensor_betas", "AdamW", {"lr": TENSOR_LR, "betas": TENSOR_BETAS}, {"lr": 0.01}),
            make_case("adamw_tensor_lr", "AdamW", {"lr": TENSOR_LR, "weight_decay": 0.1}, {"lr": 0.01}),
            make_case("adamw_wd_lr", "AdamW", {"weight_decay": 0.1, "lr": 0.01}, {"lr": 0.05}),
        ),
        flags={"lr", "weight_decay", "amsgrad", "maximize"},
        reference=_torch_optim("AdamW"),
        state_kwargs={"lr": 0.05, "amsgrad": True},
        resume=(
            ("adamw", {"lr": 0.05, "maximize": False}),
        ),
    ),
    OptimizerInfo(
        "SparseAdam",
        cases=(
            # SparseAdam: OptimizerInfo's configs (default, lr, tensor lr, maximize),
            # then betas/eps. eps=1e-3 in group 1 makes its eps placement visible.
            make_case("sparse_adam_default", "SparseAdam", {}, {"lr": 0.01}),
            make_case("sparse_adam_lr", "SparseAdam", {"lr": 0.01}, {"lr": 0.05}),
            make_case("sparse_adam_tensor_lr", "SparseAdam", {"lr": TENSOR_LR}, {"lr": 0.01}),
            make_case("sparse_adam_maximize", "SparseAdam", {"lr": 0.01, "maximize": True}, {"maximize": False}),
            make_case(
                "sparse_adam_betas_eps",
                "SparseAdam",
                {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6},
                {"betas": (0.5, 0.9), "eps": 1e-3},
                none_grad=NONE_GRAD_LATE_EMPTY,
            ),
        ),
        flags={"lr", "betas", "eps", "maximize"},
        reference=_torch_optim("SparseAdam"),
        state_kwargs={"lr": 0.05},
        sparse="accepts",
        resume=(
            ("sparse_adam_sparse", {"lr": 0.05}, "sparse_table"),
            ("sparse_adam_dense", {"lr": 0.05}, "dense_table"),
        ),
    ),
    OptimizerInfo(
        "Adadelta",
        cases=(
            # Adadelta: OptimizerInfo's CPU configs (default, lr, wd, maximize, maximize+wd, rho+wd).
            make_case("adadelta_default", "Adadelta", {}, {"lr": 0.5}),
            make_case("adadelta_lr", "Adadelta", {"lr": 0.01}, {"lr": 0.1}),
            make_case("adadelta_wd", "Adadelta", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("adadelta_maximize", "Adadelta", {"maximize": True}, {"maximize": False}),
            make_case("adadelta_wd_maximize", "Adadelta", {"weight_decay": 0.1, "maximize": True}, {"eps": 1e-3}),
            make_case("adadelta_rho_wd", "Adadelta", {"rho": 0.95, "weight_decay": 0.9}, {"rho": 0.5}),
            make_case("adadelta_tensor_lr", "Adadelta", {"lr": TENSOR_LR}, {"lr": 0.1}),
        ),
        flags={"lr", "rho", "eps", "weight_decay", "maximize"},
        reference=_torch_optim("Adadelta"),
        state_kwargs={"lr": 0.5, "weight_decay": 0.01},
        resume=(
            ("adadelta", {"lr": 1.0, "weight_decay": 0.01}),
        ),
    ),
    OptimizerInfo(
        "Adagrad",
        cases=(
            # Adagrad: OptimizerInfo's CPU configs (default, wd, wd+maximize, lr, initial
            # accumulator+wd, lr_decay+wd, Tensor lr). State exists from construction, so param 2
            # (no grad for steps 1-3) has step 0 and its initial sum recorded from step 1.
            make_case("adagrad_default", "Adagrad", {}, {"lr": 0.05}),
            make_case("adagrad_wd", "Adagrad", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("adagrad_wd_maximize", "Adagrad", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.05}),
            make_case("adagrad_lr", "Adagrad", {"lr": 0.1}, {"eps": 1e-3}),
            make_case("adagrad_initial_accumulator_wd", "Adagrad", {"initial_accumulator_value": 0.1, "weight_decay": 0.1},
                  {"weight_decay": 0.0}),
            make_case("adagrad_lr_decay_wd", "Adagrad", {"lr": 0.1, "lr_decay": 0.5, "weight_decay": 0.1}, {"lr_decay": 0.01}),
            # A Tensor lr with lr_decay: the decayed rate is computed in float32, as torch does.
            make_case("adagrad_tensor_lr", "Adagrad", {"lr": TENSOR_LR}, {"lr": 0.01}, {"lr_decay": 0.1}),
            # torch starts every accumulator at the constructor's value; group 1's own is unused.
            make_case("adagrad_group_initial_accumulator", "Adagrad", {"initial_accumulator_value": 0.5},
                  {"initial_accumulator_value": 2.0}),
        ),
        flags={"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize"},
        reference=_torch_optim("Adagrad"),
        state_kwargs={"lr": 0.1, "lr_decay": 0.01},
        sparse="accepts",
        resume=(
            ("adagrad", {"lr": 0.1, "lr_decay": 0.01}),
        ),
    ),
    OptimizerInfo(
        "Adamax",
        cases=(
            # Adamax: OptimizerInfo's CPU configs (default, lr, wd, maximize, maximize+wd), betas/eps.
            make_case("adamax_default", "Adamax", {}, {"lr": 0.01}),
            make_case("adamax_lr", "Adamax", {"lr": 0.1}, {"lr": 0.01}),
            make_case("adamax_wd", "Adamax", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("adamax_maximize", "Adamax", {"maximize": True}, {"maximize": False}),
            make_case("adamax_wd_maximize", "Adamax", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.01}),
            # eps=0.05 in group 1 makes its placement (inside the max) visible.
            make_case("adamax_betas_eps", "Adamax", {"betas": (0.8, 0.99), "eps": 1e-6}, {"betas": (0.5, 0.9), "eps": 0.05}),
            make_case("adamax_tensor_lr", "Adamax", {"lr": TENSOR_LR}, {"lr": 0.01}),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "maximize"},
        reference=_torch_optim("Adamax"),
        state_kwargs={"lr": 0.05},
        resume=(
            ("adamax", {"lr": 0.02}),
        ),
    ),
    OptimizerInfo(
        "ASGD",
        cases=(
            # ASGD: OptimizerInfo's CPU configs (default, lambd, lr, t0, maximize, wd, maximize+wd);
            # then a small t0, so that the average ax (mu < 1) and the eta/mu schedule are exercised.
            make_case("asgd_default", "ASGD", {}, {"lr": 0.05}),
            make_case("asgd_lambd", "ASGD", {"lambd": 0.1}, {"lambd": 1e-4}),
            make_case("asgd_lr", "ASGD", {"lr": 0.02}, {"lr": 0.1}),
            make_case("asgd_t0", "ASGD", {"t0": 100}, {"t0": 1e6}),
            make_case("asgd_maximize", "ASGD", {"maximize": True}, {"maximize": False}),
            make_case("asgd_wd", "ASGD", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("asgd_wd_maximize", "ASGD", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.05}),
            make_case("asgd_averaging", "ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 5}, {"t0": 20, "alpha": 0.9}),
            # A Tensor lr: eta's schedule is then computed in float32 Tensor arithmetic, as torch does.
            make_case("asgd_tensor_lr", "ASGD", {"lr": TENSOR_LR, "lambd": 0.01, "t0": 5}, {"lr": 0.05}),
        ),
        flags={"lr", "lambd", "alpha", "t0", "weight_decay", "maximize"},
        reference=_torch_optim("ASGD"),
        state_kwargs={"lr": 0.05, "t0": 2},
        resume=(
            ("asgd", {"lr": 0.01, "t0": 2}),
        ),
    ),
    OptimizerInfo(
        "NAdam",
        cases=(
            # NAdam: OptimizerInfo's CPU configs (default, lr, momentum_decay, wd, wd+momentum_decay,
            # decoupled wd, wd+maximize).
            make_case("nadam_default", "NAdam", {}, {"lr": 0.01}),
            make_case("nadam_lr", "NAdam", {"lr": 1e-3}, {"lr": 0.02}),
            make_case("nadam_momentum_decay", "NAdam", {"momentum_decay": 6e-3}, {"momentum_decay": 0.1}),
            make_case("nadam_wd", "NAdam", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("nadam_wd_momentum_decay", "NAdam", {"weight_decay": 0.1, "momentum_decay": 6e-3}, {"lr": 0.01}),
            # Group 1 falls back to L2 weight decay: same wd, different placement.
            make_case("nadam_decoupled_wd", "NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
                  {"decoupled_weight_decay": False}),
            make_case("nadam_wd_maximize", "NAdam", {"weight_decay": 0.1, "maximize": True}, {"betas": (0.5, 0.9), "eps": 1e-3}),
            make_case("nadam_tensor_lr_decoupled_wd", "NAdam", {"lr": TENSOR_LR, "weight_decay": 0.1,
                  "decoupled_weight_decay": True}, {"lr": 0.01}),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize"},
        reference=_torch_optim("NAdam"),
        state_kwargs={"lr": 0.05},
        resume=(
            ("nadam", {"lr": 0.02, "decoupled_weight_decay": True, "weight_decay": 0.1}),
        ),
    ),
    OptimizerInfo(
        "RAdam",
        cases=(
            # RAdam: OptimizerInfo's CPU configs (default, lr, eps, wd, decoupled wd, wd+maximize).
            # With betas (0.5, 0.9) rho_t passes 5 from step 7 on; with the default betas, step 6.
            make_case("radam_default", "RAdam", {}, {"lr": 0.01}),
            make_case("radam_lr", "RAdam", {"lr": 2e-3}, {"betas": (0.5, 0.9)}),
            make_case("radam_eps", "RAdam", {"eps": 1e-6}, {"eps": 1e-2}),
            make_case("radam_wd", "RAdam", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("radam_decoupled_wd", "RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
                  {"decoupled_weight_decay": False}),
            make_case("radam_wd_maximize", "RAdam", {"weight_decay": 0.1, "maximize": True}, {"lr": 0.01}),
            make_case("radam_tensor_lr_decoupled_wd", "RAdam", {"lr": TENSOR_LR, "weight_decay": 0.1,
                  "decoupled_weight_decay": True}, {"lr": 0.01}),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "maximize"},
        reference=_torch_optim("RAdam"),
        state_kwargs={"lr": 0.05},
        resume=(
            ("radam", {"lr": 0.02}),
        ),
    ),
    OptimizerInfo(
        "RMSprop",
        cases=(
            # RMSprop: OptimizerInfo's CPU configs (default, lr, wd, maximize, centered+wd,
            # maximize+wd, momentum+centered+wd, all combined).
            make_case("rmsprop_default", "RMSprop", {}, {"lr": 0.001}),
            make_case("rmsprop_lr", "RMSprop", {"lr": 1e-3}, {"alpha": 0.9}),
            make_case("rmsprop_wd", "RMSprop", {"weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("rmsprop_maximize", "RMSprop", {"maximize": True}, {"maximize": False}),
            # Group 1 is not centered: grad_avg exists for params 0-1 only.
            make_case("rmsprop_centered_wd", "RMSprop", {"weight_decay": 0.1, "centered": True}, {"centered": False}),
            make_case("rmsprop_wd_maximize", "RMSprop", {"weight_decay": 0.1, "maximize": True}, {"eps": 1e-3}),
            # Group 0 without momentum: momentum_buffer exists for param 2 only.
            make_case("rmsprop_momentum_centered_wd", "RMSprop", {"weight_decay": 0.1, "centered": True, "momentum": 0.1},
                  {"momentum": 0.9}, {"momentum": 0.0}),
            make_case("rmsprop_all", "RMSprop",
                  {"lr": 0.005, "weight_decay": 0.1, "centered": True, "momentum": 0.1, "maximize": True}, {"alpha": 0.9}),
            make_case("rmsprop_tensor_lr", "RMSprop", {"lr": TENSOR_LR, "momentum": 0.5}, {"lr": 0.01}),
        ),
        flags={"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"},
        reference=_torch_optim("RMSprop"),
        state_kwargs={"lr": 0.01, "momentum": 0.5, "centered": True},
        bad_input_kwargs={"momentum": 0.5},
        resume=(
            ("rmsprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
        ),
    ),
    OptimizerInfo(
        "Rprop",
        cases=(
            # Rprop: OptimizerInfo's CPU configs (default, lr, etas, step_sizes, maximize); tight
            # step_sizes in group 1 make both clamps bite.
            make_case("rprop_default", "Rprop", {}, {"lr": 0.05}),
            make_case("rprop_lr", "Rprop", {"lr": 2e-4}, {"lr": 0.01}),
            make_case("rprop_etas", "Rprop", {"etas": (0.5, 1.5)}, {"etas": (0.3, 1.1)}),
            make_case("rprop_step_sizes", "Rprop", {"step_sizes": (2e-6, 100)}, {"step_sizes": (5e-3, 2e-2)}),
            make_case("rprop_maximize", "Rprop", {"maximize": True}, {"maximize": False}),
            make_case("rprop_tensor_lr", "Rprop", {"lr": TENSOR_LR}, {"lr": 0.01}),
        ),
        flags={"lr", "etas", "step_sizes", "maximize"},
        reference=_torch_optim("Rprop"),
        state_kwargs={"lr": 0.05},
        resume=(
            ("rprop", {"lr": 0.01}),
        ),
    ),
    OptimizerInfo(
        "Adafactor",
        cases=(
            # Adafactor: OptimizerInfo's configs (default, lr, tensor lr, wd, maximize, beta2_decay,
            # eps), then d, and a 3-D param. Group 1 (a (2, 3) param) keeps its own settings.
            make_case("adafactor_default", "Adafactor", {}, {"lr": 0.05}),
            make_case("adafactor_tensor_lr", "Adafactor", {"lr": TENSOR_LR}, {"lr": 0.01}),
            make_case("adafactor_lr_wd", "Adafactor", {"lr": 0.05, "weight_decay": 0.1}, {"weight_decay": 0.0}),
            make_case("adafactor_maximize", "Adafactor", {"lr": 0.05, "maximize": True, "weight_decay": 0.1}, {"maximize": False}),
            make_case("adafactor_beta2_decay_d", "Adafactor", {"beta2_decay": -0.5, "d": 1.5}, {"beta2_decay": -0.8, "d": 1.0}),
            # eps1 large enough that the variance floor eps1**2 and the mean-row floor eps1 bite.
            make_case("adafactor_eps", "Adafactor", {"lr": 0.05, "eps": (0.05, 1e-2)}, {"eps": (None, 0.5)}),
            with_shapes(make_case("adafactor_3d", "Adafactor", {"lr": 0.05}, {"weight_decay": 0.1}), ADAFACTOR_3D_SHAPES),
        ),
        flags={"lr", "beta2_decay", "eps", "d", "weight_decay", "maximize"},
        reference=_torch_optim("Adafactor"),
        state_kwargs={"lr": 0.05},
        resume=(
            ("adafactor", {"lr": 0.01}),
        ),
    ),
    OptimizerInfo(
        "Muon",
        cases=(
            # Muon (2-D only): default, tensor lr, momentum and nesterov, weight decay, the lr
            # adjustments, and the Newton-Schulz settings.
            with_shapes(make_case("muon_default", "Muon", {}, {"lr": 0.01}), MUON_SHAPES),
            with_shapes(make_case("muon_tensor_lr", "Muon", {"lr": TENSOR_LR}, {"lr": 0.01}), MUON_SHAPES),
            with_shapes(
                make_case("muon_momentum_nesterov", "Muon", {"lr": 0.02, "momentum": 0.9}, {"nesterov": False}, {"nesterov": True}),
                MUON_SHAPES,
            ),
            with_shapes(make_case("muon_wd", "Muon", {"lr": 0.02, "weight_decay": 0.5}, {"weight_decay": 0.0}), MUON_SHAPES),
            with_shapes(
                make_case("muon_adjust_lr", "Muon", {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw"}, {"adjust_lr_fn": "original"}),
                MUON_SHAPES,
            ),
            with_shapes(
                make_case(
                    "muon_ns",
                    "Muon",
                    {"lr": 0.02, "ns_coefficients": NS_CONVERGENT, "ns_steps": 3, "eps": 1e-3},
                    {"ns_steps": 7, "ns_coefficients": (3.4445, -4.775, 2.0315), "eps": 1e-7},
                ),
                MUON_SHAPES,
            ),
        ),
        flags={"lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps", "adjust_lr_fn"},
        reference=_torch_optim("Muon"),
        reference_context=_attribute("torch_reference", "muon_in_param_dtype"),
        matrices_only=True,
        state_kwargs={"lr": 0.02},
        resume=(
            ("muon", {"lr": 0.02}, "matrices"),
        ),
    ),
    OptimizerInfo(
        "LBFGS",
        reference=_torch_optim("LBFGS"),
        closure=True,
        state_kwargs={"lr": 0.5, "max_iter": 3, "history_size": 2},
        bad_input_kwargs={"max_iter": 2},
        sparse=None,
        resume=(
            ("lbfgs_strong_wolfe", {"lr": 1.0, "max_iter": 4, "history_size": 3, "line_search_fn": "strong_wolfe"}),
            ("lbfgs", {"lr": 0.1, "max_iter": 3, "history_size": 2}),
        ),
    ),
    OptimizerInfo(
        "Lion",
        cases=(
            # Lion (torch has none; the golden values come from torch_reference.lion_class):
            # default, tensor lr, betas, weight decay, maximize.
            make_case("lion_default", "Lion", {}, {"lr": 1e-3}),
            make_case("lion_tensor_lr", "Lion", {"lr": TENSOR_LR}, {"lr": 1e-4}),
            make_case("lion_lr_betas", "Lion", {"lr": 1e-3, "betas": (0.95, 0.98)}, {"betas": (0.5, 0.9)}),
            make_case("lion_wd", "Lion", {"lr": 1e-3, "weight_decay": 0.5}, {"weight_decay": 0.0}),
            make_case("lion_maximize", "Lion", {"lr": 1e-3, "maximize": True, "weight_decay": 0.1}, {"maximize": False}),
        ),
        flags={"lr", "betas", "weight_decay", "maximize"},
        reference=_made_by("torch_reference", "lion_class"),
        state_kwargs={"lr": 0.01},
        resume=(
            ("lion", {"lr": 0.001, "weight_decay": 0.1}),
        ),
    ),
    OptimizerInfo(
        "ADOPT",
        cases=(
            # ADOPT (torch has none; the golden values come from pytorch-optimizer 4.1.0's ADOPT),
            # 100 steps: default, lr and betas, eps (0.3 makes its floor bite), L2 and decoupled
            # weight decay, maximize (the reference's is the optimizer's, not a group's).
            make_case("adopt_default", "ADOPT", {}, {"lr": 0.01}, steps=100),
            make_case("adopt_lr_betas", "ADOPT", {"lr": 0.01, "betas": (0.5, 0.9)}, {"betas": (0.9, 0.999)}, steps=100),
            make_case("adopt_eps", "ADOPT", {"lr": 0.01, "eps": 0.3}, {"eps": 1e-8}, steps=100),
            make_case("adopt_wd", "ADOPT", {"lr": 0.01, "weight_decay": 0.1}, {"weight_decay": 0.0}, steps=100),
            make_case("adopt_decoupled_wd", "ADOPT", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
                      {"decoupled_weight_decay": False}, steps=100),
            make_case("adopt_wd_maximize", "ADOPT", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, {"lr": 0.005},
                      steps=100),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "maximize"},
        reference=_attribute("pytorch_optimizer", "ADOPT"),
        reference_package="pytorch_optimizer",
        reference_names={"decoupled_weight_decay": "weight_decouple"},
        state_kwargs={"lr": 0.01, "weight_decay": 0.01},
        resume=(
            ("adopt", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
        ),
    ),
    # Schedule-Free (torch has none; the golden values come from schedulefree 1.4.1): 1,000 steps,
    # recorded every 50th, with switches to evaluation mode and back (optim_cases.schedule_free_case).
    # A momentum or beta1 of 0.5 makes eval()'s lerp weight 1 - 1/beta = -1 (torch's other branch).
    OptimizerInfo(
        "SGDScheduleFree",
        cases=(
            schedule_free_case("sgd_schedule_free_default", "SGDScheduleFree", {}, {"lr": 0.5, "r": 1.0, "weight_lr_power": 1.0}),
            schedule_free_case("sgd_schedule_free_warmup_wd", "SGDScheduleFree",
                               {"lr": 0.5, "warmup_steps": 100, "weight_decay": 0.1},
                               {"momentum": 0.5, "weight_decay": 0.0, "warmup_steps": 20}),
        ),
        flags={"lr", "momentum", "weight_decay", "warmup_steps", "r", "weight_lr_power"},
        reference=_schedule_free("SGDScheduleFree"),
        reference_package="schedulefree",
        trajectory_table=TRAJECTORY_SCHEDULE_FREE,
        state_kwargs={"lr": 0.1, "weight_decay": 0.01},
        resume=(
            ("sgd_schedule_free", {"lr": 0.1, "weight_decay": 0.01, "warmup_steps": 3}),
        ),
    ),
    OptimizerInfo(
        "AdamWScheduleFree",
        cases=(
            schedule_free_case("adamw_schedule_free_default", "AdamWScheduleFree", {},
                               {"lr": 0.02, "eps": 0.1, "r": 0.5, "weight_lr_power": 0.0}),
            schedule_free_case("adamw_schedule_free_warmup_wd", "AdamWScheduleFree",
                               {"lr": 0.01, "warmup_steps": 100, "weight_decay": 0.1},
                               {"betas": (0.5, 0.99), "weight_decay": 0.0, "warmup_steps": 10}),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "warmup_steps", "r", "weight_lr_power"},
        reference=_schedule_free("AdamWScheduleFree"),
        reference_package="schedulefree",
        trajectory_table=TRAJECTORY_SCHEDULE_FREE,
        state_kwargs={"lr": 0.01, "weight_decay": 0.01},
        resume=(
            ("adamw_schedule_free", {"lr": 0.01, "weight_decay": 0.1, "warmup_steps": 3}),
        ),
    ),
    OptimizerInfo(
        "RAdamScheduleFree",
        cases=(
            schedule_free_case("radam_schedule_free_default", "RAdamScheduleFree", {},
                               {"lr": 0.02, "r": 1.0, "eps": 0.1, "weight_lr_power": 1.0, "betas": (0.9, 0.9)}),
            schedule_free_case("radam_schedule_free_wd", "RAdamScheduleFree", {"lr": 0.01, "weight_decay": 0.1},
                               {"silent_sgd_phase": False, "betas": (0.5, 0.99)}, {"silent_sgd_phase": True}),
        ),
        flags={"lr", "betas", "eps", "weight_decay", "r", "weight_lr_power", "silent_sgd_phase"},
        reference=_schedule_free("RAdamScheduleFree"),
        reference_package="schedulefree",
        trajectory_table=TRAJECTORY_SCHEDULE_FREE,
        state_kwargs={"lr": 0.01, "weight_decay": 0.01},
        resume=(
            ("radam_schedule_free", {"lr": 0.01, "weight_decay": 0.1}),
        ),
    ),
    OptimizerInfo(
        "Prodigy",
        cases=(
            # Prodigy (torch has none; the golden values come from prodigyopt 1.1.2's Prodigy),
            # 200 steps each. The estimate's hyperparameters are the optimizer's (one value for
            # all groups); a group may set its own eps, weight decay, safeguard_warmup, slice_p,
            # or lr 0 (paused). NONE_GRAD's step 40, where no parameter has a gradient, is the
            # reference's early return (d_denom == 0).
            make_case("prodigy_default", "Prodigy", {}, {"eps": 1e-3}, steps=200),
            make_case("prodigy_wd", "Prodigy", {"weight_decay": 0.1, "decoupled_weight_decay": True},
                      {"weight_decay": 0.0}, steps=200),
            make_case("prodigy_l2", "Prodigy", {"weight_decay": 0.1, "decoupled_weight_decay": False},
                      {"weight_decay": 0.01}, steps=200),
            make_case("prodigy_bias_correction_safeguard", "Prodigy", {"use_bias_correction": True},
                      {"safeguard_warmup": True}, steps=200),
            make_case("prodigy_growth_d_coef", "Prodigy", {"growth_rate": 1.05, "d_coef": 2.0}, {"eps": 1e-6},
                      steps=200),
            make_case("prodigy_beta3_d0", "Prodigy", {"betas": (0.8, 0.99), "beta3": 0.9, "d0": 1e-3},
                      {"eps": 1e-6}, steps=200),
            make_case("prodigy_beta1_zero_l2", "Prodigy",
                      {"betas": (0.0, 0.999), "weight_decay": 0.1, "decoupled_weight_decay": False},
                      {"weight_decay": 0.0}, steps=200),
            make_case("prodigy_slice_p", "Prodigy", {"slice_p": 3}, {"slice_p": 2}, steps=200),
            make_case("prodigy_lr_paused_group", "Prodigy", {"lr": 0.5, "weight_decay": 0.1}, {"lr": 0.0},
                      steps=200),
        ),
        flags={"lr", "betas", "beta3", "eps", "weight_decay", "decoupled_weight_decay", "use_bias_correction",
               "safeguard_warmup", "d0", "d_coef", "growth_rate", "slice_p"},
        reference=_attribute("prodigyopt", "Prodigy"),
        reference_package="prodigyopt",
        reference_names={"decoupled_weight_decay": "decouple"},
        state_kwargs={"lr": 1.0, "weight_decay": 0.01},
        resume=(
            ("prodigy", {"lr": 1.0, "weight_decay": 0.1, "use_bias_correction": True}),
        ),
    ),
    OptimizerInfo(
        "SOAP",
        cases=(
            # SOAP (torch has none; the golden values come from pytorch-optimizer 4.1.0's SOAP, its
            # QR refresh in the parameter's dtype: torch_reference.soap_qr_in_param_dtype), 200 steps:
            # default, betas and shampoo_beta, eps and weight decay, the refresh frequency, the
            # largest factored dimension, vectors factored, the normalised update without bias
            # correction, merged dimensions (channels first and last), maximize (the reference's
            # is the optimizer's, not a group's, as is data_format). Shapes whose first statistics
            # have no repeated eigenvalue, as the eigenvectors of a repeated one are LAPACK's
            # choice (tests/test_soap.py).
            make_case("soap_default", "SOAP", {}, {"lr": 0.01}, steps=200, none_grad=SOAP_NONE_GRAD),
            make_case("soap_betas_shampoo_beta", "SOAP", {"lr": 0.01, "betas": (0.9, 0.99), "shampoo_beta": 0.8},
                      {"shampoo_beta": None}, steps=200, none_grad=SOAP_NONE_GRAD),
            make_case("soap_eps_wd", "SOAP", {"lr": 0.01, "eps": 1e-3, "weight_decay": 0.1}, {"weight_decay": 0.0},
                      steps=200),
            make_case("soap_frequency", "SOAP", {"lr": 0.01, "precondition_frequency": 3},
                      {"precondition_frequency": 7}, steps=200, none_grad=SOAP_NONE_GRAD),
            make_case("soap_max_dim", "SOAP", {"lr": 0.01, "max_precondition_dim": 3}, {"max_precondition_dim": 2},
                      steps=200, none_grad=SOAP_NONE_GRAD),
            with_shapes(make_case("soap_precondition_1d", "SOAP", {"lr": 0.01, "precondition_1d": True},
                                  {"precondition_1d": False}, steps=200, none_grad=SOAP_NONE_GRAD), SOAP_1D_SHAPES),
            make_case("soap_normalize_no_bias", "SOAP", {"lr": 0.01, "normalize_gradient": True,
                                                         "correct_bias": False},
                      {"normalize_gradient": False, "correct_bias": True}, steps=200, none_grad=SOAP_NONE_GRAD),
            with_shapes(make_case("soap_merge_dims", "SOAP", {"lr": 0.01, "merge_dims": True,
                                                              "max_precondition_dim": 9},
                                  {"max_precondition_dim": 4}, steps=200, none_grad=SOAP_NONE_GRAD), SOAP_MERGE_SHAPES),
            with_shapes(make_case("soap_channels_last", "SOAP", {"lr": 0.01, "merge_dims": True,
                                                                 "max_precondition_dim": 12,
                                                                 "data_format": "channels_last"},
                                  {"max_precondition_dim": 9}, steps=200, none_grad=SOAP_NONE_GRAD), SOAP_CHANNELS_LAST_SHAPES),
            make_case("soap_maximize", "SOAP", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}, {"lr": 0.005},
                      steps=200, none_grad=SOAP_NONE_GRAD),
        ),
        flags={"lr", "betas", "shampoo_beta", "eps", "weight_decay", "precondition_frequency",
               "max_precondition_dim", "merge_dims", "precondition_1d", "normalize_gradient", "correct_bias",
               "data_format", "maximize"},
        reference=_attribute("pytorch_optimizer", "SOAP"),
        reference_package="pytorch_optimizer",
        reference_context=_attribute("torch_reference", "soap_qr_in_param_dtype"),
        reference_state=_attribute("torch_reference", "soap_state"),
        trajectory_table=TRAJECTORY_EIGENBASIS,
        state_kwargs={"lr": 0.01, "precondition_frequency": 2, "precondition_1d": True},
        resume=(
            ("soap", {"lr": 0.01, "precondition_frequency": 2, "weight_decay": 0.1}),
        ),
    ),
)

# MuonWithAdamW: a Muon group of matrices (tall and wide) and an AdamW group of a vector and a
# matrix (an embedding's kind), in either order; three groups where two Muon groups differ.
MUON_GROUP, ADAMW_GROUP = ((4, 3), (3, 5)), ((5,), (2, 3))


def _muon_with_adamw_case(name, kwargs, *groups):
    """A case of MuonWithAdamW over ``groups``: ``(use_muon, overrides)`` pairs, shaped by rule."""
    return OptimCase(name, "MuonWithAdamW", kwargs,
                     tuple({"shapes": MUON_GROUP if use_muon else ADAMW_GROUP, "use_muon": use_muon, **overrides}
                           for use_muon, overrides in groups), none_grad=NONE_GRAD)


REGISTRY += (
    OptimizerInfo(
        "MuonWithAdamW",
        cases=(
            # MuonWithAdamW (the reference: torch_reference.muon_with_adamw_class, torch's Muon and
            # AdamW over the same groups): defaults, each rule's constructor arguments (Muon's eps
            # and AdamW's adamw_eps apart), Tensor lrs, the lr adjustments with a third group, the
            # AdamW group first with amsgrad and maximize, the Newton-Schulz settings.
            _muon_with_adamw_case("muon_with_adamw_default", {}, (True, {}), (False, {})),
            _muon_with_adamw_case("muon_with_adamw_constructor", {
                "lr": 0.02, "weight_decay": 0.05, "momentum": 0.9, "adamw_lr": 0.01, "adamw_betas": (0.8, 0.99),
                "adamw_eps": 1e-6, "adamw_weight_decay": 0.1}, (True, {}), (False, {})),
            _muon_with_adamw_case("muon_with_adamw_tensor_lr", {"lr": TENSOR_LR, "adamw_lr": TENSOR_LR},
                                  (True, {}), (False, {"weight_decay": 0.1})),
            _muon_with_adamw_case("muon_with_adamw_adjust_lr", {"lr": 0.02, "weight_decay": 0.01},
                                  (True, {"adjust_lr_fn": "match_rms_adamw"}), (False, {"lr": 0.02}),
                                  (True, {"adjust_lr_fn": "original", "nesterov": False})),
            _muon_with_adamw_case("muon_with_adamw_adamw_first", {"lr": 0.02},
                                  (False, {"lr": 0.01, "amsgrad": True, "maximize": True, "betas": (0.5, 0.9)}),
                                  (True, {"weight_decay": 0.5, "momentum": 0.8, "nesterov": True})),
            _muon_with_adamw_case("muon_with_adamw_ns", {"lr": 0.02, "ns_coefficients": NS_CONVERGENT, "ns_steps": 3,
                                                          "eps": 1e-3}, (True, {}), (False, {"eps": 1e-3})),
        ),
        flags={"lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps", "adjust_lr_fn",
               "adamw_lr", "adamw_betas", "adamw_eps", "adamw_weight_decay", "use_muon", "amsgrad", "maximize",
               "betas"},
        reference=_made_by("torch_reference", "muon_with_adamw_class"),
        reference_context=_attribute("torch_reference", "muon_in_param_dtype"),
        state_kwargs={"lr": 0.02, "adamw_lr": 0.01},
        resume=(
            ("muon_with_adamw", {"lr": 0.02, "adamw_lr": 0.01}),
        ),
    ),
)

BY_NAME: dict[str, OptimizerInfo] = {info.name: info for info in REGISTRY}

#: Every golden case, in the order of tests/golden/optim/MANIFEST.json.
CASES: list[OptimCase] = [case for info in REGISTRY for case in info.cases]
CASES_BY_NAME: dict[str, OptimCase] = {case.name: case for case in CASES}


def info_of(case: OptimCase) -> OptimizerInfo:
    """The entry of ``case``'s optimizer."""
    return BY_NAME[case.optimizer]
