"""The list of explorers, read by the package, the tests, the browser test, the benchmarks and the README.

An explorer is one module of ``leafkit.widgets`` holding one :class:`Explorer
<leafkit.widgets._view.Explorer>` subclass, and one line in
:data:`leafkit.widgets.REGISTRY`.  Everything else is read from the class:
its CSS class, its words in each language (``TEXT``, with the README's
``summary``), its controls and its :attr:`TOUR`.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

__all__ = ["ExplorerEntry", "entries"]


@dataclass(frozen=True)
class ExplorerEntry:
    """One registered explorer.

    Attributes
    ----------
    name : str
        The class name, as exported by ``leafkit.widgets`` (``"LeafExplorer"``).
    module : str
        Its module in ``leafkit.widgets`` (``"leaf_explorer"``).
    """

    name: str
    module: str

    @property
    def cls(self):
        """The explorer class (imported on first use)."""
        return getattr(importlib.import_module(f"leafkit.widgets.{self.module}"), self.name)

    @property
    def slug(self) -> str:
        """``"leaf_explorer"`` for ``LeafExplorer``: the file name of its screenshots."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.name).lower()

    @property
    def css_class(self) -> str:
        """The CSS class of its root widget (``"lk-leaf-explorer"``)."""
        return self.cls.css_class

    def summary(self, lang: str = "en") -> str:
        """One line on what a learner tries in it (Markdown), for the README."""
        return self.cls.TEXT[lang]["summary"]

    def title(self, lang: str = "en") -> str:
        return self.cls.TEXT[lang]["title"]


def entries(registry) -> tuple:
    """:class:`ExplorerEntry` objects from ``(module, class name)`` pairs (checked for duplicates)."""
    out = tuple(ExplorerEntry(name, module) for module, name in registry)
    names = [e.name for e in out]
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise ValueError(f"{dup} is registered twice")
    return out
