"""Fixtures for the JupyterLab browser tests; the helper API is documented in
lab_harness.py (module docstring).

Every test collected under tests/browser/ gets the ``browser`` marker.  When
chromium or the playwright package is missing the tests are skipped, except
with CI=true, where that is an error.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_harness import (  # noqa: E402
    ARTIFACTS,
    CHROMIUM_ARGS,
    REPO,
    JupyterServer,
    Lab,
    browser_unavailable_reason,
    find_chromium,
)

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselection sees the items
def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def _require_browser() -> None:
    reason = browser_unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run under CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def jupyter_server():
    _require_browser()  # no point starting a server nobody can look at
    server = JupyterServer(REPO).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
    except Exception:
        pw.stop()
        raise
    try:
        yield b
    finally:
        b.close()
        pw.stop()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    pg = context.new_page()
    pg.console_errors = []  # type: ignore[attr-defined]
    pg.on("console", lambda m: m.type == "error" and pg.console_errors.append(m.text))
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            shots = ARTIFACTS / "screenshots"
            shots.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
            try:
                pg.screenshot(path=str(shots / f"FAILED-{name}.png"))
            except Exception:
                pass
        context.close()


@pytest.fixture
def lab(page, jupyter_server):
    yield Lab(page, jupyter_server)
    jupyter_server.shutdown_kernels()


@pytest.fixture
def scratch_dir():
    base = REPO / "artifacts" / "tmp"  # must be inside the server's root_dir
    base.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="nb-", dir=base))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
