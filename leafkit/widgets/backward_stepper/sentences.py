"""The stepper's sentences: what the "Why" box says about the step shown, in English or Chinese.

Plain text, made from a :class:`~.model.BackwardPass` and the words of :mod:`.words`; no widgets.
The Chinese sentences mark code with backticks (the view shows those spans in the code font).
"""

from __future__ import annotations

from leafkit.viz import _inspect as I

from .._program import format_value
from .model import numel, shape_text
from .words import SEP, TEXT

__all__ = ["Sentences", "EDGE_VALUES"]

#: Up to this many elements, a gradient is written on an edge with its values; above, its shape.
EDGE_VALUES = 4


class Sentences:
    """The words of one stepper, in one language, about one :class:`~.model.BackwardPass`.

    Parameters
    ----------
    p : BackwardPass
        The pass the sentences are about.
    lang : {"en", "zh"}
        Their language.
    """

    def __init__(self, p, lang: str = "en"):
        self.p = p
        self.lang = lang
        self.sep = SEP[lang]

    def t(self, key: str, **fields) -> str:
        """The word ``key`` of :data:`~.words.TEXT` in this language, formatted with ``fields``."""
        text = TEXT[self.lang][key]
        return text.format(**fields) if fields else text

    # -- values ---------------------------------------------------------------------------------------
    def value(self, t, limit: int = 8) -> str:
        """A tensor as a sentence or the table writes it: its repr, or, above ``limit`` elements, its shape."""
        if t is None:
            return self.t("none")
        if numel(tuple(t.shape)) > limit:
            return self.t("big", shape=shape_text(tuple(t.shape)))
        return format_value(t)

    def short(self, t) -> str:
        """A gradient written on an edge: its values (``[2., 4.]``) or, when big, its shape."""
        if t is None:
            return "None"
        shape = tuple(t.shape)
        if numel(shape) > EDGE_VALUES:
            return self.t("shape", shape=shape_text(shape))
        return I.format_values(t, EDGE_VALUES)

    def join(self, items, join: str = "join", last: str = "and") -> str:
        """``a, b and c`` (Chinese ``a、b 和 c``)."""
        items = list(items)
        if len(items) <= 1:
            return "".join(items)
        return self.t(join).join(items[:-1]) + self.t(last) + items[-1]

    # -- the "Why" box ----------------------------------------------------------------------------------
    def explain(self) -> str:
        """The sentence about the state shown: the start, the step that just ran (and what comes next), the
        end, or the error the pass stopped with."""
        p, t, sep = self.p, self.t, self.sep
        shown = p.shown
        if p.error is not None and p.finished:
            return self._error()
        if not shown:
            return self._start()
        parts = [self.step_sentence(shown[-1])]
        if p.finished:
            parts.append(self._done())
        else:
            node, n_ready = p.next_node()
            if node is not None:
                key = "next_many" if n_ready > 1 else "next"
                parts.append(t(key, node=p.label(node), n=n_ready).strip())
        if p.cursor < len(p.records):
            parts.append(t("replayed", k=p.cursor, n=len(p.records)).strip())
        return sep.join(x for x in parts if x)

    def _error(self) -> str:
        p, t = self.p, self.t
        msg = str(p.error)
        hint = ""
        if "implicitly created only for scalar" in msg:
            hint = t("hint_scalar", loss=p.loss_name)
        elif "second time" in msg:
            hint = t("hint_freed")
        elif "does not require grad" in msg:
            hint = t("hint_nograd", loss=p.loss_name)
        if p.records:
            head = t("error", k=len(p.records) + 1, stmt=p.statement)
        else:
            head = t("error_start", stmt=p.statement)
        return head + (self.sep + hint.strip() if hint else "")

    def _start(self) -> str:
        p, t = self.p, self.t
        loss = p.loss_name
        if p.loss.grad_fn is None:
            start = t("start_leaf", loss=loss, g=self.start_gradient_text())
        else:
            why = t("why_vector") if p.gradient is not None else t("why_one", loss=loss)
            start = t("start", root=p.label(p.loss.grad_fn), loss=loss, g=self.start_gradient_text(), why=why)
        if p.records:  # after Reset: the real pass has run, the view replays it
            start += self.sep + t("reset_note", n=len(p.records)).strip()
        return start

    def _done(self) -> str:
        p, t = self.p, self.t
        grads = [t("grad_is", t=n, v=v if v is not None else "None") for n, v in p.current_grads().items()]
        if grads:
            done = t("done", n=len(p.records), grads=t("sep").join(grads), stmt=p.statement)
        else:
            done = t("done_none", n=len(p.records))
        if not p.retain_graph and any(r.freed for r in p.records):
            done += self.sep + t("done_freed").strip()
        return done

    def start_gradient_text(self) -> str:
        """The gradient the pass starts with, as a sentence writes it (``tensor(1.)``, or ``1``)."""
        if self.p.gradient is not None:
            return self.value(self.p.gradient)
        g = self.p.start_gradient()
        return format_value(g) if g is not None else "1"

    def start_label(self) -> str:
        """The label of the first edge of the drawing: the gradient the pass starts with, or ``?``."""
        g = self.p.start_gradient()
        return self.short(g) if g is not None else "?"

    def step_sentence(self, rec) -> str:
        """What step ``rec`` did, in one or a few sentences."""
        if rec.skipped:
            return self.t("skipped", k=rec.index, node=self.p.label(rec.node))
        if I.is_accumulate_grad(rec.node):
            return self._accumulate_sentence(rec)
        return self._node_sentence(rec)

    def _accumulate_sentence(self, rec) -> str:
        p, t = self.p, self.t
        node = rec.node
        leaf = node.variable
        name = p.name_of(leaf, t("leaf"))
        g = rec.grad_outputs[0] if rec.grad_outputs else None
        hooked = "tensor hook" in rec.hooks
        extra = []
        if rec.accumulated is None:
            head = t("ran", k=rec.index, node=p.label(node), gin=self.value(g), added="", sent="").strip()
            extra.append(t("acc_off", leaf=name).strip())
        else:
            before = rec.before[id(leaf)][2]
            after = rec.after[id(leaf)][2]
            fields = dict(k=rec.index, g=self.value(g), leaf=name, before=self.value(before), after=self.value(after))
            # with a hook, the hook saw the gradient first and may have replaced it: say what .grad became
            head = t("acc_hooked", printed=self.printed(rec), **fields) if hooked else t("acc", **fields)
            if before is not None:
                extra.append(t("acc_prev", leaf=name, before=self.value(before)).strip())
        if hooked and rec.accumulated is None:
            extra.insert(0, t("hooks", t=name, printed=self.printed(rec)).strip())
        return self.sep.join([head, *extra])

    def _node_sentence(self, rec) -> str:
        p, t, sep = self.p, self.t, self.sep
        node = rec.node
        gin = self.join(self.value(g) for g in rec.grad_outputs)
        added = ""
        if len(rec.contributions) > 1:
            parts = " + ".join(self.value(g) for _, _, g in rec.contributions)
            added = t("added", n=len(rec.contributions), parts=parts)
        sends, summed = [], []
        for nxt, _nr, g, frm in rec.edges:
            target = p.label(nxt)
            sends.append(t("send", g=self.value(g), target=target))
            if frm is not None and g is not None:
                to = shape_text(tuple(g.shape))
                summed.append(t("send_summed", target=target, frm=shape_text(frm), to=to).strip())
        sent = t("sent", sends=self.join(sends, "send_join", "send_and")) if sends else t("sent_nothing")
        if summed:
            sent += sep + sep.join(summed)
        head = t("ran", k=rec.index, node=p.label(node), gin=gin, added=added, sent=sent)
        extra = []
        for kind in rec.hooks:
            if kind == "tensor hook":
                extra.append(t("hooks", t=p.made_by(node) or p.label(node), printed=self.printed(rec)).strip())
            else:
                extra.append(t("hook_node", kind=t(hook_key(kind)), node=p.label(node), printed="").strip())
        for r in rec.retained:
            extra.append(t("retained", t=p.name_of(r, "?"), v=self.value(rec.after[id(r)][2])).strip())
        if rec.freed:
            extra.append(t("freed").strip())
        elif p.retain_graph and getattr(node, "_had_saved", False):
            extra.append(t("kept").strip())
        return sep.join([head, *extra])

    def printed(self, rec) -> str:
        """``and printed “...”`` for a step whose hooks printed something, else ``""``."""
        text = rec.printed.strip()
        return self.t("hook_printed", text=f"\u201c{text}\u201d") if text else ""


def hook_key(kind: str) -> str:
    """The TEXT key of a hook kind of :class:`~leafkit.autograd.engine.BackwardStep` (``"tensor hook"``)."""
    return kind.replace(" ", "_")
