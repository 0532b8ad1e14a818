"""Every explorer in 简体中文: the same convention as the drawings (lang=, package default), complete
word tables, the same code and the same results in both languages, code left untranslated."""

from __future__ import annotations

import inspect
import re
import string

import pytest

import leafkit
from leafkit.widgets import EXPLORERS, _view

CJK = re.compile(r"[\u4e00-\u9fff]")
HEX = re.compile(r"0x[0-9a-f]+")
TERMS = ("叶子张量", "计算图", "梯度", "反向传播")
ENGLISH_GRAMMAR = {"s", "ks", "its", "verb"}


@pytest.fixture(autouse=True)
def english_again():
    yield
    leafkit.set_language("en")


def _fields(s) -> set:
    if isinstance(s, (tuple, list)):
        return set().union(*(_fields(x) for x in s))
    return {f for _, f, _, _ in string.Formatter().parse(s) if f is not None}


def _strings(table):
    for v in table.values():
        if isinstance(v, (tuple, list)):
            yield from v
        else:
            yield v


@pytest.mark.parametrize(
    "table", [_view.BASE_TEXT, *(e.cls.TEXT for e in EXPLORERS)], ids=["base", *(e.name for e in EXPLORERS)]
)
def test_word_tables_have_both_languages_and_the_same_fields(table):
    assert set(table) == {"en", "zh"}
    assert set(table["en"]) == set(table["zh"])
    for key in table["en"]:
        en, zh = _fields(table["en"][key]), _fields(table["zh"][key])
        # Chinese has no plural or verb agreement: only those fields may go unused there
        assert zh <= en and en - zh <= ENGLISH_GRAMMAR, key
    zh = [
        s
        for s in _strings(table["zh"])
        if s and re.search(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}", s) and not CJK.search(s)
    ]
    assert zh == [], f"English left in the Chinese table: {zh}"


def test_the_chinese_texts_use_the_articles_terms():
    text = "".join(str(s) for e in EXPLORERS for s in _strings(e.cls.TEXT["zh"]))
    for term in TERMS:
        assert term in text, term
    # identifiers stay code: never translated
    for ident in ("grad_fn", "requires_grad", "is_leaf", "retain_grad()", "backward()"):
        assert ident in text


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_lang_argument_and_package_default(entry):
    cls = entry.cls
    assert inspect.signature(cls).parameters["lang"].default is None
    en = cls.example()
    assert en.lang == "en" and "lk-lang-en" in en.widget._dom_classes
    zh = cls.example("zh")
    assert zh.lang == "zh" and "lk-lang-zh" in zh.widget._dom_classes
    assert entry.title("zh") in zh.header_view.value and CJK.search(zh.header_view.value)
    assert not CJK.search(en.header_view.value)
    leafkit.set_language("zh")
    assert cls.example().lang == "zh" and cls.example("en").lang == "en"
    assert "交互式探索器" in cls.example()._repr_mimebundle_()["text/plain"]
    leafkit.set_language("en")
    with pytest.raises(ValueError, match="must be one of 'en', 'zh'"):
        cls.example("de")
    if cls.example_code() == f"{cls.__name__}()":  # built with no arguments: the lang argument itself
        assert cls(lang="zh").lang == "zh"
        leafkit.set_language("zh")
        assert cls(lang="en").lang == "en"
        leafkit.set_language("en")
        with pytest.raises(ValueError, match="lang must be one of 'en', 'zh'"):
            cls(lang="de")


_STRING = re.compile(r"""(['"])[^'"\n]*\1""")
_SAID = re.compile(r"^[^\n]*?(?=tensor\()", re.M)


def _same_words(v):
    """A row value with what a hook's ``print`` says before the tensor left out (the code prints in the
    explorer's language, as the lessons' code does)."""
    return _SAID.sub("", HEX.sub("0x", v)) if isinstance(v, str) else v


def _visible(ex) -> dict:
    """What the explorer computed (not how it words it): code (its strings left out: a ``print`` speaks the
    explorer's language), rows, drawing state."""
    rows = [{k: _same_words(v) for k, v in r.items() if k != "data_ptr"} for r in ex.rows]
    return {
        "code": _STRING.sub("'…'", ex.code),
        "rows": rows,
        "drawing": None if ex.drawing is None else ex.drawing.state,
        "message_kind": None if ex.message is None else ex.message["kind"],
    }


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_the_same_tour_gives_the_same_results_in_both_languages(entry, no_dot):
    """Code and results are the same in Chinese; only the words around them change."""
    en, zh = entry.cls.example("en"), entry.cls.example("zh")
    for key, value in (("", None), *entry.cls.TOUR):
        if key:
            assert en.act(key, value) == zh.act(key, value)
        assert _visible(en) == _visible(zh)
        assert en.internal_errors == zh.internal_errors == []
        if zh.explanation:
            assert CJK.search(zh.explanation), zh.explanation
            assert not CJK.search(en.explanation)
            assert "`" not in zh.explanation  # code marks become the code font
        if zh.drawing is not None:
            assert _view.BASE_TEXT["zh"]["legend_leaf"] in zh.drawing_view.value or zh.drawing_pane.fallback
            assert "WenQuanYi Zen Hei" in zh.drawing.source
            assert "WenQuanYi" not in en.drawing.source
        if zh.message is not None and zh.message["kind"] == "error":
            assert zh.message["text"] == en.message["text"]  # PyTorch's error text is never translated
    for c_en, c_zh in zip(en.controls().values(), zh.controls().values()):
        assert c_en.key == c_zh.key and c_en.kind == c_zh.kind and c_en.values() == c_zh.values()


def test_code_marks_are_shown_in_the_code_font():
    html = _view.rich("`x.grad` 是 <None>")
    assert html.startswith("<code") and "x.grad</code>" in html and "&lt;None&gt;" in html
    assert _view.plain("`x.grad` 是 None") == "x.grad 是 None"
