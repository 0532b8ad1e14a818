"""Anomaly detection: ``detect_anomaly``, ``set_detect_anomaly``, ``is_anomaly_enabled``.

Mirrors ``torch.autograd.anomaly_mode``.  While the mode is on:

* every backward node records the traceback of the forward line that made
  it (in ``node.metadata["traceback_"]``, as PyTorch does);
* when a node fails in backward, that traceback is shown first, as the
  warning ``Error detected in MulBackward0. Traceback of forward call that
  caused the error: ...``;
* with ``check_nan`` (the default), a node whose gradient holds a NaN raises
  ``RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th
  output.``;
* the "modified by an inplace operation" error ends with the hint that
  points to that traceback, instead of the hint to turn the mode on.

The mode is a global switch, as in PyTorch (not per thread).
"""

from __future__ import annotations

import os
import sys
import traceback
import types
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_enabled = False
_check_nan = True

_ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for debugging."
)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on (``torch.is_anomaly_enabled()``)."""
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True when anomaly mode also checks backward outputs for NaN (``torch.is_anomaly_check_nan_enabled()``)."""
    return _check_nan


def _set(mode: bool, check_nan: bool) -> None:
    global _enabled, _check_nan
    _enabled, _check_nan = bool(mode), bool(check_nan)


class detect_anomaly:
    """Context manager that turns anomaly detection on (on entry; the previous mode comes back on exit).

    Parameters
    ----------
    check_nan : bool
        Also raise when a backward node returns NaN (default True).

    Warns
    -----
    UserWarning
        "Anomaly Detection has been enabled. This mode will increase the
        runtime and should only be enabled for debugging." on creation, as
        PyTorch does.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _enabled
        self.check_nan = check_nan
        self.prev_check_nan = _check_nan
        warnings.warn(_ENABLED_WARNING, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        _set(True, self.check_nan)

    def __exit__(self, *args) -> None:
        _set(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once when called, restored on exit when used with ``with``.

    Parameters
    ----------
    mode : bool
    check_nan : bool
        Also raise when a backward node returns NaN (default True).
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _enabled
        self.prev_check_nan = _check_nan
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args) -> None:
        _set(self.prev, self.prev_check_nan)


def _user_frames():
    """The current stack without leafkit's own frames (PyTorch's stack shows no frames of its C++ core)."""
    frames = []
    for fs in traceback.extract_stack()[:-1]:
        if os.path.abspath(fs.filename).startswith(_PACKAGE_DIR + os.sep):
            continue
        frames.append(fs)
    return frames


_parent: list = [None]  # the node whose backward is running (anomaly mode): it "induced" the nodes recorded meanwhile


def set_parent(node):
    """Set the node whose backward formulas run now; returns the previous one (the engine restores it)."""
    prev, _parent[0] = _parent[0], node
    return prev


def record_traceback(node) -> None:
    """Store the forward traceback on a new node, and the node whose backward recorded it (anomaly mode only)."""
    node.metadata["traceback_"] = "".join(traceback.format_list(_user_frames()))
    if _parent[0] is not None:
        node.metadata["parent_"] = _parent[0]


def report_error(node) -> None:
    """Before a failing node's error propagates: show where the node was made, as PyTorch does."""
    tb = node.__dict__.get("_metadata", {}).get("traceback_")
    if tb is None:
        warnings.warn(
            f"Error detected in {node.name()}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information.",
            UserWarning,
            stacklevel=_stacklevel(),
        )
        return
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{tb}",
        UserWarning,
        stacklevel=_stacklevel(),
    )
    parent = node.metadata.get("parent_")
    while parent is not None:  # a node recorded by a backward pass (create_graph): the forward behind it
        tb = parent.__dict__.get("_metadata", {}).get("traceback_", "")
        warnings.warn(
            f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that "
            f"induced the previous calculation:\n{tb}",
            UserWarning,
            stacklevel=_stacklevel(),
        )
        parent = parent.__dict__.get("_metadata", {}).get("parent_")


def _stacklevel() -> int:
    """Point the warning at the user's backward() call, outside leafkit."""
    f: types.FrameType | None = sys._getframe(1)
    level = 1
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        f, level = f.f_back, level + 1
    return level
