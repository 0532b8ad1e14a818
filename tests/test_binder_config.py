"""Binder (repo2docker) configuration in binder/.

* the files themselves: runtime, apt packages (graphviz, a CJK font), requirements that
  pin what the lessons need and nothing the base image has, no local path, postBuild;
* the Dockerfile repo2docker would build (``repo2docker --no-build --debug``
  prints it without talking to Docker), when repo2docker is installed: the
  requirements are installed before the repository is copied (a cached layer);
* ``slow``: a fresh venv built the way the image is built runs every lesson.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
#: What the lessons need beyond the base image, pinned exactly (scripts/binder_pins.py keeps them).
PINNED = ["numpy", "graphviz", "matplotlib", "scikit-learn", "tqdm"]
#: What Binder's base image (repo2docker's own environment) already provides: never listed.
BASE_IMAGE = ["jupyterlab", "notebook", "jupyter-server", "ipykernel", "ipywidgets", "jupyterlab-widgets"]
LAUNCH = "urlpath=lab/tree/lessons/00_start_here.ipynb"


def _requirements() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def _name(requirement: str) -> str:
    return re.split(r"[=<>!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_runtime_is_python_311():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


def test_apt_installs_graphviz_and_a_cjk_font():
    pkgs = (BINDER / "apt.txt").read_text().split()
    assert "graphviz" in pkgs
    assert {"fonts-wqy-zenhei", "fonts-noto-cjk"} & set(pkgs), "the Chinese drawings need a CJK font"


def test_requirements_pin_the_lessons_needs_and_nothing_of_the_base_image():
    reqs = _requirements()
    pins = dict(re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", r).groups() for r in reqs if "==" in r)
    assert sorted(pins) == sorted(PINNED), reqs
    assert all("==" in r for r in reqs), f"every line is an exact pin: {reqs}"
    assert not {_name(r) for r in reqs} & set(BASE_IMAGE), "the base image provides these: do not re-resolve them"


def test_requirements_have_no_local_path():
    """A local path ("-e .", ".") would make repo2docker install them only after copying the repository."""
    reqs = _requirements()
    assert not any(r.startswith(("-e", "--editable", ".", "/", "-r", "-c")) for r in reqs), reqs
    if importlib.util.find_spec("repo2docker") is not None:
        from repo2docker.utils import is_local_pip_requirement

        assert not any(is_local_pip_requirement(r) for r in reqs), reqs


def test_requirements_and_base_image_cover_leafkit_dependencies():
    """postBuild installs leafkit with --no-deps, so its runtime dependencies must already be there."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    have = {_name(r) for r in _requirements()} | set(BASE_IMAGE)
    assert {_name(d) for d in deps} <= have, deps


def test_post_build_installs_leafkit_and_trusts_the_lessons():
    post = BINDER / "postBuild"
    text = post.read_text()
    assert os.access(post, os.X_OK) or text.startswith("#!"), "postBuild must be executable (or have a shebang)"
    commands = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    install = [c for c in commands if "pip install" in c]
    assert install == ["python -m pip install --no-cache-dir --no-deps ."], install
    assert any(c.startswith("jupyter trust") and "lessons/*.ipynb" in c and "lessons/zh/*.ipynb" in c for c in commands)


def test_launch_link_documented():
    assert LAUNCH in (BINDER / "README.md").read_text()


def _repo2docker_cmd() -> list[str] | None:
    exe = shutil.which("repo2docker") or shutil.which("jupyter-repo2docker")
    if exe:
        return [exe]
    if importlib.util.find_spec("repo2docker") is not None:
        return [sys.executable, "-m", "repo2docker"]
    return None


def test_repo2docker_generated_dockerfile(tmp_path):
    cmd = _repo2docker_cmd()
    if cmd is None:
        pytest.skip("repo2docker is not installed (pip install -e '.[test]')")
    proc = subprocess.run(
        [*cmd, "--no-build", "--debug", str(REPO)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "FROM " in out, f"no Dockerfile in repo2docker output:\n{out}"

    # Python 3.11 from runtime.txt
    assert re.search(r"python=3\.11\b", out) or "environment.py-3.11-" in out, out
    # apt.txt → apt-get install ... graphviz fonts-wqy-zenhei
    assert re.search(r"apt-get install[^\n]*\bgraphviz\b", out), out
    assert re.search(r"apt-get install[^\n]*\bfonts-wqy-zenhei\b", out), out
    # requirements.txt → pip install -r binder/requirements.txt, BEFORE the whole repository is copied:
    # only requirements.txt is copied in first, so the layer is reused while that file is unchanged.
    m = re.search(r'pip install[^\n]*-r "?binder/requirements\.txt"?', out)
    assert m, out
    copy_all = re.search(r"COPY [^\n]*\bsrc/ \$\{REPO_DIR\}/", out)
    assert copy_all, out
    assert m.start() < copy_all.start(), "the requirements must be installed before the repository is copied"
    assert re.search(r"COPY [^\n]*binder/requirements\.txt", out[: m.start()]), "only the file is copied first"
    # postBuild runs after the copy: it installs leafkit, trusts the lessons and turns the news pop-up off
    post = out.find("binder/postBuild")
    assert post > copy_all.start(), "binder/postBuild must run after the repository is copied"


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
    lessons = sorted((REPO / "lessons").glob("*.ipynb")) + sorted((REPO / "lessons" / "zh").glob("*.ipynb"))
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

    def pip(*args: str) -> None:
        # Same working directory as repo2docker: the repository root.
        proc = subprocess.run(
            [str(py), "-m", "pip", "install", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800
        )
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]

    pip("ipykernel", "ipywidgets>=8", "nbclient", "nbformat")  # what the base image has (and the runner needs)
    pip("-r", "binder/requirements.txt")  # the cached layer
    pip("--no-cache-dir", "--no-deps", ".")  # postBuild
    run = subprocess.run(
        [str(py), "-c", RUN_LESSONS, *map(str, lessons)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-4000:]
