"""Pictures of an evaluation: bytes per token against vocabulary size.

matplotlib is optional (``pip install 'bytepair[plot]'``). The figure is drawn
with matplotlib's object interface, not pyplot, so no global backend or
figure state of the caller's is touched.
"""

from __future__ import annotations

import io
import os

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
        raise ValueError(f"plot: {os.fspath(path)!r} must end in one of "
                         f"{', '.join('.' + f for f in FORMATS)}")
    _matplotlib()
    return suffix


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plot: needs matplotlib: pip install 'bytepair[plot]'") from None
    return Figure, FigureCanvasAgg


def plot_curves(table, path: str | os.PathLike) -> None:
    """Draw bytes per token against vocabulary size, one line per model and sample, into ``path``.

    Args:
        table: an :class:`bytepair.Evaluation` with at least one sample.
        path: the image to write (atomically); ``.png``, ``.pdf`` or ``.svg``.

    Raises ImportError (one line, naming the extra) without matplotlib, and
    ValueError for an unknown suffix or a table without samples.
    """
    suffix = check_plot_path(path)
    if not table.rows:
        raise ValueError("plot: the evaluation has no samples to draw")
    Figure, FigureCanvasAgg = _matplotlib()
    figure = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    lines: dict[tuple, list] = {}
    for row in table.rows:
        if row["bytes_per_token"] is not None:
            lines.setdefault((row["model"], row["sample"]), []).append(
                (row["vocab_size"], row["bytes_per_token"]))
    several_models = len(table.models) > 1
    for (model, sample), points in lines.items():
        sizes, values = zip(*sorted(points))
        label = f"{model}: {sample}" if several_models else sample
        axes.plot(sizes, values, marker="o" if len(points) < 40 else None, label=label)
    axes.set_xlabel("vocabulary size")
    axes.set_ylabel("bytes per token (held-out)")
    axes.grid(True, alpha=0.3)
    if lines:
        axes.legend(fontsize="small")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format=suffix)
    write_atomically(path, buffer.getvalue())
