"""The controls of an explorer, under keys that are the same in every language.

Every explorer lists its controls by key (:meth:`Explorer.controls <leafkit.widgets._explorer.Explorer.controls>`)
and can be driven by key (``act``), so that the tests, the browser driver and the benchmarks
operate any explorer the same way.
"""

from __future__ import annotations

import re

__all__ = ["Control", "control_class"]


def control_class(key: str) -> str:
    """The CSS class that marks the control ``key`` in the page (``"retain:z"`` → ``"lk-control-retain-3a-z"``).

    Browser tests find a control by it, whatever its language or its current label.
    """
    return "lk-control-" + re.sub(r"[^A-Za-z0-9_]", lambda m: f"-{ord(m.group()):x}-", key)


class Control:
    """One control of an explorer, under a key that is the same in every language.

    Attributes
    ----------
    key : str
        Language-independent name, e.g. ``"retain:z"``, ``"hook_on"``, ``"backward"``; in the
        page the widget carries the CSS class :func:`control_class` of it.
    widget : ipywidgets widget
        The control itself.
    kind : {"checkbox", "dropdown", "toggle", "button"}
        How a learner operates it.
    """

    KINDS = ("checkbox", "dropdown", "toggle", "button")

    def __init__(self, key: str, widget, kind: str):
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {self.KINDS}, got {kind!r}")
        self.key = key
        self.widget = widget
        self.kind = kind

    @property
    def description(self) -> str:
        """What the learner reads on (or next to) the control, in the explorer's language."""
        return self.widget.description

    @property
    def enabled(self) -> bool:
        return not getattr(self.widget, "disabled", False)

    def options(self) -> list:
        """``[(label, value)]``: what a dropdown or toggle offers (``[]`` for the others)."""
        if self.kind in ("dropdown", "toggle"):
            return list(zip(self.widget._options_labels, self.widget._options_values))
        return []

    def values(self) -> list:
        """Every value the control can take (``[None]`` for a button: it is clicked)."""
        if self.kind == "checkbox":
            return [False, True]
        if self.kind == "button":
            return [None]
        return [v for _, v in self.options()]

    def label(self, value) -> str:
        """The option label of ``value`` (dropdown / toggle), as shown to the learner."""
        for lab, v in self.options():
            if v == value:
                return lab
        raise ValueError(f"{self.key}: no option with value {value!r}")

    @property
    def value(self):
        return None if self.kind == "button" else self.widget.value

    def __repr__(self):
        return f"<Control {self.key!r}: {self.kind} {self.description!r}>"
