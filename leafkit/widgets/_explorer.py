"""The base class of every explorer: its views, its language, its controls, guarded callbacks.

A widget never shows a Python traceback: callbacks run inside :meth:`Explorer._guard`, which turns
an unexpected exception into a styled message (and records it in :attr:`Explorer.internal_errors`
for the tests).  Errors that are part of the lesson are shown with :func:`~._html.message_html`.

Languages: every explorer takes ``lang="en"`` or ``"zh"`` (``None``: the package default,
:func:`leafkit.set_language`).  Each explorer keeps its own words in a ``TEXT = {"en": {...},
"zh": {...}}`` table in its own file; the words they share are :data:`~._words.BASE_TEXT`.

What an explorer brings for its tests, so that a new one is its module plus one registry line:
:attr:`Explorer.TOUR` (a walk through its controls), :attr:`Explorer.EXAMPLE` and
:attr:`Explorer.DEMO` (notebook cells that build it) and :meth:`Explorer.oracle` (its check
against real PyTorch).
"""

from __future__ import annotations

import ast

import ipywidgets as W

import leafkit
from leafkit._lang import language, resolve_language

from ._controls import control_class
from ._drawing import DrawingPane, svg_width
from ._html import BLUE, FONT, MUTED, TEXT, device_badge_html, esc, message_html, plain, rich
from ._words import BASE_TEXT

__all__ = ["Explorer"]


class Explorer:
    """Base class: the views every explorer has, display delegation, guarded callbacks.

    Parameters
    ----------
    zoom : float, default 1.0
        Scale of the drawing.
    lang : {"en", "zh"} or None, default None
        The language of everything the explorer writes (``None``: the package
        default, :func:`leafkit.get_language`).  Code, PyTorch's messages and
        printed tensors are never translated.

    Raises
    ------
    ValueError
        ``lang`` is not None, ``"en"`` or ``"zh"``.

    Attributes
    ----------
    widget : ipywidgets.VBox
        The root widget (what a notebook displays); CSS classes ``lk-explorer``,
        the explorer's own class and ``lk-lang-en`` / ``lk-lang-zh``.
    lang : str
        ``"en"`` or ``"zh"``.
    code : str
        The program the current state runs, exactly as shown.
    rows : list of dict
        The table's data (one dict per row, plain Python values).
    explanation : str
        The sentence explaining the current result (without code marks).
    message : dict or None
        ``{"kind", "title", "text"}`` of the styled message shown (a lesson's
        error, e.g. PyTorch's RuntimeError text), or ``None``.
    drawing : leafkit.viz.VariablesDrawing or None
        The current variables-view drawing.
    internal_errors : list of Exception
        Unexpected exceptions caught in callbacks (always empty when all is well).
    code_view, table_view, explanation_view, message_view : ipywidgets.HTML
        The views of the above.
    drawing_pane : DrawingPane
        The drawing; ``drawing_view`` is its widget.

    Notes
    -----
    A subclass sets ``TEXT = {"en": {...}, "zh": {...}}`` (with at least
    ``"title"``, ``"subtitle"`` and ``"summary"``, the README line),
    ``css_class``, :attr:`TOUR`, and implements ``_controls()`` and ``_update()``.
    """

    #: The explorer's own words, per language (keys missing here come from :data:`BASE_TEXT`).
    TEXT: dict = {
        "en": {"title": "Explorer", "subtitle": "", "summary": ""},
        "zh": {"title": "探索器", "subtitle": "", "summary": ""},
    }
    #: A walk through the controls: ``(key, value)`` steps for :meth:`act` (the browser test,
    #: the benchmarks and the screenshots use it).  Each step changes what the explorer shows.
    TOUR: tuple = ()
    #: The code of a notebook cell that builds an example of this explorer, its last line the
    #: explorer (``torch`` is leafkit); ``None`` means the class called with no arguments.  The
    #: browser test runs it, :meth:`example` builds the same in Python.  A dict ``{"en": ..., "zh": ...}``
    #: gives each language its own cell (a ``print`` in Chinese, say).
    EXAMPLE = None
    #: A notebook cell that builds the explorer with arguments, as a lesson writes it (``torch`` is
    #: leafkit; the last line is the explorer).  The browser test puts every explorer's ``DEMO`` in one
    #: lesson-like notebook and walks them all; ``None`` means :attr:`EXAMPLE`.
    DEMO = None
    _batch = False  # True while set_state() changes several controls: redraw once, at the end
    css_class = "lk-explorer"
    show_device = False

    def _on_change(self, change=None):
        """A control changed: redraw, unless a batch of changes is under way."""
        if not self._batch:
            self._update()

    def __init__(self, zoom: float = 1.0, lang=None):
        self.lang = resolve_language(lang)
        self.code = ""
        self.rows: list = []
        self.explanation = ""
        self.message = None
        self.drawing = None
        self.internal_errors: list = []
        self.code_view = W.HTML()
        self.code_view.add_class("lk-code-view")
        self.table_view = W.HTML()
        self.table_view.add_class("lk-table-view")
        self.explanation_view = W.HTML()
        self.explanation_view.add_class("lk-explanation")
        self.message_view = W.HTML()
        self.message_view.add_class("lk-message")
        self.drawing_pane = DrawingPane(zoom=zoom, lang=self.lang)
        self.drawing_view = self.drawing_pane.view
        self.header_view = W.HTML(self._header_html())
        self.widget = W.VBox()

    @classmethod
    def example_code(cls, lang=None) -> str:
        """:attr:`EXAMPLE` in ``lang`` (``None``: the package default), or ``"ClassName()"``."""
        code = cls.EXAMPLE
        if isinstance(code, dict):
            code = code[resolve_language(lang)]
        return code if code is not None else f"{cls.__name__}()"

    @classmethod
    def demo_code(cls) -> str:
        """:attr:`DEMO`, or the English :meth:`example_code`."""
        return cls.DEMO if cls.DEMO is not None else cls.example_code("en")

    @classmethod
    def example(cls, lang=None):
        """The explorer that :meth:`example_code` builds, in ``lang`` (``None``: the package default).

        The tests, the benchmarks and the browser driver build explorers this way, so an explorer
        that needs arguments (a graph to step through, say) is driven like any other.
        """
        tree = ast.parse(cls.example_code(lang))
        *body, last = tree.body
        if not isinstance(last, ast.Expr):
            raise ValueError(f"{cls.__name__}.EXAMPLE must end with the expression that builds the explorer")
        ns = {"torch": leafkit, cls.__name__: cls}
        with language(resolve_language(lang)):
            exec(compile(ast.Module(body, type_ignores=[]), f"<{cls.__name__} example>", "exec"), ns)  # noqa: S102
            return eval(compile(ast.Expression(last.value), f"<{cls.__name__} example>", "eval"), ns)  # noqa: S307

    # -- words ----------------------------------------------------------
    def _t(self, key: str, **fields) -> str:
        """The explorer's text ``key`` in its language, formatted with ``fields``."""
        words = self.TEXT[self.lang]
        text = words[key] if key in words else BASE_TEXT[self.lang][key]
        return text.format(**fields) if fields else text

    @property
    def title(self) -> str:
        return self._t("title")

    @property
    def subtitle(self) -> str:
        return self._t("subtitle")

    # -- display --------------------------------------------------------
    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:  # what shows where widgets cannot render
            bundle["text/plain"] = self._t("plain_repr", name=type(self).__name__)
        return bundle

    @property
    def svg(self):
        """The SVG text of the drawing shown, or ``None`` (text fallback without ``dot``)."""
        return self.drawing_pane.svg

    # -- controls -------------------------------------------------------
    def _controls(self) -> list:  # pragma: no cover - every explorer overrides it
        return []

    def controls(self) -> dict:
        """``{key: Control}``: every control, under keys that are the same in every language."""
        return {c.key: c for c in self._controls()}

    def act(self, key: str, value=None) -> bool:
        """Operate one control as a learner would: tick, choose, press.

        Parameters
        ----------
        key : str
            A key of :meth:`controls`.
        value : optional
            The new value of a checkbox, dropdown or toggle (ignored for a button).

        Returns
        -------
        bool
            False when nothing could happen: a disabled control, or a value it already has.

        Raises
        ------
        KeyError
            An unknown key.
        ValueError
            A value the control does not offer.
        """
        c = self.controls()[key]
        if not c.enabled:
            return False
        if c.kind == "button":
            c.widget.click()
            return True
        if value not in c.values():
            raise ValueError(f"{key}: {value!r} is not one of {c.values()}")
        if c.widget.value == value:
            return False
        c.widget.value = value
        return True

    # -- layout ---------------------------------------------------------
    def _header_html(self) -> str:
        sub = (
            f'<div style="font-size:13px;color:{MUTED};margin-top:1px;line-height:1.45">{esc(self.subtitle)}</div>'
            if self.subtitle
            else ""
        )
        dev = f'<div style="margin-top:4px">{device_badge_html(self.lang)}</div>' if self.show_device else ""
        return (
            f'<div style="font-family:{FONT};color:{TEXT}"><div style="font-size:16px;font-weight:700">'
            f"{esc(self.title)}</div>{sub}{dev}</div>"
        )

    def _classes(self) -> None:
        self.widget.add_class("lk-explorer")
        self.widget.add_class(self.css_class)
        self.widget.add_class(f"lk-lang-{self.lang}")
        for c in self._controls():
            c.widget.add_class(control_class(c.key))

    def _assemble(
        self,
        controls,
        left_extra=(),
        right_extra=(),
        left_width="650px",
        left_views=None,
        below=(),
        left_min="460px",
        grow=(0, 1),
    ):
        """Lay out header, controls; then code, table, messages beside the drawing; then ``below``.

        The left column (``left_views``: by default code, table, message, explanation, then
        ``left_extra``) is ``left_width`` wide (it may shrink to ``left_min``); the drawing takes
        the rest and scales down to fit it; when less than 320 px are left (a narrow notebook) the
        drawing wraps below, centred.  ``grow`` says how the two columns share the room left over
        (flex-grow of the left and of the right column).  The views of ``below`` take the full width
        under both.
        """
        if left_views is None:
            left_views = [self.code_view, self.table_view, self.message_view, self.explanation_view, *left_extra]
        left = W.VBox(
            list(left_views),
            layout=W.Layout(
                flex=f"{grow[0]} 1 {left_width}", min_width=left_min, max_width="100%", padding="0 18px 0 0"
            ),
        )
        right = W.VBox([self.drawing_view, *right_extra], layout=W.Layout(flex=f"{grow[1]} 1 320px", min_width="320px"))
        self._left_column = left
        self._left_basis = int(str(left_width).rstrip("px"))
        body = W.HBox(
            [left, right],
            layout=W.Layout(width="100%", flex_flow="row wrap", align_items="flex-start", justify_content="center"),
        )
        ctl = W.VBox(list(controls), layout=W.Layout(margin="6px 0 8px 0"))
        rest = [W.VBox(list(below), layout=W.Layout(width="100%", margin="4px 0 0 0"))] if below else []
        self.widget.children = [self.header_view, ctl, body, *rest]
        self.widget.layout = W.Layout(
            width="100%", max_width="1280px", padding="10px 14px", border="1px solid #d0d7de", margin="4px 0"
        )
        self._classes()

    # -- rendering helpers ----------------------------------------------
    def _set_message(self, kind=None, title="", text="", mono=True, extra=""):
        if kind is None:
            self.message = None
            self.message_view.value = ""
        else:
            self.message = {"kind": kind, "title": plain(title), "text": plain(text) if not mono else text}
            self.message_view.value = message_html(kind, title, text, mono=mono, extra=extra, marked=not mono)

    def _set_explanation(self, sentence: str, notes=()) -> None:
        self.explanation = plain(sentence)
        extra = "".join(f'<div style="font-size:12.5px;color:{MUTED};margin-top:3px">{rich(n)}</div>' for n in notes)
        self.explanation_view.value = (
            f'<div class="lk-explain" style="font-family:{FONT};font-size:14px;line-height:1.5;color:{TEXT};'
            f'border-left:4px solid {BLUE};background:#f3f8fd;padding:7px 11px;margin:6px 0;border-radius:4px">'
            f'<span style="font-weight:700;color:{BLUE}">{esc(self._t("why"))}</span>{rich(sentence)}{extra}</div>'
        )

    def _show_drawing(self, drawing, caption=None) -> None:
        self.drawing = drawing
        self.drawing_pane.show(drawing, caption=caption)
        if self.WIDE_DRAWINGS:
            self._fit_drawing_column()

    #: True: a drawing wider than its column claims room from the left column (see
    #: :meth:`_fit_drawing_column`).  Off for explorers whose left column holds wide controls.
    WIDE_DRAWINGS = False
    #: The narrowest the left column's flex basis becomes for a wide drawing, in pixels.
    WIDE_DRAWING_LEFT_MIN = 520

    def _fit_drawing_column(self) -> None:
        """Narrow the left column's flex basis when the drawing is wider than the room it would get.

        The explorer is at most 1280 px wide (about 1250 inside); with the left column at its full
        basis (650-700 px) a wide graph, such as five ``SelectBackward0`` side by side, was scaled to
        about 480 px and its labels became too small to read.  The left basis becomes 1250 px minus
        the drawing's natural width, but not less than ``WIDE_DRAWING_LEFT_MIN``.  (A flex basis, not
        a width: the two columns still share a narrower notebook as before, and only wrap below each
        other where both minimum widths do not fit.)  The basis only shrinks, so that stepping through
        one graph, whose edge labels come and go, does not move the columns back and forth.
        """
        left = getattr(self, "_left_column", None)
        width = svg_width(self.drawing_pane.svg, self.drawing_pane.zoom)
        if left is None or width is None:
            return
        full = self._left_basis
        basis = int(max(self.WIDE_DRAWING_LEFT_MIN, min(full, 1250 - width)))
        if basis < getattr(self, "_left_now", full):
            self._left_now = basis
            left.layout.flex = f"{left.layout.flex.split()[0]} 1 {basis}px"

    # -- safety ---------------------------------------------------------
    def _guard(self, fn):
        """Wrap a callback so that no exception ever reaches the notebook as a traceback."""

        def wrapped(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - shown as a styled message instead
                self.internal_errors.append(exc)
                try:
                    self.message = {"kind": "error", "title": self._t("problem_title"), "text": str(exc)}
                    self.message_view.value = message_html(
                        "error",
                        self._t("problem_title"),
                        f"{type(exc).__name__}: {exc}\n{self._t('problem_hint')}",
                        mono=True,
                    )
                except Exception:
                    pass
                return None

        wrapped.__wrapped__ = fn
        return wrapped

    def refresh(self) -> None:
        """Re-run the current state's code and redraw everything."""
        self._guard(self._update)()

    def _update(self) -> None:  # pragma: no cover - every explorer overrides it
        raise NotImplementedError

    # -- the test oracle ------------------------------------------------
    def oracle(self, torch) -> None:
        """Check what the explorer shows now against ``torch``, the real PyTorch module.

        Runs the code the explorer shows with ``torch`` bound to PyTorch, independently of the
        explorer's own runner, and compares every row of its table (and its error, printed lines,
        drawing state) field by field.  The property test (``tests/widgets/test_explorer_properties.py``)
        calls it after every random step of a random learner, and the browser test's twin is the
        same explorer; so an explorer brings its own check, and a new explorer needs no test
        file edited.  leafkit never imports PyTorch: the caller passes it in.

        Raises
        ------
        AssertionError
            A row, an error or a printed line differs from PyTorch's.
        NotImplementedError
            The explorer has no oracle (every registered explorer must have one).
        """
        raise NotImplementedError(f"{type(self).__name__} has no oracle()")
