"""Latency of the explorers: from a toggle (or click) to a redrawn SVG.

Run ``python bench/widgets.py [--repeat N] [--lang en|zh] [--browser]``.

Kernel side (always): every explorer of ``leafkit.widgets.REGISTRY`` is driven
through its tour (``Explorer.TOUR``: the walk through its controls that the browser
test clicks), timing each step from ``explorer.act(key, value)`` until it returned,
i.e. until the new SVG is in the drawing widget's value.  Two rounds:

- *cold*: the SVG caches are cleared before every action, so each one runs the
  leafkit code, builds the drawing and runs Graphviz's ``dot``;
- *warm*: the same sequence again, as a learner toggling back and forth
  between states already seen; renderings are cached by DOT source.

A new explorer is timed as soon as it is registered.  Steps that draw nothing
new (choosing an answer in the quiz) are not counted.

MemoryExplorer (always, its own line): every control of the explorer is toggled on and off in turn
(each checkpoint box, each way of keeping saved tensors), each toggle timed cold (the program runs
forward and backward, the graph with its saved tensors is built and laid out by ``dot``).  Target: a
median of at most 100 ms.

Browser side (``--browser``, needs chromium + playwright): LeafExplorer toggles
done in JupyterLab in headless Chromium, timed from the click until the SVG in
the page changed (kernel round trip and browser paint included).

The target is a median of at most 150 ms.

BackwardStepper (always, its own line): the latency of one Step, from the click until the
graph is redrawn with the next node highlighted and its gradients on the edges, on two
graphs: the explorer's example (broadcasting, a tensor used three times, a hook, retain_grad)
and a two-layer MLP with its MSE loss (parameters of ``nn.Linear``).  Every Step of a pass is
timed cold (SVG caches cleared: the node runs, the drawing is built and ``dot`` lays it out),
and every Back one step after it (replayed from the record).  Target: a median Step of at
most 100 ms.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from leafkit.viz import clear_svg_cache, dot_available  # noqa: E402
from leafkit.widgets import EXPLORERS, _view  # noqa: E402

TARGET_MS = 150.0
STEPPER_TARGET_MS = 100.0
#: The graphs the stepper is timed on: the code of a notebook cell, its last line the stepper.
STEPPER_GRAPHS = {
    "example": None,  # BackwardStepper.EXAMPLE
    "mlp 4-16-1, batch 8": (
        "torch.manual_seed(0)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))\n"
        "inputs, target = torch.randn(8, 4), torch.randn(8, 1)\n"
        "loss = torch.nn.functional.mse_loss(model(inputs), target)\n"
        "BackwardStepper(loss)"
    ),
}
#: Explorers with a target of their own (median cold toggle, ms): timed again on a sweep of every control.
OWN_TARGETS = {"MemoryExplorer": 100.0}
#: Explorers whose one action draws many pictures at once: reported, not in the overall median.
BATCH_DRAWERS = ("LeafQuiz",)


def tour_actions(ex):
    """``[(label, action)]``: the explorer's tour as callables."""
    return [(f"{key}={value!r}", (lambda k=key, v=value: ex.act(k, v))) for key, value in type(ex).TOUR]


def _views(ex) -> tuple:
    quiz = getattr(ex, "feedback_view", None)
    return ex.drawing_view.value, quiz.value if quiz is not None else ""


def _time(ex, action, cold: bool):
    """ms for one action, or None when it drew no new SVG (e.g. choosing answers in the quiz)."""
    if cold:
        clear_svg_cache()
        _view.clear_caches()
    before = _views(ex)
    t0 = time.perf_counter()
    action()
    dt = (time.perf_counter() - t0) * 1000
    after = _views(ex)
    if after == before or ("<svg" not in after[0] and "<svg" not in after[1]):
        return None  # nothing redrawn (the quiz's answers, its Reset)
    return dt


def run_kernel_side(repeat: int = 1, lang: str = "en") -> dict:
    """``{explorer: {"cold": [ms], "warm": [ms], "actions": n}}``, for every registered explorer."""
    out = {}
    for entry in EXPLORERS:
        cls = entry.cls
        cold, warm = [], []
        for _ in range(repeat):
            ex = cls.example(lang)
            acts = tour_actions(ex)
            for _, act in acts:  # cold: no cached rendering
                cold.append(_time(ex, act, cold=True))
            ex = cls.example(lang)
            for _, act in tour_actions(ex):  # prime the cache with this sequence...
                act()
            ex = cls.example(lang)
            acts = tour_actions(ex)
            for _, act in acts:  # ...then the same toggles again
                warm.append(_time(ex, act, cold=False))
            assert ex.internal_errors == [], ex.internal_errors
        out[entry.name] = {
            "cold": [t for t in cold if t is not None],
            "warm": [t for t in warm if t is not None],
            "actions": len(acts),
        }
    return out


def run_stepper_side(repeat: int = 1, lang: str = "en") -> dict:
    """``{graph: {"step": [ms], "back": [ms]}}``: BackwardStepper's Step and Back, each timed cold."""
    import contextlib
    import io

    from leafkit.widgets.backward_stepper import BackwardStepper

    out = {}
    for name, code in STEPPER_GRAPHS.items():
        cls = BackwardStepper if code is None else type("BackwardStepper", (BackwardStepper,), {"EXAMPLE": code})
        steps, backs = [], []
        for _ in range(repeat):
            with contextlib.redirect_stdout(io.StringIO()):  # the example's hook prints
                ex = cls.example(lang)
                while not ex.finished:
                    t = _time(ex, lambda ex=ex: ex.act("step"), cold=True)
                    if t is not None:
                        steps.append(t)
                while ex.cursor:
                    t = _time(ex, lambda ex=ex: ex.act("back"), cold=True)
                    if t is not None:
                        backs.append(t)
            assert ex.internal_errors == [] and ex.error is None, (ex.internal_errors, ex.error)
        out[name] = {"step": steps, "back": backs}
    return out


def sweep_actions(ex) -> list:
    """Every control set to each of its values in turn, then back: ``[(label, action)]``."""
    acts = []
    for key, c in ex.controls().items():
        start = c.value
        for v in [*c.values(), start]:
            acts.append((f"{key}={v!r}", (lambda k=key, v=v: ex.act(k, v))))
    return acts


def run_own_targets(repeat: int = 1, lang: str = "en") -> dict:
    """``{explorer: [ms]}``: the cold sweep of every explorer of :data:`OWN_TARGETS`."""
    out = {}
    for entry in EXPLORERS:
        if entry.name not in OWN_TARGETS:
            continue
        times = []
        for _ in range(repeat):
            ex = entry.cls.example(lang)
            for _label, act in sweep_actions(ex):
                t = _time(ex, act, cold=True)
                if t is not None:
                    times.append(t)
            assert ex.internal_errors == [], ex.internal_errors
        out[entry.name] = times
    return out


def report_own(results: dict) -> bool:
    ok_all = True
    for name, times in results.items():
        med, target = statistics.median(times), OWN_TARGETS[name]
        ok = med <= target
        ok_all &= ok
        _, p90, top = _fmt(times).split()
        print(
            f"\n{name}: {len(times)} toggles (every control, cold): median {med:.1f} ms, p90/max "
            f"{p90}/{top} ms (target <= {target:.0f} ms): {'OK' if ok else 'OVER'}"
        )
    return ok_all


def report_stepper(results: dict) -> float:
    print(f"\n{'BackwardStepper':24} {'n':>4}   {'step: median p90 max (ms)':>26}   {'back: median p90 max (ms)':>26}")
    every = []
    for name, r in results.items():
        print(f"{name:24} {len(r['step']):4}   {_fmt(r['step']):>26}   {_fmt(r['back']):>26}")
        every += r["step"]
    med = statistics.median(every)
    ok = "OK" if med <= STEPPER_TARGET_MS else "OVER"
    print(f"\nBackwardStepper: median step -> redrawn graph {med:.1f} ms (target <= {STEPPER_TARGET_MS:.0f} ms): {ok}")
    return med


def _fmt(xs):
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
    return f"{statistics.median(xs):7.1f} {p90:7.1f} {xs[-1]:7.1f}"


def report(results: dict) -> float:
    print(f"{'explorer':18} {'n':>4}   {'cold: median p90 max (ms)':>26}   {'warm: median p90 max (ms)':>26}")
    all_cold, all_warm = [], []
    for name, r in results.items():
        print(f"{name:18} {len(r['cold']):4}   {_fmt(r['cold']):>26}   {_fmt(r['warm']):>26}")
        if name not in BATCH_DRAWERS:  # the quiz's Check draws up to 11 pictures at once: reported, not in the median
            all_cold += r["cold"]
            all_warm += r["warm"]
    med_cold = statistics.median(all_cold)
    med_warm = statistics.median(all_warm)
    print(f"{'all explorers':18} {len(all_cold):4}   {_fmt(all_cold):>26}   {_fmt(all_warm):>26}")
    ok = "OK" if med_cold <= TARGET_MS else "OVER"
    print(
        f"\nmedian toggle -> redrawn SVG: cold {med_cold:.1f} ms, warm {med_warm:.1f} ms "
        f"(target <= {TARGET_MS:.0f} ms): {ok}"
    )
    return med_cold


def run_browser_side(n_toggles: int = 24) -> list:
    """Median ms from a click in JupyterLab to the changed SVG in the page (LeafExplorer)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
    import tempfile
    from pathlib import Path

    import explorer_driver as drv
    from lab_harness import (
        CHROMIUM_ARGS,
        REPO,
        JupyterServer,
        Lab,
        browser_unavailable_reason,
        find_chromium,
        write_notebook,
    )

    reason = browser_unavailable_reason()
    if reason:
        print(f"browser side skipped: {reason}")
        return []
    from playwright.sync_api import sync_playwright

    base = REPO / "artifacts" / "tmp"
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-", dir=base))
    server = JupyterServer(REPO).start()
    times = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(viewport={"width": 1400, "height": 1400}).new_page()
            lab = Lab(page, server)
            nb = write_notebook(tmp / "bench.ipynb", ["from leafkit.widgets import LeafExplorer\nLeafExplorer()"])
            lab.open_notebook(nb)
            lab.run_all()
            root = drv.explorer(lab, "LeafExplorer")
            drv.wait_until(lambda: "<svg" in drv.drawing_html(root), 30, "first drawing")
            box = root.locator(".lk-drawing").first
            sequence = ["clone()", "detach()", "+ 2", "cuda()", "* 3", "to('cpu')"]
            current = {1: "cuda()", 2: "detach()", 3: "(none)"}  # LeafExplorer()'s initial steps
            rg = True
            for i in range(n_toggles):
                before = box.inner_html()
                handle = box.element_handle()
                if i % 3 == 2:
                    rg = not rg
                    action = functools.partial(drv.set_checkbox, root, "requires_grad=True", rg)
                else:
                    k = 1 + (i // 3) % 3
                    choice = next(c for j, c in enumerate(sequence * 2) if j >= i % 6 and c != current[k])
                    current[k] = choice
                    action = functools.partial(drv.select, root, f"step {k}", choice)
                page.evaluate(
                    "(el) => { window.__lkT0 = performance.now(); window.__lkDone = null;"
                    " const before = el.innerHTML;"
                    " const obs = new MutationObserver(() => { if (el.innerHTML !== before &&"
                    " el.querySelector('svg')) { window.__lkDone = performance.now(); obs.disconnect(); }});"
                    " obs.observe(el, {childList: true, subtree: true, characterData: true}); }",
                    handle,
                )
                action()
                page.wait_for_function("() => window.__lkDone !== null", timeout=20_000, polling="raf")
                t = page.evaluate("() => window.__lkDone - window.__lkT0")
                if box.inner_html() != before:
                    times.append(t)
            browser.close()
    finally:
        server.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    if times:
        print(
            f"\nbrowser (JupyterLab, headless Chromium), LeafExplorer, {len(times)} toggles: "
            f"click -> new SVG in the page: median {statistics.median(times):.1f} ms, "
            f"max {max(times):.1f} ms"
        )
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="run every sequence this many times")
    ap.add_argument("--lang", choices=("en", "zh"), default="en", help="the explorers' language")
    ap.add_argument("--browser", action="store_true", help="also time toggles in JupyterLab (headless Chromium)")
    args = ap.parse_args(argv)
    if not dot_available():
        print("Graphviz's dot is not installed: the explorers show the text fallback; nothing to time.")
        return 1
    results = run_kernel_side(args.repeat, args.lang)
    med = report(results)
    stepper_med = report_stepper(run_stepper_side(args.repeat, args.lang))
    own_ok = report_own(run_own_targets(max(args.repeat, 3), args.lang))
    if args.browser:
        run_browser_side()
    return 0 if med <= TARGET_MS and stepper_med <= STEPPER_TARGET_MS and own_ok else 2


if __name__ == "__main__":
    sys.exit(main())
