"""Keep large freed buffers for reuse (glibc only): fewer page faults for big temporaries.

Every NumPy operation on a large tensor allocates a fresh result buffer, and
autograd's backward allocates as many again.  With glibc's default settings a
buffer of a few MiB is ``mmap``-ed from the kernel and unmapped when freed,
so the next one page-faults all over again: on 1,000,000-element float32
tensors that doubled the time of an elementwise chain (bench/engine.py, W2:
42 ms instead of 19 ms on a 2-core machine).  PyTorch's own allocator avoids
the same cost.

At import, leafkit raises glibc's mmap threshold to 64 MiB and its trim
threshold to 128 MiB (``mallopt``), so such buffers are reused from the heap.
The process may then keep up to about 128 MiB of freed memory for reuse.
Set ``LEAFKIT_MALLOC_TUNING=0`` before importing leafkit to leave glibc's
settings alone.  On other C libraries or platforms this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 64 * 1024 * 1024
TRIM_THRESHOLD = 128 * 1024 * 1024

applied = False


def tune() -> bool:
    """Apply the tuning once; True when glibc accepted it."""
    global applied
    if applied or os.environ.get("LEAFKIT_MALLOC_TUNING", "1").strip().lower() in ("0", "false", "no", "off"):
        return applied
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and friends have no mallopt
        return False
    applied = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return applied
