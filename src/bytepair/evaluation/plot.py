"""Pictures of an evaluation: bytes per token against vocabulary size.

matplotlib is optional (``pip install 'bytepair[plot]'``). The figure is drawn
with matplotlib's object interface, not pyplot, so no global backend or
figure state of the caller's is touched.
"""

from __future__ import annotations

import io
import os

from bytepair._util.errors import ArgumentError, MissingPackage
from bytepair._util.atomic import write_atomically

#: Formats matplotlib writes without extra packages, by file suffix.
FORMATS = ("png", "pdf", "svg")


def check_plot_path(path: str | os.PathLike) -> str:
    """The image format of ``path`` (its suffix), once matplotlib is known to be there.

    Raises ValueError for a suffix not in :data:`FORMATS` and ImportError
    (one line, naming the extra) without matplotlib: a command checks this
    before any work.
    """
    name = os.path.basename(os.fspath(path))
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix not in FORMATS:
        raise ArgumentError("plot", f": {os.fspath(path)!r} must end in one of "
                                    f"{', '.join('.' + f for f in FORMATS)}")
    _matplotlib()
    return suffix


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingPackage("plot", ": needs matplotlib: pip install 'bytepair[plot]'") from None
    return Figure, FigureCanvasAgg


#: One colour per model (matplotlib's "tab10", colour-blind friendlier than its default cycle).
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#e377c2",
           "#8c564b", "#7f7f7f", "#bcbd22")
#: One line style per sample, then one marker per model: curves that coincide stay apart.
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: The most size labels on the x axis; the other sizes evaluated keep a tick without a label.
MAX_LABELS = 10


def size_labels(sizes: list[int], most: int = MAX_LABELS) -> list[int]:
    """The sizes that get a label: every k-th, counted back from the largest (always labelled).

    >>> size_labels([256, 512, 768, 1024], 2)
    [512, 1024]
    >>> size_labels([8192 * k for k in range(1, 5)])
    [8192, 16384, 24576, 32768]
    """
    step = -(-len(sizes) // most)
    return sorted(sizes[::-1][::step])


def curves_figure(table):
    """The matplotlib :class:`~matplotlib.figure.Figure` of bytes per token against vocabulary size.

    One colour (and marker) per model, one line style per sample; ticks at
    the sizes evaluated (at most :data:`MAX_LABELS` labelled); the legends,
    models and samples, outside the axes on the right; a title naming the
    samples. ValueError for a table without samples.
    """
    if not table.rows:
        raise ArgumentError("plot", ": the evaluation has no samples to draw")
    Figure, FigureCanvasAgg = _matplotlib()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter

    lines: dict[tuple, list] = {}
    for row in table.rows:
        if row["bytes_per_token"] is not None:
            lines.setdefault((row["model"], row["sample"]), []).append(
                (row["vocab_size"], row["bytes_per_token"]))
    models = list(dict.fromkeys(model for model, _ in lines))
    samples = list(dict.fromkeys(sample for _, sample in lines))
    figure = Figure(figsize=(8, 4.8), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    sizes = sorted({size for points in lines.values() for size, _ in points})
    for (model, sample), points in lines.items():
        xs, ys = zip(*sorted(points))
        m, k = models.index(model), samples.index(sample)
        axes.plot(xs, ys, color=COLOURS[m % len(COLOURS)], linestyle=LINE_STYLES[k % len(LINE_STYLES)],
                  marker=MARKERS[m % len(MARKERS)] if len(xs) <= 40 else None, markersize=4,
                  linewidth=1.6, label=f"{model}: {sample}", gid=f"{model}\0{sample}")
    if sizes:
        labelled = size_labels(sizes)
        axes.xaxis.set_major_locator(FixedLocator(labelled))
        axes.xaxis.set_minor_locator(FixedLocator([s for s in sizes if s not in labelled]))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{int(value):,}"))
        if len(labelled) > 6:
            axes.tick_params(axis="x", labelrotation=35)
    axes.set_xlabel("vocabulary size")
    axes.set_ylabel("bytes per token (held-out)")
    axes.grid(True, alpha=0.3)
    axes.grid(True, which="minor", axis="x", alpha=0.12)
    axes.set_title(f"Bytes per token on {_sample_names(samples)}", fontsize="medium")
    if lines:
        # One legend beside the axes, never over the data: colour is the model, line the sample.
        header = Line2D([], [], linestyle="none")
        model_keys = [Line2D([], [], color=COLOURS[m % len(COLOURS)], marker=MARKERS[m % len(MARKERS)],
                             markersize=4, linewidth=2) for m in range(len(models))]
        sample_keys = [Line2D([], [], color="0.35", linestyle=LINE_STYLES[k % len(LINE_STYLES)],
                              linewidth=1.6) for k in range(len(samples))]
        legend = figure.legend([header, *model_keys, header, *sample_keys],
                               ["model", *models, "sample", *samples], loc="outside right upper",
                               fontsize="small", handlelength=2.6)
        for text in (legend.get_texts()[0], legend.get_texts()[len(models) + 1]):
            text.set_fontweight("bold")
    return figure


def _sample_names(samples: list[str]) -> str:
    shown = ", ".join(samples[:6]) + (f" and {len(samples) - 6} more" if len(samples) > 6 else "")
    return ("sample " if len(samples) == 1 else "samples ") + shown


def plot_curves(table, path: str | os.PathLike) -> None:
    """Draw bytes per token against vocabulary size (:func:`curves_figure`) into ``path``.

    Args:
        table: an :class:`bytepair.Evaluation` with at least one sample.
        path: the image to write (atomically); ``.png``, ``.pdf`` or ``.svg``.

    Raises ImportError (one line, naming the extra) without matplotlib, and
    ValueError for an unknown suffix or a table without samples.
    """
    suffix = check_plot_path(path)
    figure = curves_figure(table)
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix, dpi=120)
    write_atomically(path, buffer.getvalue())
