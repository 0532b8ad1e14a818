"""The Chinese lessons (lessons/zh/) run the same code as the English ones.

A Chinese lesson has the same file name as its English twin, its own MyST source and
notebook, and its own prose.  Its code is the English lesson's code: comments and
string literals (printed labels, hints) may be translated, nothing else.  So, with
comments and strings left out, every code cell (and every solution, and the wrong
answers next to it) must read the same tokens as the English cell with the same label.  The one extra code cell is the
first, labelled ``language``: ``leafkit.set_language("zh")``, which makes the
explorers, ``explain()`` and the drawings' legends speak Chinese.

nbval runs the zh notebooks with lessons/sanitize.cfg (``make test``),
tests/test_lessons_parity.py runs their experiments against real PyTorch, and
tests/test_lessons_exercises.py runs their exercises with solutions, wrong answers and
answers of the wrong type.
"""

from __future__ import annotations

import io
import re
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
    """(label, tags, tokens) of every code cell and solution, in order.  A solution's tokens are those of its
    solution and of each wrong answer the tests run (the twins reject the same answers)."""
    out = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            out.append((cell.metadata.get("label"), tags(cell), code_tokens(cell.source)))
        elif "solution" in tags(cell):
            codes = [build_lessons.solution_code(cell)]
            for kind, answers in sorted(build_lessons.wrong_answers(cell).items()):
                codes += [f"# {kind}"] + answers
            out.append((cell.metadata.get("label"), tags(cell), [code_tokens(code) for code in codes]))
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


# ------------------------------------------------------------- what a Chinese reader reads ----
#: Words a Chinese lesson's output may show in English without explaining them: Python's literals, the
#: field's names that the lessons use in English on purpose (the article and lesson 0's glossary name them),
#: and torchviz's "[saved tensor]" (make_dot's notation for a saved tensor, as torchviz prints it).
ENGLISH_TERMS = {
    "True", "False", "None", "Python",  # Python
    "torch", "autograd", "tensor", "Tensor", "detach", "cuda", "cpu", "nan", "NaN", "ln",  # code and math
    "GAN", "RNN", "BPTT", "SGD", "Adam", "ReLU", "Sigmoid", "Tanh", "Linear", "Dropout",  # the field's names
    "saved",  # torchviz: "self: [saved tensor]"
    # gradcheck's GradcheckError: the lines after its first name the two Jacobians it compares
    # ("numerical:tensor(...)", "analytical:tensor(...)"), PyTorch's words like the rest of its message
    "numerical", "analytical",
}  # fmt: skip
#: Parts of an output line that are code or PyTorch's own words, not English prose.
CODE_IN_OUTPUT = [
    r"\b\w*(?:Error|Warning|Exception)\b:.*",  # a PyTorch or Python message, to the end of the line
    r"^\s*line \d+, in .*",  # a traceback frame
    r"“[^”]*”",  # a message quoted in a Chinese sentence
    r"<[^<>\n]*>",  # reprs: <DivBackward0 object at 0x...>, <Figure size 900x300 with 2 Axes>
    r"`[^`\n]*`",  # code in backticks
    r"\b\w+=\S*",  # keyword=value
    r"'[^'\n]*'",  # strings in a repr: ['weight', 'bias'], device='cuda:0'
    r"\b[\w.]+[(\[]",  # calls and indexing: tensor(, model.train(, model[0]
    r"\b\w+(?:[./]\w+)+\b",  # dotted names and fractions: w.grad, trained.0.weight, dy/dx
    r"\.\w+",  # an attribute: .grad
    r"\b\w*[_\d]\w*\b",  # identifiers with an underscore or a digit, numbers with units (631.2step/s)
    r"\b[A-Z][a-z]+[A-Z]\w*\b",  # CamelCase: AccumulateGrad
]
#: In a drawing, a line "name: value" is a saved attribute of a node (make_dot's show_attrs: "exponent: 3").
SAVED_ATTRIBUTE = r"^\s*[a-z_]+: "


def output_texts(cell) -> list[str]:
    """What a stored code cell shows a reader, as text: stdout, text/plain, and the labels of an SVG drawing.
    (stderr holds PyTorch's warnings, and errors are PyTorch's messages: both stay in English.)"""
    import html
    import re

    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            texts.append(out.get("text", ""))
        elif "data" in out:
            texts.append(out["data"].get("text/plain", ""))
            svg = out["data"].get("image/svg+xml", "")
            labels = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
            texts += [re.sub(SAVED_ATTRIBUTE, " ", label) for label in labels]
    return texts


def english_words(line: str, code: set) -> list[str]:
    """The English words of an output ``line`` that are neither code (``code``: the lesson's identifiers,
    such as a parameter's name) nor one of ENGLISH_TERMS."""
    import re

    for pattern in CODE_IN_OUTPUT:
        line = re.sub(pattern, " ", line)
    return [w for w in re.findall(r"[A-Za-z]{2,}", line) if w not in ENGLISH_TERMS and w not in code]


def identifiers(source: str) -> set:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source + "\n").readline)
        return {tok.string for tok in tokens if tok.type == tokenize.NAME}
    except (tokenize.TokenError, SyntaxError):
        return set()


@pytest.mark.parametrize("item", ZH, ids=lesson_id)
def test_no_unexplained_english_in_the_outputs(item):
    """What a Chinese lesson prints and draws is Chinese, apart from code, PyTorch's own messages and the
    terms in ENGLISH_TERMS: no English table headers, labels, verdicts or progress notes."""
    from lesson_sources import notebook_path

    _, entry = item
    nbformat = pytest.importorskip("nbformat")
    stored = nbformat.read(str(notebook_path("zh", entry)), as_version=4)
    found = []
    code = set().union(*(identifiers(cell.source) for cell in stored.cells if cell.cell_type == "code"))
    for cell in stored.cells:
        if cell.cell_type != "code":
            continue
        for text in output_texts(cell):
            for line in text.splitlines():
                words = english_words(line, code)
                if words:
                    found.append(f"{cell.id}: {words} in {line.strip()!r}")
    assert not found, "English in the outputs of " + str(notebook_path("zh", entry)) + ":\n" + "\n".join(found)


def colon_slips(line: str) -> list[str]:
    """Colons that do not match their label in a Chinese output line: a label with Chinese in it ends with
    the full-width "：", a label of code or Latin letters with ":" (``x.grad:``, ``第 1 步：``).  A label is
    the text since the start of the line or the last separator; a colon inside a token (``cuda:0``,
    ``00:03``) is not a label's."""
    import re

    slips = []
    for m in re.finditer(r"[:：]", line):
        before, after = line[: m.start()], line[m.end() :]
        if m.group() == ":" and (after[:1].isalnum() or before[-1:].isdigit() and after[:1].isdigit()):
            continue  # inside a token
        label = re.split(r" {2,}|[，；。（）:：]", before)[-1].strip()
        if not label:
            continue
        chinese = any("\u4e00" <= ch <= "\u9fff" for ch in label)
        if chinese and m.group() == ":":
            slips.append(f"{label}:")
        elif not chinese and m.group() == "：":
            slips.append(f"{label}：")
    return slips


def test_colon_slips_are_found():
    assert colon_slips("x.grad 的计算图又回到了 x: True") == ["x.grad 的计算图又回到了 x:"]
    assert colon_slips("set_to_none=True： w.grad = None") == ["set_to_none=True："]
    assert colon_slips("第 1 步：SumBackward0 (loss)   收到 tensor(1.)") == []
    assert colon_slips("e: True True device: cuda:0   训练: 100%|█| 1/1 [00:03<00:00]") == ["训练:"]
    assert colon_slips("还没作答：把 None 换成你的答案。") == []


@pytest.mark.parametrize("item", ZH, ids=lesson_id)
def test_printed_labels_use_one_kind_of_colon(item):
    """A Chinese label ends with "：", a label that is code with ":" (the mix was a slip of the translation)."""
    from lesson_sources import notebook_path

    _, entry = item
    nbformat = pytest.importorskip("nbformat")
    stored = nbformat.read(str(notebook_path("zh", entry)), as_version=4)
    found = []
    for cell in stored.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                for line in out.get("text", "").splitlines():
                    if re.search(r"\b\w*(?:Error|Warning)\b:", line):
                        line = line[: re.search(r"\b\w*(?:Error|Warning)\b:", line).start()]
                    found += [f"{cell.id}: {slip} in {line.strip()!r}" for slip in colon_slips(line)]
    assert not found, "\n".join(found)


def test_english_in_an_output_is_found():
    """The slips this test was written for are found; code and PyTorch's words are not."""
    header = "mode           context            graph recorded  dropout on  stats updated  inference tensor"
    assert english_words(header, {"mode", "context"}) == [
        "graph",
        "recorded",
        "dropout",
        "on",
        "stats",
        "updated",
        "inference",
    ]
    assert english_words("sigmoid 之后 h += skip：        error", {"sigmoid", "h", "skip"}) == ["error"]
    bar = "training: 100%|██████████| 115/115 [00:00<00:00, 332.67batch/s, epoch 5/5 loss 0.0181]"
    assert english_words(bar, {"train"}) == ["training", "epoch", "loss"]
    code = "w1.grad: tensor([3.], device='cuda:0')   0.weight  type=Parameter   x：RuntimeError: Trying to backward"
    assert english_words(code, set()) == []
