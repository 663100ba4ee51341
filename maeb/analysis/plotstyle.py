"""What every publication figure shares: the matplotlib style, the marker and line cycles, the Figure
record and the lazy pyplot import (matplotlib is an optional extra). The figure modules
(maeb.analysis.figures, corrfig, scatterfig, layerfig) all import this one and none imports another
for these, so each can be read, and changed, without the others loading."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from ..core.errors import MaebError
from . import figlayout as lay

FORMATS = ("pdf", "svg", "png")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINES = ("-", "--", ":", "-.")
STYLE = {
    "svg.fonttype": "none",  # text stays text: searchable, and the page's fonts draw it
    "pdf.fonttype": 42,  # TrueType in the PDF: journals reject Type 3 fonts
    "font.size": lay.FONT,  # and never under lay.MIN_FONT at the width the figure is drawn at
    "xtick.labelsize": lay.SMALL,
    "ytick.labelsize": lay.SMALL,
    "axes.titlesize": lay.FONT,
    "axes.labelsize": lay.FONT,
    "legend.fontsize": lay.SMALL,
    "font.family": "DejaVu Sans",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "svg.hashsalt": "maeb",  # the same figure gives the same SVG bytes (ids are otherwise random)
}
# no creation date in the files: the same results give the same bytes
METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {}}
GREY = lay.GREY


@dataclass
class Figure:
    """One drawn figure: its file stem, a one-line caption, the matplotlib figure, files written beside it
    (name -> text) and lines for the person plotting (a figure showing only the first models says so)."""

    name: str
    caption: str
    figure: object  # matplotlib.figure.Figure (imported lazily: matplotlib is an optional extra)
    extras: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or one clear error naming the extra to install."""
    try:
        import matplotlib
    except ImportError:
        raise MaebError("figures need matplotlib: pip install 'maeb[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def MaxNLocator(**kwargs):  # noqa: N802
    """matplotlib's MaxNLocator, imported when a figure is drawn (matplotlib is an optional extra)."""
    from matplotlib.ticker import MaxNLocator as locator

    return locator(**kwargs)


def label(text: str, width: int = 18) -> str:
    """'AudioMultilabelClassification' -> 'Audio Multilabel\\nClassification': a panel title that fits its panel."""
    return "\n".join(textwrap.wrap(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text), width)) or text


def name(model: str, width: int = 60) -> str:
    """A model name as a figure draws it: clipped to `width` characters in its middle, because one very long name
    collapsed the axes and made constrained layout run for minutes (the page's table keeps it whole)."""
    return lay.short(model, width)


DISTINCT = 20  # marker x line style pairs before they repeat (10 markers, 4 lines): past it two lines look alike


def fit_legend(n_panels: int, width: float, labels: list[str], panel_in: float = 2.2) -> tuple[list[str], str]:
    """The runs a figure of line panels (figlayout.panels) draws, and the note naming the rest: at most DISTINCT
    (the styles repeat after) and at most what the legend holds under panels of 1.4 in within MAX_HEIGHT, with
    the note over them. A legend of 67 runs at a column's width had run over the panels."""
    ncols = max(1, min(n_panels, int(width // panel_in)))
    nrows = -(-n_panels // ncols)
    entry = max((lay.text_width(name(k)) for k in labels), default=0.0) + 26  # as figlayout.panels measures it
    legend_cols = max(1, min(len(labels) or 1, int(width * 72 // entry)))
    keep, note = min(len(labels), DISTINCT), ""
    while keep > 1:
        head = f"the first {keep} of {len(labels)} lines drawn (styles repeat past {DISTINCT}); not drawn: "
        note = lay.name_list(head, labels[keep:], width)
        room = lay.MAX_HEIGHT - nrows * 1.4 - 0.3 - lay.note_height(note)
        if -(-keep // legend_cols) * lay.SMALL * 1.4 / 72 <= room:
            break
        keep -= 1
    else:
        note = lay.name_list(f"the first of {len(labels)} lines drawn; not drawn: ", labels[1:], width)
    return labels[:keep], note if keep < len(labels) else ""


def note_above(fig, note: str) -> None:
    """The note naming what a figure leaves out, over it, the figure made taller by what it takes (up to
    MAX_HEIGHT): constrained layout keeps it clear of the panels and of the legend below."""
    if note:
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, min(lay.MAX_HEIGHT, h + lay.note_height(note)))
        fig.suptitle(note, x=0.01, ha="left", fontsize=lay.SMALL, color=GREY)
