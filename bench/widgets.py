"""Latency of the explorers: from a toggle (or click) to a redrawn SVG.

Run ``python bench/widgets.py [--repeat N] [--browser]``.

Kernel side (always): every explorer of ``leafkit.widgets`` is driven through
the lesson-sized states the lessons use (LeafExplorer chains of up to three
steps, all GradModeExplorer states, BackwardExplorer passes, DetachExplorer
clicks, a quiz check with misses), timing each control change from
``control.value = ...`` / ``button.click()`` until the callback returned, i.e.
until the new SVG is in the drawing widget's value.  Two rounds:

- *cold*: the SVG caches are cleared before every action, so each one runs the
  leafkit code, builds the drawing and runs Graphviz's ``dot``;
- *warm*: the same sequence again, as a learner toggling back and forth
  between states already seen; renderings are cached by DOT source.

Browser side (``--browser``, needs chromium + playwright): the same LeafExplorer
toggles done in JupyterLab in headless Chromium, timed from the click until
the SVG in the page changed (kernel round trip and browser paint included).

The target is a median of at most 150 ms.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from leafkit.viz import clear_svg_cache, dot_available  # noqa: E402
from leafkit.widgets import (BackwardExplorer, DetachExplorer, GradModeExplorer, LeafExplorer,  # noqa: E402
                             LeafQuiz)
from leafkit.widgets import _view  # noqa: E402

TARGET_MS = 150.0


def _set(ctl, value):
    return lambda: setattr(ctl, "value", value)


def leaf_actions(ex):
    """The lesson's LeafExplorer walk: requires_grad, before/after, and chains of 1-3 steps."""
    acts = []
    for steps in (["clone()"], ["cuda()"], ["cuda()", "detach()"], ["clone()", "detach()"],
                  ["detach()", "clone()"], ["+ 2", "* 3", "detach()"], ["cuda()", "to('cpu')", "+ 2"]):
        for i in range(3):
            v = steps[i] if i < len(steps) else "(none)"
            acts.append((f"step {i + 1} = {v}", _set(ex.steps[i], v)))
        acts.append(("requires_grad off", _set(ex.requires_grad, False)))
        acts.append(("after the chain", _set(ex.when, "after")))
        acts.append(("requires_grad on", _set(ex.requires_grad, True)))
        acts.append(("before the chain", _set(ex.when, "before")))
    return acts


def grad_mode_actions(ex):
    acts = []
    for op in ("*", "/", "+", "-"):
        acts.append((f"operator {op}", _set(ex.op, op)))
        for ctl, name in ((ex.y_requires_grad, "y"), (ex.no_grad, "no_grad"), (ex.x_requires_grad, "x")):
            acts.append((f"{name} on", _set(ctl, True)))
            acts.append((f"{name} off", _set(ctl, False)))
    return acts


def backward_actions(ex):
    acts = [("z.retain_grad()", _set(ex.retain["z"], True)), ("hook on y", _set(ex.hook_on, "y")),
            ("retain_graph", _set(ex.retain_graph, True)), ("backward 1", ex.backward_button.click),
            ("backward 2", ex.backward_button.click), ("no retain_graph", _set(ex.retain_graph, False)),
            ("backward 3 (frees)", ex.backward_button.click), ("backward 4 (error)", ex.backward_button.click),
            ("y.retain_grad()", _set(ex.retain["y"], True)), ("hook on t", _set(ex.hook_on, "t")),
            ("Reset", ex.reset_button.click)]
    return acts


def detach_actions(ex):
    b = ex.buttons
    return [("y.add_(1)", b["y.add_(1)"].click), ("z = x ** 2", b["z = x ** 2"].click),
            ("y.mul_(2)", b["y.mul_(2)"].click), ("z.backward() (error)", b["z.backward()"].click),
            ("x.add_(1) (error)", b["x.add_(1)"].click), ("Reset", ex.reset_button.click),
            ("z = x ** 2", b["z = x ** 2"].click), ("z.backward()", b["z.backward()"].click),
            ("y.zero_()", b["y.zero_()"].click)]


def quiz_actions(ex):
    def wrong_answers():
        for n, (a, b) in ex.answers.items():
            a.value, b.value = "False", "False"

    return [("answer all False", wrong_answers), ("Check (misses drawn)", ex.check_button.click),
            ("Reset", ex.reset_button.click)]


CASES = [("LeafExplorer", LeafExplorer, leaf_actions), ("GradModeExplorer", GradModeExplorer, grad_mode_actions),
         ("BackwardExplorer", BackwardExplorer, backward_actions), ("DetachExplorer", DetachExplorer, detach_actions),
         ("LeafQuiz", LeafQuiz, quiz_actions)]


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


def run_kernel_side(repeat: int = 1) -> dict:
    """``{explorer: {"cold": [ms], "warm": [ms], "redraws": n}}``."""
    out = {}
    for name, cls, make in CASES:
        cold, warm = [], []
        for _ in range(repeat):
            ex = cls()
            acts = make(ex)
            for _, act in acts:  # cold: no cached rendering
                cold.append(_time(ex, act, cold=True))
            ex = cls()
            acts = make(ex)
            for _, act in acts:  # prime the cache with this sequence...
                act()
            ex = cls()
            acts = make(ex)
            for _, act in acts:  # ...then the same toggles again
                warm.append(_time(ex, act, cold=False))
            assert ex.internal_errors == [], ex.internal_errors
        out[name] = {"cold": [t for t in cold if t is not None], "warm": [t for t in warm if t is not None],
                     "actions": len(acts)}
    return out


def _fmt(xs):
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
    return f"{statistics.median(xs):7.1f} {p90:7.1f} {xs[-1]:7.1f}"


def report(results: dict) -> float:
    print(f"{'explorer':18} {'n':>4}   {'cold: median p90 max (ms)':>26}   {'warm: median p90 max (ms)':>26}")
    all_cold, all_warm = [], []
    for name, r in results.items():
        print(f"{name:18} {len(r['cold']):4}   {_fmt(r['cold']):>26}   {_fmt(r['warm']):>26}")
        if name != "LeafQuiz":  # the quiz's Check draws up to 11 pictures at once: reported, not in the median
            all_cold += r["cold"]
            all_warm += r["warm"]
    med_cold = statistics.median(all_cold)
    med_warm = statistics.median(all_warm)
    print(f"{'all explorers':18} {len(all_cold):4}   {_fmt(all_cold):>26}   {_fmt(all_warm):>26}")
    ok = "OK" if med_cold <= TARGET_MS else "OVER"
    print(f"\nmedian toggle -> redrawn SVG: cold {med_cold:.1f} ms, warm {med_warm:.1f} ms "
          f"(target <= {TARGET_MS:.0f} ms): {ok}")
    return med_cold


def run_browser_side(n_toggles: int = 24) -> list:
    """Median ms from a click in JupyterLab to the changed SVG in the page (LeafExplorer)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
    import tempfile
    from pathlib import Path

    import explorer_driver as drv
    from lab_harness import CHROMIUM_ARGS, REPO, JupyterServer, Lab, browser_unavailable_reason, find_chromium, \
        write_notebook

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
            root = drv.explorer(lab, "leaf")
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
                    action = (lambda v=rg: drv.set_checkbox(root, "requires_grad=True", v))
                else:
                    k = 1 + (i // 3) % 3
                    choice = next(c for j, c in enumerate(sequence * 2) if j >= i % 6 and c != current[k])
                    current[k] = choice
                    action = (lambda k=k, c=choice: drv.select(root, f"step {k}", c))
                page.evaluate("(el) => { window.__lkT0 = performance.now(); window.__lkDone = null;"
                              " const before = el.innerHTML;"
                              " const obs = new MutationObserver(() => { if (el.innerHTML !== before &&"
                              " el.querySelector('svg')) { window.__lkDone = performance.now(); obs.disconnect(); }});"
                              " obs.observe(el, {childList: true, subtree: true, characterData: true}); }", handle)
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
        print(f"\nbrowser (JupyterLab, headless Chromium), LeafExplorer, {len(times)} toggles: "
              f"click -> new SVG in the page: median {statistics.median(times):.1f} ms, "
              f"max {max(times):.1f} ms")
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="run every sequence this many times")
    ap.add_argument("--browser", action="store_true", help="also time toggles in JupyterLab (headless Chromium)")
    args = ap.parse_args(argv)
    if not dot_available():
        print("Graphviz's dot is not installed: the explorers show the text fallback; nothing to time.")
        return 1
    results = run_kernel_side(args.repeat)
    med = report(results)
    if args.browser:
        run_browser_side()
    return 0 if med <= TARGET_MS else 2


if __name__ == "__main__":
    sys.exit(main())
