"""``scripts/api_surface.py``: every public name of PyTorch's everyday families that leafkit lacks is put under a
reason (the groups of the README's "What leafkit leaves out"), so that section stays true."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "api_surface.py"


def _load():
    spec = importlib.util.spec_from_file_location("api_surface", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_missing_name_has_a_reason():
    mod = _load()
    unexplained = {
        family: sorted(n for n in want - have if mod.reason(n) is None) for family, want, have in mod.compare()
    }
    assert not any(unexplained.values()), unexplained


def test_the_readme_names_every_reason():
    """Each group of LEFT_OUT appears in the README's "What leafkit leaves out" (by its first words)."""
    mod = _load()
    readme = (SCRIPT.parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### What leafkit leaves out", 1)[1].split("\n## ", 1)[0]
    for why, _, _ in mod.LEFT_OUT:
        head = why.split(":")[0].split(" (")[0]
        assert head.lower() in section.lower(), head


def test_the_script_runs(capsys):
    mod = _load()
    assert mod.main(["--counts"]) == 0
    assert "torch.Tensor" in capsys.readouterr().out
