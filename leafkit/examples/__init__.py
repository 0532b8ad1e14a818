"""``leafkit.examples``: complete, importable training examples for the lessons.

* :mod:`leafkit.examples.digits`: an MLP on scikit-learn's handwritten
  digits (``python -m leafkit.examples.digits``).
"""

from __future__ import annotations

__all__ = ["digits"]


def __getattr__(name):
    if name == "digits":
        import importlib

        return importlib.import_module(".digits", __name__)
    raise AttributeError(f"module 'leafkit.examples' has no attribute '{name}'")
