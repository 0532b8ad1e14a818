"""The glibc malloc tuning applied at import, and its opt-out."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import leafkit._malloc as m


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc tuning is Linux-only")
def test_applied_at_import_on_glibc():
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    assert m.applied


def test_opt_out_by_environment():
    code = "import leafkit, leafkit._malloc as m; print(m.applied)"
    env = dict(os.environ, LEAFKIT_MALLOC_TUNING="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
