"""Drive JupyterLab + ipywidgets in headless Chromium (Playwright, sync API).

Used by every test under tests/browser/.  The fixtures live in
tests/browser/conftest.py; this module holds the machinery and the helper API.

Fixtures
--------
``jupyter_server`` (session)
    A :class:`JupyterServer`: ``jupyter lab --no-browser`` on a free port with a
    random token, ``root_dir`` = the repository root, own process group, own
    throw-away workspace/settings/runtime dirs; killed (that process group
    only) at the end of the session.  ``server.url("lab/tree/x.ipynb")`` builds
    an authenticated URL; ``server.api("GET", "api/kernels")`` calls the REST API.
``browser`` (session)
    A Playwright ``Browser`` on /usr/bin/chromium (override: env
    ``LEAFKIT_CHROMIUM``).  Missing chromium or playwright → the test is
    skipped, except with ``CI=true`` where it FAILS.
``page`` (function)
    A fresh browser context + page (1400x1000).  On test failure a screenshot
    goes to ``artifacts/screenshots/FAILED-<test>.png``.
``lab`` (function)
    A :class:`Lab` bound to ``page`` and ``jupyter_server``.  At teardown all
    kernel sessions of the server are shut down.
``scratch_dir`` (function)
    A temporary folder *inside* the server root (``artifacts/tmp/<random>``,
    git-ignored) for notebooks a test writes; removed afterwards.

Lab API (all waits raise ``TimeoutError`` / ``LookupError`` with a clear message)
-------------------------------------------------------------------------------
``lab.open_notebook(path)``
    Open a notebook (path relative to the repo root, or absolute under it) in a
    freshly loaded JupyterLab (``?reset`` workspace) and wait for its kernel.
``lab.run_all(timeout=120)``
    Run all cells (JupyterLab command ``notebook:run-all-cells`` through
    ``window.jupyterapp``, exposed with ``--expose-app-in-browser``; falls back
    to the menu *Run → Run All Cells*) and wait until the kernel is idle.
``lab.run_command(command_id, **args)``
    Execute any JupyterLab command, e.g. ``"kernelmenu:restart"``.
``lab.wait_for_idle(timeout=120)``
    Wait until the kernel is idle and no cell shows ``[*]`` (stable for 0.5 s).
``lab.save()``
    Save the notebook (``docmanager:save``).
``lab.screenshot(name)``  → Path
    PNG of the viewport at ``artifacts/screenshots/<name>.png``.
``lab.widget(description, index=0, timeout=30)``  → Locator
    The ipywidgets view whose description matches: the label of a slider /
    dropdown / text, the text of a Button / ToggleButton, the text next to a
    Checkbox.  Comparison ignores case, surrounding blanks, zero-width spaces
    and a trailing ``:``.  ``index`` picks among several matches (document
    order).  ``lab.widget_descriptions()`` lists what is on screen.
``lab.click_button(description)``
``lab.toggle_checkbox(description)``  → new bool state
``lab.set_checkbox(description, value)`` / ``lab.checkbox_value(description)``
``lab.set_toggle_button(description, value)``
``lab.select_dropdown(description, option_label)``
``lab.choose_radio(description, option_label)``
``lab.set_slider(description, value)``  (types into the editable readout)
``lab.set_text(description, value)``     (Text / Textarea / number boxes)
``lab.widget_text(description)``          → visible text of that widget
``lab.cell_output_text(index)``           → text of cell ``index``'s outputs
``lab.output_text()``                     → text of all outputs of the notebook
``lab.wait_for_output(text, cell=None, timeout=30)``
    Wait until ``text`` appears in the outputs (of one cell, or anywhere).
``lab.error_outputs()``  → list[str]
    Texts of stderr / traceback outputs (assert ``== []`` after ``run_all``).

Module helpers
--------------
``write_notebook(path, cells)`` writes a python3 notebook; ``cells`` are
strings (code) or ``("markdown", text)`` tuples.
``browser_unavailable_reason()`` → None or why the browser tests cannot run.

Example::

    def test_explorer(lab):
        lab.open_notebook("lessons/03_hooks.ipynb")
        lab.run_all()
        assert lab.error_outputs() == []
        lab.toggle_checkbox("requires_grad")
        lab.wait_for_output("is_leaf: True")
        lab.screenshot("hooks-explorer")
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("LEAFKIT_ARTIFACTS", REPO / "artifacts"))
SCREENSHOTS = ARTIFACTS / "screenshots"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # small /dev/shm in containers
]

# JupyterLab user settings for the test server: no news/update toasts that
# could cover widgets, no autosave races, no scroll virtualisation (so every
# cell is in the DOM and can be found).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
    },
}


def find_chromium() -> str | None:
    override = os.environ.get("LEAFKIT_CHROMIUM")
    if override:
        return override if os.access(override, os.X_OK) else None
    for cand in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        path = cand if os.path.isabs(cand) else shutil.which(cand)
        if path and os.access(path, os.X_OK):
            return path
    return None


def browser_unavailable_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "python package 'playwright' is not installed (pip install -e '.[test]')"
    if find_chromium() is None:
        return "chromium not found at /usr/bin/chromium (apt-get install -y chromium) or $LEAFKIT_CHROMIUM"
    return None


def write_notebook(path: str | os.PathLike, cells: Iterable[Any]) -> Path:
    """Write a minimal nbformat-4 notebook with a python3 kernelspec."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for cell in cells:
        if isinstance(cell, tuple):
            kind, src = cell
            nb.cells.append(
                nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src)
            )
        else:
            nb.cells.append(nbformat.v4.new_code_cell(cell))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


# --------------------------------------------------------------- server ----
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterServer:
    """``jupyter lab`` in its own process group; see module docstring."""

    def __init__(self, root_dir: Path = REPO, startup_timeout: float = 90.0):
        self.root_dir = Path(root_dir).resolve()
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.base_url = f"http://127.0.0.1:{self.port}/"
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self._home = Path(tempfile.mkdtemp(prefix="leafkit-lab-"))
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / "jupyter-lab-test.log"

    # URLs / REST
    def url(self, path: str = "lab", **query: str) -> str:
        query = {"token": self.token, **query}
        return self.base_url + path.lstrip("/") + "?" + urllib.parse.urlencode(query)

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path.lstrip("/"), data=data, method=method)
        req.add_header("Authorization", f"token {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    # lifecycle
    def start(self) -> JupyterServer:
        settings = self._home / "user-settings"
        for rel, value in LAB_SETTINGS.items():
            f = settings / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(value))
        env = dict(os.environ)
        env.update(
            JUPYTER_RUNTIME_DIR=str(self._home / "runtime"),
            JUPYTER_CONFIG_DIR=str(self._home / "config"),  # ignore the user's ~/.jupyter
            JUPYTER_DATA_DIR=str(self._home / "data"),  # ... and user kernelspecs: python3 = this env
            IPYTHONDIR=str(self._home / "ipython"),
            PYTHONUNBUFFERED="1",
        )
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            f"--port={self.port}",
            "--ip=127.0.0.1",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",  # = ServerApp.token (deprecated alias)
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.open_browser=False",
            "--expose-app-in-browser",
            # the lab a learner gets (`make lab`): jupytext's server extension off, so a lesson opens
            # without its .md source's exercise solutions
            "--ServerApp.jpserver_extensions=jupyterlab_jupytext=False",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={self._home / 'workspaces'}",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.root_dir,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # own process group
        )
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "api/status", timeout=2)
                self.api("GET", "lab/api/settings", timeout=5)
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"jupyter lab did not answer within {self.startup_timeout}s:\n{self.log_tail()}")
            time.sleep(0.25)

    def shutdown_kernels(self) -> None:
        try:
            for s in self.api("GET", "api/sessions"):
                self.api("DELETE", f"api/sessions/{s['id']}")
            for k in self.api("GET", "api/kernels"):
                self.api("DELETE", f"api/kernels/{k['id']}")
        except Exception:
            pass

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            self.shutdown_kernels()  # kernels live in their own sessions; stop them via the server
            pgid = proc.pid  # start_new_session=True => pgid == pid
            for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
                try:
                    os.killpg(pgid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if getattr(self, "_log", None):
            self._log.close()
        shutil.rmtree(self._home, ignore_errors=True)

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


# ------------------------------------------------------------------ lab ----
_JS_FIND_WIDGETS = r"""
([wanted, mark]) => {
  const norm = (s) => (s || '').replace(/[\u200b\u00a0]/g, ' ').replace(/\s+/g, ' ')
                               .trim().replace(/:$/, '').trim().toLowerCase();
  const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const descOf = (el) => {
    const cl = el.classList;
    if (cl.contains('widget-button') || cl.contains('widget-toggle-button')) return el.innerText;
    if (cl.contains('widget-checkbox')) {
      const s = el.querySelector(':scope > .widget-label-basic > span');
      const lbl = el.querySelector(':scope > .widget-label');
      return (s && norm(s.textContent)) ? s.textContent : (lbl ? lbl.textContent : null);
    }
    const lbl = el.querySelector(':scope > label.widget-label');  // not a Label widget (a div) in a Box
    return lbl ? lbl.textContent : null;
  };
  document.querySelectorAll('[data-leafkit-widget]').forEach(e => e.removeAttribute('data-leafkit-widget'));
  const out = [];
  let n = 0;
  // widget views: .jupyter-widgets, plus views that lack it (e.g. RadioButtons' .widget-radio)
  const isView = (el) => el.classList.contains('jupyter-widgets')
    || Array.from(el.classList).some(c => c.startsWith('widget-'));
  for (const el of document.querySelectorAll('.jupyter-widgets, .lm-Widget')) {
    if (!isView(el) || !visible(el)) continue;
    const d = descOf(el);
    if (d === null || !norm(d)) continue;
    out.push(norm(d));
    if (wanted !== null && norm(d) === norm(wanted)) {
      el.setAttribute('data-leafkit-widget', mark + '-' + n);
      n += 1;
    }
  }
  return {descriptions: out, matches: n};
}
"""

_JS_KERNEL_STATE = r"""
async () => {
  const app = window.jupyterapp;
  if (!app) return {app: false};
  const w = app.shell.currentWidget;
  if (!w || !w.sessionContext) return {app: true, notebook: false};
  const sc = w.sessionContext;
  const k = sc.session && sc.session.kernel;
  const busyPrompts = Array.from(w.node.querySelectorAll('.jp-InputPrompt'))
    .filter(p => /\[\*\]/.test(p.textContent)).length;
  return {app: true, notebook: true, ready: sc.isReady, kernel: k ? k.status : null,
          pending: sc.hasPendingInput ? sc.hasPendingInput : false, busyPrompts};
}
"""


class Lab:
    """High-level JupyterLab helpers around a Playwright page; see module docstring."""

    def __init__(self, page, server: JupyterServer):
        self.page = page
        self.server = server
        self._mark = 0

    # -- navigation ---------------------------------------------------------
    def _rel(self, path: str | os.PathLike) -> str:
        p = Path(path)
        if p.is_absolute():
            p = p.resolve().relative_to(self.server.root_dir)
        return p.as_posix()

    def open_notebook(self, path: str | os.PathLike, timeout: float = 90) -> None:
        rel = self._rel(path)
        if not (self.server.root_dir / rel).exists():
            raise FileNotFoundError(self.server.root_dir / rel)
        url = self.server.url("lab/tree/" + urllib.parse.quote(rel), reset="")
        self.page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
        self.page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.sessionContext",
            timeout=timeout * 1000,
        )
        name = rel.rsplit("/", 1)[-1]
        self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.wait_for(
            state="visible", timeout=timeout * 1000
        )
        self.page.locator(f'.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current:has-text("{name}")').first.wait_for(
            timeout=timeout * 1000
        )
        self.wait_for_kernel(timeout=timeout)

    def wait_for_kernel(self, timeout: float = 90) -> None:
        """Wait until the current notebook's kernel is started and idle."""
        self.page.wait_for_function(
            """async () => { const w = window.jupyterapp.shell.currentWidget;
                 if (!w || !w.sessionContext) return false;
                 await w.sessionContext.ready;
                 const k = w.sessionContext.session && w.sessionContext.session.kernel;
                 return !!k && k.status === 'idle'; }""",
            timeout=timeout * 1000,
            polling=250,
        )

    def run_command(self, command_id: str, **args: Any) -> Any:
        return self.page.evaluate(
            "async ([id, args]) => { const r = await window.jupyterapp.commands.execute(id, args);"
            " return (r === undefined || r === null || typeof r !== 'object') ? r : null; }",
            [command_id, args],
        )

    def run_all(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        has_app = self.page.evaluate("() => !!window.jupyterapp")
        if has_app:
            # The command's promise resolves once every cell has finished (or
            # execution stopped at an error); poll for it rather than awaiting
            # inside evaluate, so a stuck cell ends in a clear TimeoutError.
            self.page.evaluate(
                "() => { window.__leafkitRunAll = 'running';"
                " window.jupyterapp.commands.execute('notebook:run-all-cells').then("
                "  () => { window.__leafkitRunAll = 'done'; },"
                "  (e) => { window.__leafkitRunAll = 'error: ' + e; }); }"
            )
            try:
                self.page.wait_for_function(
                    "() => window.__leafkitRunAll !== 'running'", timeout=timeout * 1000, polling=100
                )
            except Exception as exc:
                raise TimeoutError(f"'Run All Cells' did not finish within {timeout}s") from exc
            state = self.page.evaluate("() => window.__leafkitRunAll")
            if state != "done":
                raise RuntimeError(f"notebook:run-all-cells failed: {state}")
        else:  # fallback: the menu
            self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            self.page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
        self.wait_for_idle(timeout=max(5.0, deadline - time.monotonic()))

    def wait_for_idle(self, timeout: float = 120, settle: float = 0.5) -> None:
        deadline = time.monotonic() + timeout
        calm_since = None
        state: dict = {}
        while time.monotonic() < deadline:
            state = self.page.evaluate(_JS_KERNEL_STATE)
            if not state.get("app"):
                quiet = (
                    self._rest_kernels_idle()
                    and self.page.locator(
                        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputPrompt", has_text="[*]"
                    ).count()
                    == 0
                )
            else:
                quiet = state.get("kernel") == "idle" and state.get("busyPrompts") == 0
            if quiet:
                calm_since = calm_since or time.monotonic()
                if time.monotonic() - calm_since >= settle:
                    return
            else:
                calm_since = None
            time.sleep(0.1)
        raise TimeoutError(f"kernel not idle after {timeout}s: {state}")

    def _rest_kernels_idle(self) -> bool:
        try:
            return all(k.get("execution_state") == "idle" for k in self.server.api("GET", "api/kernels"))
        except Exception:
            return False

    def save(self) -> None:
        self.run_command("docmanager:save")

    # -- artefacts ----------------------------------------------------------
    def screenshot(self, name: str, full_page: bool = False) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "screenshot"
        path = SCREENSHOTS / (safe if safe.endswith(".png") else safe + ".png")
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    # -- widgets ------------------------------------------------------------
    def widget_descriptions(self) -> list[str]:
        return self.page.evaluate(_JS_FIND_WIDGETS, [None, "none"])["descriptions"]

    def widget(self, description: str, index: int = 0, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while True:
            self._mark += 1
            mark = f"m{self._mark}"
            res = self.page.evaluate(_JS_FIND_WIDGETS, [description, mark])
            if res["matches"] > index:
                return self.page.locator(f'[data-leafkit-widget="{mark}-{index}"]')
            if time.monotonic() > deadline:
                raise LookupError(
                    f"no ipywidget with description {description!r} (index {index}); "
                    f"visible widget descriptions: {res['descriptions']}"
                )
            time.sleep(0.2)

    def widget_text(self, description: str, **kw) -> str:
        return self.widget(description, **kw).inner_text()

    def click_button(self, description: str, **kw) -> None:
        self.widget(description, **kw).click()

    def checkbox_value(self, description: str, **kw) -> bool:
        return self.widget(description, **kw).locator("input[type=checkbox]").is_checked()

    def toggle_checkbox(self, description: str, **kw) -> bool:
        box = self.widget(description, **kw).locator("input[type=checkbox]")
        before = box.is_checked()
        box.click()
        self.page.wait_for_function("([el, v]) => el.checked === v", arg=[box.element_handle(), not before])
        return not before

    def set_checkbox(self, description: str, value: bool, **kw) -> None:
        if self.checkbox_value(description, **kw) != bool(value):
            self.toggle_checkbox(description, **kw)

    def set_toggle_button(self, description: str, value: bool, **kw) -> None:
        btn = self.widget(description, **kw)
        if ("mod-active" in (btn.get_attribute("class") or "").split()) != bool(value):
            btn.click()
            want = "true" if value else "false"
            self.page.wait_for_function(
                f"el => el.classList.contains('mod-active') === {want}", arg=btn.element_handle()
            )

    def select_dropdown(self, description: str, option_label: str, **kw) -> None:
        self.widget(description, **kw).locator("select").select_option(label=option_label)

    def choose_radio(self, description: str, option_label: str, **kw) -> None:
        w = self.widget(description, **kw)
        w.locator("label", has_text=option_label).locator("input[type=radio]").check()

    def set_slider(self, description: str, value: Any, **kw) -> None:
        readout = self.widget(description, **kw).locator(".widget-readout").first
        readout.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(str(value))
        self.page.keyboard.press("Enter")

    def set_text(self, description: str, value: Any, **kw) -> None:
        box = self.widget(description, **kw).locator("input, textarea").first
        box.fill(str(value))
        box.press("Enter")
        box.blur()

    # -- outputs ------------------------------------------------------------
    def _cells(self):
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")

    def cell_output_text(self, index: int) -> str:
        out = self._cells().nth(index).locator(".jp-OutputArea")
        return out.inner_text() if out.count() else ""

    def output_text(self) -> str:
        areas = self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea")
        return "\n".join(areas.all_inner_texts())

    def wait_for_output(self, text: str, cell: int | None = None, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.output_text() if cell is None else self.cell_output_text(cell)
            if text in got:
                return
            time.sleep(0.2)
        where = "the notebook" if cell is None else f"cell {cell}"
        raise TimeoutError(f"{text!r} did not appear in the outputs of {where} within {timeout}s; got:\n{got}")

    def error_outputs(self) -> list[str]:
        sel = (
            ".jp-NotebookPanel:not(.lm-mod-hidden) "
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
        )
        return self.page.locator(sel).all_inner_texts()
