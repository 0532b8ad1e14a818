"""Drawings and explain() in English and 简体中文: one convention (lang=, package default), CJK fonts
only in Chinese drawings, and make_dot's legend (including the dotted edge to a retained tensor)."""

from __future__ import annotations

import importlib
import re
import string

import pytest

import leafkit
from leafkit.viz import _graph, draw, explain, make_dot
from leafkit.viz._render import INSTALL_HINT, INSTALL_HINT_ZH, _failed_hint, localize_hint

dot_mod = importlib.import_module("leafkit.viz.dot")
explain_mod = importlib.import_module("leafkit.viz.explain")  # (leafkit.viz.explain is the function)
variables_mod = importlib.import_module("leafkit.viz.variables")

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_again():
    yield
    leafkit.set_language("en")


def _fields(s: str) -> set:
    return {f for _, f, _, _ in string.Formatter().parse(s) if f is not None}


@pytest.mark.parametrize(
    "table",
    [dot_mod.TEXT, variables_mod.TEXT, _graph.TEXT, explain_mod.TEXT],
    ids=["make_dot", "draw", "graph", "explain"],
)
def test_every_text_exists_in_both_languages_with_the_same_fields(table):
    assert set(table) == {"en", "zh"}
    assert set(table["en"]) == set(table["zh"])
    for key, en in table["en"].items():
        zh = table["zh"][key]
        if isinstance(en, dict):
            assert set(en) == set(zh)
            continue
        assert _fields(en) == _fields(zh), key


def test_the_language_setting():
    assert leafkit.get_language() == "en"
    leafkit.set_language("zh")
    assert leafkit.get_language() == "zh"
    leafkit.set_language("en")
    for bad in ("cn", "zh-CN", "EN", None, 1):
        with pytest.raises(ValueError, match=r"must be one of 'en', 'zh'"):
            leafkit.set_language(bad)
    assert leafkit.get_language() == "en"


def program(torch):
    x = torch.tensor([2.0], requires_grad=True)
    y = x.detach()
    h = x * 3
    h.retain_grad()
    z = (h**2).sum()
    return x, y, h, z


def test_draw_in_chinese_names_cjk_fonts_and_english_never_does(tk):
    x, y, h, z = program(tk)
    en = draw(x=x, y=y, h=h, z=z).source
    assert en == draw(x=x, y=y, h=h, z=z, lang="en").source
    assert not CJK.search(en) and "WenQuanYi" not in en and "Noto Sans CJK" not in en
    assert variables_mod.LEGEND in en
    zh = draw(x=x, y=y, h=h, z=z, lang="zh").source
    assert zh.count(dot_mod.CJK_FONTNAME) == 3  # graph, node and edge defaults
    assert "叶子张量" in zh and "非叶子张量" in zh and "共享存储" in zh and "计算图" in zh
    assert "is_leaf=True" in zh and "grad_fn=MulBackward0" in zh  # code stays code
    # the same drawing: same nodes and edges, only words and fonts differ
    node = re.compile(r"^\s*(n\d+) \[", re.M)
    edge = re.compile(r"^\s*(n\d+ -> n\d+)", re.M)
    assert node.findall(en) == node.findall(zh) and edge.findall(en) == edge.findall(zh)


def test_the_simulated_cuda_is_named_in_the_drawings_language(lk):
    """leafkit's simulated cuda reads "cuda:0 (simulated)" in an English drawing and "cuda:0（模拟）" in a
    Chinese one: the box, the text fallback and an unnamed leaf's box alike."""
    if lk.cuda.backend() != "simulated":
        pytest.skip("cuda is a real GPU here: nothing is simulated")
    a = lk.tensor([1.0], requires_grad=True)
    b = a.cuda()
    hidden = lk.ones(1, requires_grad=True, device="cuda")
    c = (hidden * 2).sum()
    en, zh = draw(a=a, b=b, c=c), draw(a=a, b=b, c=c, lang="zh")
    assert "device=cuda:0 (simulated)" in en.source and "device=cuda:0 (simulated)" in en.text
    assert "simulated" not in zh.source and "simulated" not in zh.text
    assert "device=cuda:0（模拟）" in zh.source and "device=cuda:0（模拟）" in zh.text
    assert zh.source.count("（模拟）") == en.source.count("(simulated)") == 3  # b, c and the unnamed leaf
    assert "device=cpu" in zh.source and "cpu（模拟）" not in zh.source


def test_the_package_default_applies_when_lang_is_none(tk):
    x, y, h, z = program(tk)
    leafkit.set_language("zh")
    assert draw(x=x, h=h).source == draw(x=x, h=h, lang="zh").source
    assert make_dot(z).source == make_dot(z, lang="zh").source
    assert explain(h, "h").text == explain(h, "h", lang="zh").text
    assert "浅蓝" in draw(x=x).source
    assert make_dot(z, lang="en").source != make_dot(z).source  # an explicit lang wins
    with pytest.raises(ValueError, match="lang must be one of"):
        draw(x=x, lang="fr")
    with pytest.raises(ValueError):
        make_dot(z, lang="Chinese")
    with pytest.raises(ValueError):
        explain(h, lang="")


def _legend(src: str) -> str:
    m = re.search(r'graph \[.*?label="([^"]*)"', src)
    return m.group(1) if m else ""


def test_make_dot_legend_names_what_is_drawn_and_only_that(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = x * 2
    plain = make_dot(y)
    leg = _legend(plain.source)
    assert "grey: backward node (grad_fn)" in leg and "light blue: leaf tensor" in leg and "green: output" in leg
    for absent in ("orange", "dotted", "double border", "purple", "freed"):
        assert absent not in leg
    assert "labeljust=l" in plain.source and "labelloc=b" in plain.source
    assert "label=" not in make_dot(y, legend=False).source.split("\n")[1]


def test_the_dotted_edge_to_a_retained_tensor_is_in_the_legend(tk):
    """Issue 12: make_dot's dotted edge to a retained (named non-leaf) tensor was in no legend."""
    x = tk.tensor(2.0, requires_grad=True)
    y = x**2
    z = y**2
    y.retain_grad()
    y.register_hook(lambda g: None)
    src = make_dot({"z": z}, params={"x": x, "y": y}).source
    assert "arrowhead=none style=dotted" in src
    leg = _legend(src)
    assert "dotted line" in leg and "retains grad" in leg
    assert "double border: retains_grad" in leg and "purple border: has hooks" in leg
    z.backward()
    leg = _legend(make_dot({"z": z}, params={"x": x, "y": y}, show_saved=True).source)
    assert "dashed, pale: freed by backward()" in leg
    zh = _legend(make_dot({"z": z}, params={"x": x, "y": y}, lang="zh").source)
    assert "点线" in zh and "retain_grad()" in zh and "双线边框" in zh and "已被 backward() 释放" in zh
    # every legend line is left-justified and not too long to read
    for line in leg.split("\\l")[:-1]:
        assert 0 < len(line) <= dot_mod.LEGEND_LINE


def test_make_dot_in_chinese_keeps_node_code_and_sets_the_legend_font(tk):
    x = tk.tensor([2.0], requires_grad=True)
    w = tk.tensor([1.0], requires_grad=True)
    y = (x * w).sum()
    y.backward()
    zh = make_dot(y, params={"x": x, "w": w}, show_saved=True, lang="zh").source
    assert f'fontname="{dot_mod.CJK_FONTNAME}"' in zh.split("\n")[1]  # the graph (legend) font
    assert "fontname=monospace" in zh  # nodes: torchviz's font
    assert "MulBackward0" in zh and "SumBackward0" in zh and "（已释放）" in zh
    assert "WenQuanYi" not in make_dot(y, params={"x": x, "w": w}, lang="en").source


def test_explain_in_chinese(tk):
    x = tk.tensor([2.0], requires_grad=True)
    y = x * 3
    en, zh = explain(y, "y"), explain(y, "y", lang="zh")
    assert en.reason == zh.reason == "non_leaf" and en.fix == zh.fix == "y.retain_grad()"
    assert "不是叶子张量" in zh.text and "反向传播" in zh.text and "y.retain_grad()" in zh.text
    assert "MulBackward0" in zh.text
    html = zh._repr_html_()
    assert "试试：" in html and "不是叶子张量：.grad 保持为 None" in html
    assert "这个张量" in explain(y, lang="zh").text
    y.sum().backward()
    assert "梯度" in explain(x, "x", lang="zh").text and "[3.]" in explain(x, "x", lang="zh").text


def test_the_text_fallback_speaks_the_drawings_language(tk, monkeypatch):
    from leafkit.viz import _render, clear_svg_cache

    x, y, h, z = program(tk)
    monkeypatch.setattr(_render, "dot_available", lambda: False)
    clear_svg_cache()
    zh = draw(x=x, h=h, lang="zh")._repr_mimebundle_()
    assert INSTALL_HINT_ZH in zh["text/plain"] and "变量（输出在上" in zh["text/plain"]
    en = draw(x=x, h=h)._repr_mimebundle_()
    assert INSTALL_HINT in en["text/plain"] and not CJK.search(en["text/plain"])
    assert INSTALL_HINT_ZH in make_dot(z, lang="zh")._repr_mimebundle_()["text/plain"]
    clear_svg_cache()


def test_localized_hints_quote_dot_as_it_is():
    assert localize_hint(INSTALL_HINT, "zh") == INSTALL_HINT_ZH
    failed = _failed_hint(b"Error: syntax error in line 1")
    zh = localize_hint(failed, "zh")
    assert zh.endswith("它的输出：Error: syntax error in line 1") and "Graphviz" in zh
    assert localize_hint(failed, "en") == failed


def test_collapsed_graphs_in_chinese(lk):
    x = lk.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(400):
        y = y * 1.0001
    zh = make_dot(y, lang="zh")
    assert "还有 396 个节点" in zh.source
    assert "还有 396 个节点" in zh.text


@pytest.mark.skipif(not __import__("shutil").which("dot"), reason="needs Graphviz's dot")
def test_chinese_drawings_render(tk):
    x, y, h, z = program(tk)
    png = draw(x=x, y=y, h=h, z=z, lang="zh").pipe(format="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    svg = make_dot(z, params={"x": x, "h": h}, lang="zh").pipe(format="svg").decode()
    assert "点线" in svg and "WenQuanYi Zen Hei" in svg


def test_set_language_zh_lets_matplotlib_draw_chinese(recwarn):
    """set_language("zh") adds an installed CJK font after matplotlib's own families: a Chinese title is drawn
    with no "Glyph missing" warning, and Latin text keeps the first family."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from leafkit import _lang

    before = list(matplotlib.rcParams["font.family"])
    try:
        leafkit.set_language("zh")
        font = _lang.matplotlib_cjk()
        if font is None:
            pytest.skip("no CJK font installed (apt-get install fonts-wqy-zenhei)")
        families = list(matplotlib.rcParams["font.family"])
        assert families[: len(before)] == before and families[-1] == font
        fig, ax = plt.subplots()
        ax.set_title("牛顿法：第 1 步 −1")
        fig.canvas.draw()
        plt.close(fig)
        assert not [w for w in recwarn if "missing from font" in str(w.message)]
    finally:
        leafkit.set_language("en")
        matplotlib.rcParams["font.family"] = before
