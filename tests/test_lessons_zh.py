"""The Chinese lessons (lessons/zh/) run the same code as the English ones.

A Chinese lesson has the same file name as its English twin, its own MyST source and
notebook, and its own prose.  Its code is the English lesson's code: comments and
string literals (printed labels, hints) may be translated, nothing else.  So, with
comments and strings left out, every code cell (and every solution) must read the
same tokens as the English cell with the same label.  The one extra code cell is the
first, labelled ``language``: ``leafkit.set_language("zh")``, which makes the
explorers, ``explain()`` and the drawings' legends speak Chinese.

nbval runs the zh notebooks with lessons/sanitize.cfg (``make test``),
tests/test_lessons_parity.py runs their experiments against real PyTorch, and
tests/test_lessons_exercises.py runs their exercises with solutions, wrong answers and
answers of the wrong type.
"""

from __future__ import annotations

import io
import tokenize

import pytest
from lesson_sources import ENTRIES, build_lessons, lesson_id, lessons, read_source, source_path, tags

#: True once every lesson of the manifest has its Chinese twin: then a missing
#: lessons/zh/NN_name.md fails.  While the translations are being written, only the
#: twins that exist are checked.
REQUIRE_EVERY_ZH_TWIN = True

LANGUAGE_CELL = "language"
ZH = lessons("zh")

SKIP = {
    tokenize.COMMENT,
    tokenize.STRING,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}
for _name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END"):  # Python 3.12+: f-strings are split up
    if hasattr(tokenize, _name):
        SKIP.add(getattr(tokenize, _name))


def code_tokens(source: str) -> list:
    """The tokens of ``source`` without comments, string literals and layout."""
    tokens = tokenize.generate_tokens(io.StringIO(source + "\n").readline)
    return [(tok.type, tok.string) for tok in tokens if tok.type not in SKIP]


def code_cells(nb) -> list:
    """(label, tags, tokens) of every code cell and solution, in order."""
    out = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            out.append((cell.metadata.get("label"), tags(cell), code_tokens(cell.source)))
        elif "solution" in tags(cell):
            out.append((cell.metadata.get("label"), tags(cell), code_tokens(build_lessons.solution_code(cell))))
    return out


def test_code_tokens_ignore_comments_and_strings():
    en = 'print("x.grad:", x.grad)  # the gradient\ny = f"{a} b"\n'
    zh = 'print("x 的梯度：", x.grad)  # 梯度\ny = f"{a} 乙"\n'
    assert code_tokens(en) == code_tokens(zh)
    assert code_tokens("y = x.detach()") != code_tokens("y = x.detach().clone()")


def test_every_english_lesson_has_a_chinese_twin():
    missing = [e.stem for e in ENTRIES if not source_path("zh", e).exists()]
    if missing and not REQUIRE_EVERY_ZH_TWIN:
        pytest.skip(f"not yet translated: {', '.join(missing)} (REQUIRE_EVERY_ZH_TWIN is False)")
    assert not missing, f"lessons without a Chinese twin in lessons/zh/: {missing}"


@pytest.mark.parametrize("item", ZH, ids=lesson_id)
def test_chinese_lesson_has_the_english_code(item):
    _, entry = item
    zh = read_source("zh", entry)
    en = read_source("en", entry)
    zh_cells = code_cells(zh)
    assert zh_cells and zh_cells[0][0] == LANGUAGE_CELL, (
        f"{source_path('zh', entry)}: the first code cell must be labelled {LANGUAGE_CELL!r}"
    )
    assert zh_cells[0][2] == code_tokens('import leafkit\nleafkit.set_language("zh")'), zh_cells[0]
    zh_cells = zh_cells[1:]
    en_cells = code_cells(en)
    assert [c[0] for c in zh_cells] == [c[0] for c in en_cells], "the code cells' labels differ"
    for (label, zh_tags, zh_tokens), (_, en_tags, en_tokens) in zip(zh_cells, en_cells):
        assert zh_tags == en_tags, f"cell {label!r}: tags {zh_tags} != {en_tags}"
        assert zh_tokens == en_tokens, f"cell {label!r}: the code differs from the English lesson's"


@pytest.mark.parametrize("item", ZH, ids=lesson_id)
def test_chinese_lesson_is_written_in_chinese(item):
    """Every Markdown cell has Chinese text; key terms keep their English name in brackets once."""
    _, entry = item
    nb = read_source("zh", entry)
    prose = [c for c in nb.cells if c.cell_type == "markdown" and "solution" not in tags(c)]
    for cell in prose:
        assert any("\u4e00" <= ch <= "\u9fff" for ch in cell.source), cell.metadata.get("label")
    text = "\n".join(c.source for c in prose)
    if entry.number == 0:
        for term in ("叶子张量", "计算图", "梯度", "反向传播", "链式法则"):
            assert term in text, term
