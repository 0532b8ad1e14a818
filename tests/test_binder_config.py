"""Binder (repo2docker) configuration in binder/.

* the files themselves (runtime, apt, exact pins, local install line, launch link);
* the Dockerfile repo2docker would build (``repo2docker --no-build --debug``
  prints it without talking to Docker), when repo2docker is installed;
* ``slow``: a fresh venv built from binder/requirements.txt runs every lesson.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
PINNED = ["numpy", "ipywidgets", "graphviz", "jupyterlab", "matplotlib", "scikit-learn", "ipykernel"]
LAUNCH = "urlpath=lab/tree/lessons/00_start_here.ipynb"


def _requirements() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [l.split("#", 1)[0].strip() for l in lines if l.split("#", 1)[0].strip()]


def test_runtime_is_python_311():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


def test_apt_installs_graphviz():
    pkgs = (BINDER / "apt.txt").read_text().split()
    assert "graphviz" in pkgs


def test_requirements_pinned_and_install_repo():
    reqs = _requirements()
    pins = dict(re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", r).groups() for r in reqs if "==" in r)
    for name in PINNED:
        assert name in pins, f"{name} is not pinned with == in binder/requirements.txt"
    # pip resolves "." against its working directory, which repo2docker sets to
    # the repository root (not binder/): so "." / "-e ." and never "..".
    assert reqs[-1] in ("-e .", "."), "the last line must install this repository"


def test_launch_link_documented():
    assert LAUNCH in (BINDER / "README.md").read_text()


def _repo2docker_cmd() -> list[str] | None:
    exe = shutil.which("repo2docker") or shutil.which("jupyter-repo2docker")
    if exe:
        return [exe]
    import importlib.util

    if importlib.util.find_spec("repo2docker") is not None:
        return [sys.executable, "-m", "repo2docker"]
    return None


def test_repo2docker_generated_dockerfile(tmp_path):
    cmd = _repo2docker_cmd()
    if cmd is None:
        pytest.skip("repo2docker is not installed (pip install -e '.[test]')")
    proc = subprocess.run(
        [*cmd, "--no-build", "--debug", str(REPO)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "FROM " in out, f"no Dockerfile in repo2docker output:\n{out}"

    # Python 3.11 from runtime.txt
    assert re.search(r"python=3\.11\b", out) or "environment.py-3.11-" in out, out
    # apt.txt → apt-get install ... graphviz
    assert re.search(r"apt-get install[^\n]*\bgraphviz\b", out), out
    # requirements.txt → pip install -r binder/requirements.txt ...
    m = re.search(r'pip install[^\n]*-r "?binder/requirements\.txt"?', out)
    assert m, out
    # ... after the whole repo is copied in (needed by the local "-e ." line),
    # from the repository root.
    copy_all = re.search(r"COPY [^\n]*\bsrc/ \$\{REPO_DIR\}/", out)
    assert copy_all and copy_all.start() < m.start(), "requirements must be installed after the repo is copied"
    assert "WORKDIR ${REPO_DIR}" in out
    # postBuild runs after the install: it trusts the lessons and turns the news pop-up off
    post = out.find("binder/postBuild")
    assert post > m.start(), "binder/postBuild must run after the requirements are installed"


RUN_LESSONS = textwrap.dedent(
    """
    import sys, pathlib, nbformat
    from nbclient import NotebookClient
    failed = []
    for path in map(pathlib.Path, sys.argv[1:]):
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        try:
            client.execute()
            print("ok  ", path.name, flush=True)
        except Exception as exc:
            print("FAIL", path.name, type(exc).__name__, str(exc)[-2000:], flush=True)
            failed.append(path.name)
    sys.exit(1 if failed else 0)
    """
)


@pytest.mark.slow
def test_binder_env_runs_every_lesson(tmp_path):
    lessons = sorted((REPO / "lessons").glob("*.ipynb"))
    if not lessons:
        pytest.skip("no lessons/*.ipynb yet")
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")  # no user kernelspecs: python3 = this venv
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "jupyter-config")
    # Same working directory as repo2docker: the repository root.
    pip = subprocess.run(
        [str(py), "-m", "pip", "install", "-r", "binder/requirements.txt"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert pip.returncode == 0, pip.stdout[-4000:] + pip.stderr[-4000:]
    run = subprocess.run(
        [str(py), "-c", RUN_LESSONS, *map(str, lessons)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=3600,
    )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-4000:]
