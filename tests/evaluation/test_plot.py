"""``evaluate --plot``: one colour per model, one line style per sample, the legend outside the
data, ticks at the sizes evaluated, a title naming the samples (read back from the figure)."""

from __future__ import annotations

import pytest

import bytepair
from bytepair.evaluation.plot import MAX_LABELS, curves_figure, size_labels

from helpers import KJV, MULTILINGUAL

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def table():
    lines = MULTILINGUAL.read_text("utf-8").splitlines()
    corpus = bytepair.Files(str(KJV), per_line=True)
    models = {f"{pattern}": bytepair.train(corpus, vocab_size=600, pretokenize=pattern, progress=False)
              for pattern in ("gpt2", "cl100k", "o200k", "none")}
    samples = {"en": lines[:5], "ru": lines[6:10], "zh": lines[11:14]}
    return bytepair.evaluate(models, samples, step=64)


def drawn(figure):
    axes = figure.axes[0]
    return axes, {line.get_gid(): line for line in axes.get_lines()}


def test_one_colour_per_model_one_style_per_sample(table):
    axes, lines = drawn(curves_figure(table))
    models = [m["name"] for m in table.models]
    samples = ["en", "ru", "zh"]
    assert set(lines) == {f"{m}\0{s}" for m in models for s in samples}
    colours = {m: {lines[f"{m}\0{s}"].get_color() for s in samples} for m in models}
    assert all(len(c) == 1 for c in colours.values())
    assert len({c.pop() for c in colours.values()}) == len(models)
    styles = {s: {lines[f"{m}\0{s}"].get_linestyle() for m in models} for s in samples}
    assert all(len(c) == 1 for c in styles.values())
    assert len({c.pop() for c in styles.values()}) == len(samples)
    # Each line is the table's numbers.
    for row in table.rows:
        line = lines[f"{row['model']}\0{row['sample']}"]
        assert row["bytes_per_token"] == dict(zip(line.get_xdata(), line.get_ydata()))[row["vocab_size"]]


def test_ticks_are_the_sizes_evaluated(table):
    axes, _ = drawn(curves_figure(table))
    sizes = sorted({row["vocab_size"] for row in table.rows})
    major = [int(t) for t in axes.xaxis.get_majorticklocs()]
    minor = [int(t) for t in axes.xaxis.get_minorticklocs()]
    assert sorted(major + minor) == sizes
    assert major == size_labels(sizes) and sizes[-1] in major and len(major) <= MAX_LABELS
    labels = [t.get_text() for t in axes.get_xticklabels()]
    assert labels == [f"{s:,}" for s in major]


def test_legend_outside_the_data_and_a_title(table):
    figure = curves_figure(table)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    plotted = axes.get_window_extent(renderer)
    legends = figure.legends
    assert len(legends) == 1
    assert [t.get_text() for t in legends[0].get_texts()] == [
        "model", *[m["name"] for m in table.models], "sample", "en", "ru", "zh"]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert box.x0 >= plotted.x1, "a legend overlaps the axes"
        assert box.x1 <= figure.bbox.x1 + 1, "a legend is cut off"
    assert axes.get_title() == "Bytes per token on samples en, ru, zh"


@pytest.mark.parametrize("sizes, most, expected", [
    ([512], 10, [512]),
    ([256 * k for k in range(1, 11)], 10, [256 * k for k in range(1, 11)]),
    ([256 * k for k in range(1, 12)], 10, [256 * k for k in range(1, 12) if k % 2]),
    ([8192 * k for k in range(1, 17)], 10, [16384 * k for k in range(1, 9)]),
])
def test_size_labels(sizes, most, expected):
    assert size_labels(sizes, most) == expected


def test_the_png(table, tmp_path):
    from matplotlib.image import imread

    path = tmp_path / "curves.png"
    table.plot(path)
    assert imread(path).shape[:2] == (576, 960)
