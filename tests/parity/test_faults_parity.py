"""Issue 18's four faults, each checked as a kind on leafkit and on PyTorch: the same values, errors and modes.

1. ``Optimizer.load_state_dict`` casts the loaded state as PyTorch does (dtype and device follow the parameter,
   ``step`` is kept; tensors that need no cast are shared, the dicts are new).
2. An optimizer's ``step()`` with state of the wrong shape or dtype raises PyTorch's RuntimeError, for every
   optimizer and every state tensor, at the same point of the update.
3. ``no_grad``/``enable_grad``/``set_grad_enabled``/``inference_mode`` decorating a generator function: ``next``,
   ``send``, ``throw`` and ``close`` all run inside the mode.
4. A view taken before its base's ``requires_grad`` was switched on follows the base (``requires_grad``,
   ``grad_fn``, ``is_leaf``, gradients, the in-place rules).
"""

from __future__ import annotations

import warnings

import pytest

import leafkit

torch = pytest.importorskip("torch")

LIBS = {"leafkit": leafkit, "torch": torch}


def outcome(fn):
    """What ``fn()`` returned, or the class and message of what it raised, as comparable text."""
    try:
        return ("ok", _norm(fn()))
    except Exception as e:  # noqa: BLE001 - the class and message are the observation
        return ("error", type(e).__name__, str(e))


def _norm(v):
    if isinstance(v, (leafkit.Tensor, torch.Tensor)):
        return ("tensor", [round(x, 5) for x in v.detach().reshape(-1).tolist()], tuple(v.shape), str(v.dtype))
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if hasattr(v, "next_functions"):
        return ("node", type(v).__name__)
    return repr(v)


def same_on_both(case):
    got, want = case(leafkit), case(torch)
    assert got == want


# -- 1. load_state_dict -------------------------------------------------------------------------------------------
OPTIMIZERS = [
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)]


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=IDS)
def test_load_state_dict_casts_like_pytorch(name, kw):
    def case(lib):
        lib.manual_seed(0)
        net = lib.nn.Linear(2, 1)
        opt = getattr(lib.optim, name)(net.parameters(), **kw)
        net(lib.ones(1, 2)).sum().backward()
        opt.step()
        sd = opt.state_dict()
        out = []
        # the repro: a float64 model takes float64 state
        net2 = lib.nn.Linear(2, 1).double()
        opt2 = getattr(lib.optim, name)(net2.parameters(), **kw)
        opt2.load_state_dict(sd)
        out.append(sorted((k, str(v.dtype), tuple(v.shape)) for k, v in opt2.state[net2.weight].items()))
        # same dtype: the tensors are shared with the state dict, the dicts are new, the groups deep-copied
        net3 = lib.nn.Linear(2, 1)
        opt3 = getattr(lib.optim, name)(net3.parameters(), **kw)
        opt3.load_state_dict(sd)
        st, st3 = opt.state[net.weight], opt3.state[net3.weight]
        out.append(sorted((k, st3[k] is st[k]) for k in st))
        out.append(
            (st3 is st, opt3.param_groups[0] is sd["param_groups"][0], opt3.param_groups[0]["params"][0] is net3.weight)
        )
        # integer state is cast to the parameter's dtype; lists rebuilt; "step" kept as is; unknown keys kept
        step = lib.tensor(5.0, dtype=lib.float64)
        sd4 = {
            "state": {
                0: {"foo": lib.tensor([1, 2]), "lst": [lib.tensor(1.0, dtype=lib.float64), 3], "step": step},
                7: {"x": 1},
            },
            "param_groups": sd["param_groups"],
        }
        opt3.load_state_dict(sd4)
        s4 = opt3.state[net3.weight]
        out.append(
            (
                str(s4["foo"].dtype),
                str(s4["lst"][0].dtype),
                type(s4["lst"]).__name__,
                s4["step"] is step,
                7 in opt3.state,
            )
        )
        # the loaded optimizer steps on as the original does
        for o, n in ((opt, net), (opt2, net2)):
            o.zero_grad()
            n(lib.ones(1, 2, dtype=n.weight.dtype)).sum().backward()
            o.step()
        out.append(_norm(net2.weight.detach().float()) == _norm(net.weight.detach()))
        out.append(outcome(lambda: opt3.load_state_dict({"state": {}, "param_groups": sd["param_groups"] * 2})))
        return out

    same_on_both(case)


def test_load_state_dict_integer_parameter_keeps_state_dtype():
    def case(lib):
        p = lib.zeros(2, dtype=lib.int64)
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1)
        opt.param_groups[0]["params"] = [p]
        opt.load_state_dict(
            {
                "state": {0: {"momentum_buffer": lib.ones(2, dtype=lib.float64)}},
                "param_groups": opt.state_dict()["param_groups"],
            }
        )
        return str(opt.state[p]["momentum_buffer"].dtype)

    same_on_both(case)


# -- 2. step() with state of the wrong shape or dtype ----------------------------------------------------------------
STATE_KEYS = {
    "SGD": ["momentum_buffer"],
    "Adam": ["exp_avg", "exp_avg_sq"],
    "AdamW": ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"],
    "RMSprop": ["square_avg", "momentum_buffer", "grad_avg"],
    "Adagrad": ["sum"],
}


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=IDS)
@pytest.mark.parametrize("shape", [(2, 2), (3,), (1,), (), (1, 2)], ids=str)
def test_step_with_state_of_the_wrong_shape_raises_pytorchs_error(name, kw, shape):
    def case(lib):
        out = []
        for key in STATE_KEYS[name]:
            p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
            p.grad = lib.tensor([0.5, -1.0])
            opt = getattr(lib.optim, name)([p], **kw)
            opt.step()
            if key not in opt.state[p]:
                continue
            opt.state[p][key] = lib.ones(shape)
            out.append((key, outcome(opt.step), _norm(p.detach())))
        return out

    same_on_both(case)


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=IDS)
@pytest.mark.parametrize("dtype", ["int64", "float64", "bool"])
def test_step_with_state_of_another_dtype_as_pytorch(name, kw, dtype):
    def case(lib):
        out = []
        for key in STATE_KEYS[name]:
            p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
            p.grad = lib.tensor([0.5, -1.0])
            opt = getattr(lib.optim, name)([p], **kw)
            opt.step()
            if key not in opt.state[p]:
                continue
            opt.state[p][key] = lib.ones(2, dtype=getattr(lib, dtype))
            out.append((key, outcome(opt.step), _norm(p.detach())))
        return out

    same_on_both(case)


# -- 3. grad modes decorating generators ------------------------------------------------------------------------------
def _modes(lib):
    return [
        ("no_grad", lambda: lib.no_grad()),
        ("enable_grad", lambda: lib.enable_grad()),
        ("set_grad_enabled(False)", lambda: lib.set_grad_enabled(False)),
        ("inference_mode()", lambda: lib.inference_mode()),
        ("inference_mode(False)", lambda: lib.inference_mode(False)),
        ("bare no_grad", None),
    ]


@pytest.mark.parametrize("k", range(6))
def test_grad_mode_decorated_generator_runs_every_method_inside_the_mode(k):
    def case(lib):
        name, make = _modes(lib)[k]
        log = []

        def body():
            log.append(("start", lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            try:
                while True:
                    try:
                        x = yield 1
                        log.append(("send", x, lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
                    except ValueError as e:
                        log.append(("throw", str(e), lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
                        yield 2
            finally:
                log.append(("close", lib.is_grad_enabled(), lib.is_inference_mode_enabled()))

        gen = lib.no_grad(body) if make is None else make()(body)
        with lib.no_grad():
            g = gen()
            log.append(("next", next(g), lib.is_grad_enabled()))
            log.append(("sent", g.send(5), lib.is_grad_enabled()))
            log.append(("thrown", g.throw(ValueError("boom")), lib.is_grad_enabled()))
            g.close()
            log.append(("closed", lib.is_grad_enabled()))
        log.append(("after", lib.is_grad_enabled()))
        return name, log

    same_on_both(case)


def test_grad_mode_decorated_generator_return_value_and_exceptions():
    def case(lib):
        out = []

        @lib.no_grad()
        def empty():
            return (yield from ())

        @lib.no_grad()
        def returns():
            yield lib.is_grad_enabled()
            return 7

        g = empty()
        out.append(outcome(lambda: next(g)))
        g = returns()
        out.append(next(g))
        try:
            next(g)
        except StopIteration as e:
            out.append(("stop", e.value))
        g = returns()
        next(g)
        out.append(outcome(lambda: g.throw(KeyError("k"))))
        out.append(returns.__name__)
        return out

    same_on_both(case)


def test_grad_mode_decorating_a_class_warns_and_wraps():
    def case(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.no_grad()
            class C:
                def __init__(self):
                    self.mode = lib.is_grad_enabled()

        return C().mode, [(w.category.__name__, str(w.message)) for w in caught]

    same_on_both(case)


# -- 4. views of a leaf whose requires_grad is switched on later ------------------------------------------------------
def _view_cases(lib):
    def after(view_fn, grad_mode=True, inference=False):
        x = lib.zeros(2, 3)
        if inference:
            with lib.inference_mode():
                v = view_fn(x)
        elif grad_mode:
            v = view_fn(x)
        else:
            with lib.no_grad():
                v = view_fn(x)
        x.requires_grad_()
        return x, v

    views = {
        "slice": lambda x: x[:1],
        "select": lambda x: x[1],
        "view": lambda x: x.view(6),
        "t": lambda x: x.t(),
        "view of a view": lambda x: x[:, 1:][0],
    }

    def flags(vf):
        x, v = after(vf)
        return v.requires_grad, v.grad_fn, v.is_leaf, repr(v)

    def used(vf):
        x, v = after(vf)
        y = (v * 2).sum()
        return y.requires_grad, y.grad_fn.name()

    def backward(vf):
        x, v = after(vf)
        (v * 2).sum().backward()
        return x.grad, v.grad

    def no_grad_flags(vf):
        x, v = after(vf, grad_mode=False)
        return v.requires_grad, v.is_leaf

    cases = {}
    for vname, vf in views.items():
        cases[f"{vname}: flags"] = lambda vf=vf: flags(vf)
        cases[f"{vname}: in-place"] = lambda vf=vf: after(vf)[1].add_(1)
        cases[f"{vname}: used"] = lambda vf=vf: used(vf)
        cases[f"{vname}: backward"] = lambda vf=vf: backward(vf)
        cases[f"{vname}: no_grad view flags"] = lambda vf=vf: no_grad_flags(vf)
        cases[f"{vname}: no_grad view in-place"] = lambda vf=vf: after(vf, grad_mode=False)[1].mul_(2)
        cases[f"{vname}: inference view in-place"] = lambda vf=vf: after(vf, inference=True)[1].mul_(2)

    def switched_off():
        x, v = after(views["slice"])
        x.requires_grad_(False)
        return v.requires_grad

    def own_flag_off():
        x, v = after(views["slice"])
        v.requires_grad_(False)
        return v.requires_grad, v.is_leaf

    def own_flag_on():
        x, v = after(views["slice"])
        v.requires_grad = True
        (v * 2).sum().backward()
        return v.requires_grad, v.is_leaf, v.grad, x.grad

    def base_changed_under_no_grad():
        x, v = after(views["slice"])
        with lib.no_grad():
            x.add_(1)
        y = (v * 3).sum()
        y.backward()
        return v.requires_grad, v.grad_fn.name(), v.is_leaf, x.grad

    def view_changed_under_no_grad():
        x, v = after(views["slice"])
        with lib.no_grad():
            v.mul_(2)
        return v.grad_fn.name(), x.grad_fn

    def base_changed_in_place_with_grad():
        x = lib.zeros(3)
        with lib.no_grad():
            v = x[:2]
        w = lib.ones(3, requires_grad=True)
        x.mul_(w)
        return v.grad_fn

    def no_grad_view_changed_with_grad():
        x = lib.zeros(3)
        with lib.no_grad():
            v = x[:2]
        v.mul_(lib.ones(2, requires_grad=True))

    def unbind_outputs():
        x = lib.zeros(3)
        a, b, c = x.unbind()
        x.requires_grad_()
        return a.requires_grad, outcome(lambda: a.mul_(2))

    def grad_wrt_view():
        x, v = after(views["slice"])
        return lib.autograd.grad((v * 2).sum(), [v], allow_unused=True), outcome(
            lambda: lib.autograd.grad((v * 2).sum(), x)
        )

    def retain_and_hook():
        x, v = after(views["slice"])
        v.retain_grad()
        v.register_hook(lambda g: g)
        return v.retains_grad

    def parameter_of_view():
        x, v = after(views["slice"])
        p = lib.nn.Parameter(v)
        return p.requires_grad, p.is_leaf

    def clone_of_view():
        x, v = after(views["slice"])
        return v.clone().grad_fn.name(), v.detach().requires_grad, v.data.requires_grad

    for f in (
        switched_off,
        own_flag_off,
        own_flag_on,
        base_changed_under_no_grad,
        view_changed_under_no_grad,
        base_changed_in_place_with_grad,
        no_grad_view_changed_with_grad,
        unbind_outputs,
        grad_wrt_view,
        retain_and_hook,
        parameter_of_view,
        clone_of_view,
    ):
        cases[f.__name__] = f
    return cases


@pytest.mark.parametrize("name", sorted(_view_cases(leafkit)))
def test_view_follows_its_base_requires_grad(name):
    same_on_both(lambda lib: outcome(_view_cases(lib)[name]))
