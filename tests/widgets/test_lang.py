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


def _prose(html: str) -> str:
    """The text of a view a learner reads as sentences: code blocks, code spans and drawings left out."""
    html = re.sub(r"<(pre|code|svg|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html).replace("&#x27;", "'").replace("&quot;", '"')


def _views(ex) -> list:
    names = ("header_view", "code_view", "table_view", "message_view", "explanation_view", "feedback_view")
    return [getattr(ex, n).value for n in (*names, "output_view", "warning_view") if hasattr(ex, n)]


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_no_english_and_no_ascii_colons_in_chinese_output(entry, no_dot):
    """Issue 19: a Chinese explorer printed "cuda:0 (simulated)" and "hook on t saw", and mixed ASCII and
    full-width colons in its labels.  Along its tour, nothing of the sort; code stays code."""
    ex = entry.cls.example("zh")
    for key, value in (("", None), *entry.cls.TOUR):
        if key:
            ex.act(key, value)
        for html in _views(ex):
            prose = _prose(html)
            assert "simulated" not in prose and "hook on" not in prose and " saw " not in prose, prose
            assert not re.search(r"[\u4e00-\u9fff）](\s*):(?!\d)", prose), prose  # a CJK label with an ASCII colon
        for html in (ex.header_view.value, ex.table_view.value):  # labels (not PyTorch's messages): full width
            assert not re.search(r":(\s|$)", _prose(html)), _prose(html)
        printed = getattr(ex, "printed", "") or "".join(getattr(r, "printed", "") for r in getattr(ex, "records", []))
        assert "saw" not in printed, printed


def test_a_simulated_device_reads_as_chinese(no_dot):
    zh = leafkit.widgets.LeafExplorer(True, ["cuda()"], lang="zh")
    en = leafkit.widgets.LeafExplorer(True, ["cuda()"], lang="en")
    if leafkit.cuda.backend() != "simulated":
        pytest.skip("cuda is not simulated here")
    assert zh.rows == en.rows and zh.rows[-1]["device"] == "cuda:0 (simulated)"  # the data is the same
    assert "cuda:0（模拟）" in zh.table_view.value and "simulated" not in _prose(zh.table_view.value)
    assert "cuda:0 (simulated)" in en.table_view.value
    # the explorer's drawing too (leafkit.viz names the device in the drawing's language)
    assert "device=cuda:0（模拟）" in zh.drawing.text and "simulated" not in zh.drawing.source
    assert "device=cuda:0 (simulated)" in en.drawing.text


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.name)
def test_headings_keep_their_case(entry, no_dot):
    """Issue 19: the CSS upper-cased headings, so ``.grad`` read ".GRAD" and ``z.backward()`` "Z.BACKWARD()"."""
    for lang in ("en", "zh"):
        ex = entry.cls.example(lang)
        for html in _views(ex) + [ex.drawing_view.value]:
            assert "uppercase" not in html
