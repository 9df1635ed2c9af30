"""Muon for the hidden matrices, AdamW for the rest: one optimizer routing each group to its rule."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

from .._tensor import Tensor
from ..nn.module import Module
from ..nn.modules.linear import Linear
from ..nn.modules.sparse import Embedding, EmbeddingBag
from . import _checks
from . import schedules as _schedules
from .adam import adam_rule, adam_state, check_adam_group
from .muon import check_muon_group, muon_state, muon_update
from .optimizer import Optimizer

if TYPE_CHECKING:
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule

#: The hyperparameters of a Muon group (torch.optim.Muon's) and of an AdamW group (torch.optim.AdamW's).
MUON_KEYS = ("lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps", "adjust_lr_fn")
ADAMW_KEYS = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
              "differentiable", "fused", "decoupled_weight_decay")
_ONLY = {True: set(MUON_KEYS) - set(ADAMW_KEYS), False: set(ADAMW_KEYS) - set(MUON_KEYS)}
_RULE = {True: "Muon", False: "AdamW"}


def muon_defaults(defaults: dict) -> dict:
    """A Muon group's defaults, from :class:`MuonWithAdamW`'s ``defaults``."""
    return {key: defaults[key] for key in MUON_KEYS}


def adamw_defaults(defaults: dict) -> dict:
    """An AdamW group's defaults, from :class:`MuonWithAdamW`'s ``defaults`` (its ``adamw_*``),
    with torch.optim.AdamW's for the rest."""
    return dict(lr=defaults["adamw_lr"], betas=tuple(defaults["adamw_betas"]), eps=defaults["adamw_eps"],
                weight_decay=defaults["adamw_weight_decay"], amsgrad=False, maximize=False, foreach=None,
                capturable=False, differentiable=False, fused=None, decoupled_weight_decay=True)


def _param_of(item):
    """The parameter of a group's ``params`` entry (a Parameter or a ``(name, Parameter)`` pair)."""
    return item[1] if isinstance(item, tuple) else item


class MuonWithAdamW(Optimizer):
    r"""Muon for the hidden weight matrices, AdamW for every other parameter, as one optimizer.

    KellerJordan/Muon's recommended split (its ``MuonWithAuxAdam``) with torch's two
    optimizers as the rules: each parameter group says which rule updates it
    (``use_muon=True``: :class:`Muon`, torch.optim.Muon's update, for 2-D parameters only;
    ``use_muon=False``: :class:`AdamW`, torch.optim.AdamW's), so that there is one
    ``param_groups``, one ``state_dict``, one set of hooks, and an lr scheduler scales every
    group's ``lr``. Per step, for a parameter :math:`\theta` of a group with learning rate
    :math:`\gamma` and weight decay :math:`\lambda`:

    .. math::

        \begin{aligned}
        &\textbf{if}\ \mathrm{use\_muon} \text{ (an } A \times B \text{ matrix):} \\
        &\hspace{5mm} B_t \leftarrow \mu B_{t-1} + (1 - \mu) g_t, \qquad
            \tilde B_t \leftarrow (1 - \mu) g_t + \mu B_t \text{ if nesterov, else } B_t \\
        &\hspace{5mm} \theta_t \leftarrow \theta_{t-1}(1 - \gamma\lambda)
            - \mathrm{AdjustLR}(\gamma, A, B)\, \mathrm{NS}^{(a,b,c)}_k(\tilde B_t; \epsilon) \\
        &\textbf{else}: \\
        &\hspace{5mm} \theta_{t-1} \leftarrow \theta_{t-1}(1 - \gamma\lambda), \qquad
            m_t \leftarrow \beta_1 m_{t-1} + (1 - \beta_1) g_t, \qquad
            v_t \leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        &\hspace{5mm} \theta_t \leftarrow \theta_{t-1} - \frac{\gamma}{1 - \beta_1^t}
            \cdot \frac{m_t}{\sqrt{v_t} / \sqrt{1 - \beta_2^t} + \epsilon}
        \end{aligned}

    with :math:`\mathrm{NS}_k` and :math:`\mathrm{AdjustLR}` as in :class:`Muon`
    (``adjust_lr_fn``: None or "original", :math:`\gamma\sqrt{\max(1, A/B)}`;
    "match_rms_adamw", :math:`0.2\gamma\sqrt{\max(A, B)}`, with which Muon groups can share
    the AdamW groups' lr and weight decay) and AMSGrad and ``maximize`` as in :class:`Adam`.

    **Routing.** ``params`` is a list of group dicts, each with ``use_muon`` (as
    KellerJordan's groups) and any hyperparameters of its rule; a key of the other rule
    (``betas`` in a Muon group, ``momentum`` in an AdamW group) is an error. A group without
    ``use_muon``, or a plain iterable of parameters, is split by shape, as torch.optim.Muon's
    docs split a model: its 2-D parameters form a Muon group, the rest an AdamW group (in that
    order; a part with no parameter is left out). That puts embedding tables and the output
    layer under Muon, which KellerJordan/Muon advises against: :meth:`from_module` routes a
    model as it recommends.

    Parameters
    ----------
    params : iterable of dict, or iterable of Parameter
        Parameter groups, each with ``"use_muon"`` (True or False); or parameters (or groups
        without ``"use_muon"``) to split by shape.
    lr : float or Tensor or Schedule, default 1e-3
        Learning rate of the Muon groups (torch.optim.Muon's default).
    weight_decay : float, default 0.1
        Decoupled weight decay of the Muon groups (applied with the unadjusted lr).
    momentum : float, default 0.95
        Muon's momentum :math:`\mu`.
    nesterov : bool, default True
        Orthogonalise Muon's Nesterov look-ahead instead of its buffer.
    ns_coefficients : tuple of 3 floats, default (3.4445, -4.775, 2.0315)
        Coefficients :math:`(a, b, c)` of the quintic Newton-Schulz iteration.
    eps : float, default 1e-7
        Floor of the Frobenius norm the iteration's input is divided by (Muon's ``eps``).
    ns_steps : int, default 5
        Number of Newton-Schulz steps (fewer than 100).
    adjust_lr_fn : {None, "original", "match_rms_adamw"}, default None
        How a Muon group's lr scales with the matrix's shape; None means "original".
    adamw_lr : float or Tensor or Schedule, default 1e-3
        Learning rate of the AdamW groups (their ``"lr"``; torch.optim.AdamW's default).
    adamw_betas : tuple of 2 floats, default (0.9, 0.999)
        The AdamW groups' ``"betas"``.
    adamw_eps : float, default 1e-8
        The AdamW groups' ``"eps"`` (the term added to the denominator).
    adamw_weight_decay : float, default 1e-2
        The AdamW groups' ``"weight_decay"``.

    Attributes
    ----------
    param_groups : list of dict
        A Muon group holds ``"use_muon": True`` and torch.optim.Muon's keys ("lr",
        "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps",
        "adjust_lr_fn"); an AdamW group ``"use_muon": False`` and torch.optim.AdamW's ("lr",
        "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
        "differentiable", "fused", "decoupled_weight_decay").
    defaults : dict
        The constructor's hyperparameters, by their names above.
    state : dict
        By flat parameter index: a Muon parameter's "momentum_buffer"; an AdamW parameter's
        "step", "exp_avg", "exp_avg_sq" (and "max_exp_avg_sq" with amsgrad), as torch's
        optimizers keep them.

    Raises
    ------
    ValueError
        A group with ``use_muon=True`` holding a parameter that is not 2-D, a group holding a
        key of the other rule, or a state dict that routes a group to the other rule (or does
        not say, as a torch.optim.Muon's): nothing changes.
    TypeError
        ``use_muon`` that is not a bool.

    Notes
    -----
    Each rule is lucid's :class:`Muon` or :class:`AdamW` (the same code), so a Muon group
    follows torch.optim.Muon's trajectory and an AdamW group torch.optim.AdamW's, to float64
    rounding, on both devices; as with :class:`Muon`, the Newton-Schulz iteration runs in the
    parameter's dtype where torch runs it in bfloat16. torch has no combined optimizer: its
    docs build one Muon and one AdamW; this is that pair as one object.

    Against KellerJordan/Muon's ``MuonWithAuxAdam``: the rules are torch's, not its own
    code, so the numbers differ slightly. Its Muon divides by :math:`\|X\|_F + 10^{-7}`
    (torch: :math:`\max(\|X\|_F, \epsilon)`), reshapes 4-D convolution filters to matrices
    (torch and lucid take 2-D parameters only: route convolutions to AdamW, as
    :meth:`from_module` does) and has no ``adjust_lr_fn`` (its scaling is "original"); its
    Adam writes :math:`\hat m / (\sqrt{\hat v} + \epsilon)` (torch: :math:`\epsilon` after
    dividing by :math:`\sqrt{1-\beta_2^t}`). Its group defaults are lr 0.02 (Muon) and 3e-4,
    betas (0.9, 0.95), eps 1e-10 (Adam), weight decay 0; here they are torch's optimizers'
    defaults, which the constructor's arguments and each group's keys override.

    Loading a state dict checks its routing: a group saved with another ``use_muon`` than
    the group it loads into is refused, as is a group saved without one. A state dict saved
    by a torch.optim.Muon or AdamW therefore does not load; each group's keys and state are
    theirs, so adding ``"use_muon"`` to its groups makes it loadable. Schedulers that cycle
    momentum (``OneCycleLR``, ``CyclicLR``) cycle a Muon group's ``"momentum"`` and an AdamW
    group's ``betas[0]``, as torch's do on torch's Muon and AdamW.

    Examples
    --------
    An embedding, a hidden layer and a head: :meth:`from_module` puts the hidden matrix under
    Muon and the rest (embedding, head, biases) under AdamW; a scheduler scales both.

    >>> import lucid
    >>> from lucid import nn, optim
    >>> _ = lucid.manual_seed(0)
    >>> model = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 10))
    >>> optimizer = optim.MuonWithAdamW.from_module(model, lr=0.02, adamw_lr=0.03)
    >>> [(g["use_muon"], g["param_names"]) for g in optimizer.param_groups]
    [(True, ['1.weight']), (False, ['0.weight', '1.bias', '3.weight', '3.bias'])]
    >>> scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    >>> tokens, targets = lucid.tensor([1, 2, 3, 4]), lucid.tensor([2, 3, 4, 5])
    >>> for _ in range(20):
    ...     optimizer.zero_grad()
    ...     loss = nn.functional.cross_entropy(model(tokens), targets)
    ...     loss.backward()
    ...     optimizer.step()
    ...     scheduler.step()
    >>> [g["lr"] for g in optimizer.param_groups]
    [0.005, 0.0075]
    >>> loss.item() < 1.0  # from 2.25
    True

    Groups given by hand, as KellerJordan/Muon's:

    >>> hidden, head = nn.Linear(4, 4, bias=False), nn.Linear(4, 2)
    >>> optimizer = optim.MuonWithAdamW([
    ...     {"params": hidden.parameters(), "use_muon": True, "lr": 0.02, "adjust_lr_fn": "match_rms_adamw"},
    ...     {"params": head.parameters(), "use_muon": False, "lr": 3e-4, "betas": (0.9, 0.95)},
    ... ])
    >>> optim.MuonWithAdamW([{"params": head.parameters(), "use_muon": True}])
    Traceback (most recent call last):
        ...
    ValueError: Muon only supports 2D parameters whereas we found a parameter with size: (2,) in a group with use_muon=True; put it in a group with use_muon=False (AdamW)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315), eps: float = 1e-7,
                 ns_steps: int = 5, adjust_lr_fn: str | None = None, *,
                 adamw_lr: float | Tensor | Schedule = 1e-3, adamw_betas: tuple[float, float] = (0.9, 0.999),
                 adamw_eps: float = 1e-8, adamw_weight_decay: float = 1e-2) -> None:
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn,
                        adamw_lr=adamw_lr, adamw_betas=adamw_betas, adamw_eps=adamw_eps,
                        adamw_weight_decay=adamw_weight_decay)
        super().__init__(params, defaults)

    @classmethod
    def from_module(cls, module: Module, output: str | Module | None = "auto",
                    **hyperparameters: Any) -> MuonWithAdamW:
        r"""The optimizer of ``module``'s parameters, routed as KellerJordan/Muon recommends.

        AdamW takes the weights of every ``Embedding`` and ``EmbeddingBag``, every parameter
        of the output layer, and every parameter that is not 2-D (biases, norms' weights,
        convolution filters); Muon takes the other 2-D parameters (the hidden layers'
        weight matrices). A parameter shared by several modules (a tied embedding and head)
        goes to AdamW if any of them sends it there. The groups are named
        (``"param_names"``, as torch's named parameters give), the Muon group first.

        Parameters
        ----------
        module : Module
            The model.
        output : "auto", str, Module or None, default "auto"
            The output layer: "auto" takes the last ``Linear`` among ``module``'s modules
            (in registration order), a str names a submodule (``"lm_head"``), a Module is
            that submodule, None means there is none (a head tied to the embedding).
        **hyperparameters
            The constructor's arguments (``lr``, ``adamw_lr``, ``adjust_lr_fn``, ...).

        Raises
        ------
        ValueError
            ``output`` naming no submodule of ``module``, or ``module`` without parameters.

        Examples
        --------
        >>> from lucid import nn, optim
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 8), nn.Linear(8, 3))
        >>> optimizer = optim.MuonWithAdamW.from_module(model, output="3")
        >>> optimizer.param_groups[0]["param_names"]
        ['0.weight', '2.weight']
        """
        modules = dict(module.named_modules())
        head = _output_layer(modules, output)
        to_adamw: set[int] = set()
        for sub in modules.values():
            routed_away = sub is head or isinstance(sub, (Embedding, EmbeddingBag))
            for param in sub.parameters(recurse=False):
                if routed_away or param.ndim != 2:
                    to_adamw.add(id(param))
        named = list(module.named_parameters())
        groups = [{"params": [(name, p) for name, p in named if (id(p) in to_adamw) != use_muon],
                   "use_muon": use_muon} for use_muon in (True, False)]
        return cls([g for g in groups if g["params"]], **hyperparameters)

    # --- groups: routing and defaults -----------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group: with ``"use_muon"``, as it is; without, split by shape into a Muon
        group of its 2-D parameters and an AdamW group of the rest (both or neither added).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.MuonWithAdamW([{"params": [nn.Parameter(lucid.zeros(3, 2))], "use_muon": True}])
        >>> opt.add_param_group({"params": [nn.Parameter(lucid.zeros(2, 2)), nn.Parameter(lucid.zeros(2))]})
        >>> [(g["use_muon"], len(g["params"])) for g in opt.param_groups]
        [(True, 1), (True, 1), (False, 1)]
        """
        if isinstance(param_group, dict) and "use_muon" not in param_group:
            self.param_groups.add_all(_split_by_shape(param_group))
            return
        if isinstance(param_group, dict):
            _refuse_other_rules_keys(param_group)
        self.param_groups.add(param_group)

    def group_defaults(self, group: dict) -> dict:
        if "use_muon" not in group:  # a loaded group that does not say its rule: check refuses it
            return {}
        return muon_defaults(self.defaults) if group["use_muon"] is True else adamw_defaults(self.defaults)

    def check(self, group: dict) -> None:
        if "params" not in group and "use_muon" not in group:  # the constructor's defaults: each rule's
            for key in ("adamw_lr", "adamw_eps", "adamw_weight_decay"):  # by their own names, before
                if isinstance(group[key], numbers.Real):                  # AdamW's checks name lr, eps, ...
                    _checks.real(key, group[key])
            self._validate({**muon_defaults(group), "use_muon": True})
            self._validate(_schedules.attach({**adamw_defaults(group), "use_muon": False}))
            return
        if "use_muon" not in group:
            raise ValueError("a group of MuonWithAdamW must say use_muon=True or False; a state dict loads only "
                             "if each of its groups does, as MuonWithAdamW.state_dict() writes them")
        use_muon = group["use_muon"]
        if not isinstance(use_muon, bool):
            raise TypeError(f"use_muon must be True or False, got {type(use_muon).__name__} {use_muon!r}")
        missing = [key for key in (MUON_KEYS if use_muon else ADAMW_KEYS) if key not in group]
        if missing:
            raise ValueError(f"a group with use_muon={use_muon} ({_RULE[use_muon]}) lacks {missing}")
        if "params" in group:
            self._check_route(group)
        if use_muon:
            for param in group.get("params", ()):
                if param.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{param.shape} in a group with use_muon=True; put it in a group with "
                                     f"use_muon=False (AdamW)")
            check_muon_group(group)
        else:
            check_adam_group(group)
            group["decoupled_weight_decay"] = True  # AdamW, as torch's

    def _check_route(self, group: dict) -> None:
        """A group listing parameters this optimizer holds (a loaded one) routes them as it does."""
        held = {id(p): g["use_muon"] for g in self.param_groups for p in g["params"] if g is not group}
        routes = {held[id(p)] for p in group.get("params", ()) if id(p) in held}
        if routes and routes != {group["use_muon"]}:
            now = " and ".join(_RULE[route] for route in sorted(routes, reverse=True))
            raise ValueError(f"this group routes its parameters to {_RULE[group['use_muon']]} (use_muon="
                             f"{group['use_muon']}), but this optimizer routes them to {now}: a state dict loads "
                             f"only into a MuonWithAdamW whose groups have the same routing")

    # --- each group's rule ----------------------------------------------------------------
    def init_state(self, param: Tensor, group: dict) -> dict:
        return muon_state(param) if group["use_muon"] else adam_state(param, group)

    def elementwise_rule(self, group: dict) -> Rule | None:
        return None if group["use_muon"] else adam_rule(group)

    def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        if group["use_muon"]:
            muon_update(param, grad, state, group)
        else:
            super().update(param, grad, state, group)


def _split_by_shape(group: dict) -> list[dict]:
    """A group without ``use_muon`` as a Muon group of its 2-D parameters and an AdamW group of
    the rest, each with the keys its rule takes (a part without parameters left out); as one
    AdamW group where its ``params`` are empty or not all Tensors, for the base to refuse."""
    items = group["params"]
    items = [items] if isinstance(items, Tensor) else list(items)
    if not items or not all(isinstance(_param_of(item), Tensor) for item in items):
        return [{**group, "params": items, "use_muon": False}]
    parts = []
    for use_muon in (True, False):
        mine = [item for item in items if (_param_of(item).ndim == 2) == use_muon]
        if mine:
            settings = {key: value for key, value in group.items() if key not in _ONLY[not use_muon]}
            parts.append({**settings, "params": mine, "use_muon": use_muon})
    return parts


def _refuse_other_rules_keys(group: dict) -> None:
    use_muon = group["use_muon"]
    if isinstance(use_muon, bool):
        foreign = sorted(_ONLY[not use_muon] & set(group))
        if foreign:
            raise ValueError(f"a group with use_muon={use_muon} ({_RULE[use_muon]}) takes no {foreign}, which are "
                             f"{_RULE[not use_muon]}'s")


def _output_layer(modules: dict, output) -> Module | None:
    """The output layer ``output`` names among ``modules`` (name -> module); see ``from_module``."""
    if output is None:
        return None
    if isinstance(output, str) and output == "auto":
        linears = [m for m in modules.values() if isinstance(m, Linear)]
        return linears[-1] if linears else None
    if isinstance(output, str):
        if output not in modules:
            raise ValueError(f"output names no submodule of the module: {output!r}")
        return modules[output]
    if isinstance(output, Module):
        if not any(m is output for m in modules.values()):
            raise ValueError(f"output is not a submodule of the module: {type(output).__name__}")
        return output
    raise TypeError(f"output must be 'auto', a submodule's name, a Module or None, got {type(output).__name__}")
