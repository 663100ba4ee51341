"""Figure sizes for a paper and labels that never overlap (maeb.analysis.figures' helpers).

A figure is drawn at the width it will be printed at (`maeb plot --width`: a column, 3.3 in, a page,
7 in, or a number of inches) and at most MAX_HEIGHT tall, so its text is printed at the size it is
set in: never under MIN_FONT points. Where the models do not all fit at that size, the figure shows
the first ones of the board and names the rest in a note under it (--top N chooses how many).

Label placement works in display units after the layout is fixed: each label is tried at growing
distances around its point, and kept at the first place where its box lies inside the axes (clear
of the spines and their ticks) and overlaps no marker and no label placed before; a label with no
such place is left out of the plot and named in a note instead, so no two labels ever touch."""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core.errors import MaebError

COLUMN, PAGE = 3.3, 7.0  # inches: one column and the full text width of a two-column paper
MAX_HEIGHT = 9.0  # inches: a page's text block
MIN_FONT = 6.0  # points: the smallest text journals print
FONT = 7.0  # points: titles and axis labels
SMALL = 6.0  # points: tick labels, point labels, notes
ROW = 0.125  # inches between two model names at SMALL points (9 pt: a line and a half)
GREY = "#777777"


def width_inches(value: str | float | None) -> float:
    """'column' -> 3.3, 'page' -> 7.0, '5.5' -> 5.5 (None: page); one line naming the choices otherwise."""
    if value is None:
        return PAGE
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        inches = float(value)
    elif value in ("column", "page"):
        return COLUMN if value == "column" else PAGE
    else:
        try:
            inches = float(str(value).removesuffix("in"))
        except ValueError:
            raise MaebError(f"--width {value!r}: column (3.3 in), page (7 in) or a width in inches") from None
    if not 2.0 <= inches <= 20.0:
        raise MaebError(f"--width {value!r}: between 2 and 20 inches (a column is 3.3, a page 7)")
    return inches


@functools.lru_cache(maxsize=4096)
def text_width(text: str, size: float = SMALL) -> float:
    """The width of one line of text in points, as matplotlib's default font draws it."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width, _, _ = TextToPath().get_text_width_height_descent(text, FontProperties(family="DejaVu Sans", size=size), ismath=False)
    return float(width)


def wrap(text: str, width_in: float, size: float = SMALL) -> str:
    """`text` broken into lines that each fit `width_in` inches at `size` points (never inside a name:
    a break inside 'wavlm-base-plus-sd' would read as two models). Words are measured one by one (a
    line's width is their sum and the spaces', 3% to spare for kerning)."""
    limit = width_in * 72 / 1.03
    space = text_width("a b", size) - text_width("ab", size)
    lines: list[str] = []
    used = 0.0
    for word in text.split(" "):
        w = text_width(word, size)
        if lines and used + space + w <= limit:
            lines[-1] += " " + word
            used += space + w
        else:
            lines.append(word)
            used = w
    return "\n".join(lines)


def note_height(text: str) -> float:
    """Inches a wrapped note of SMALL points takes (its lines and a little room above)."""
    return 0.08 + (text.count("\n") + 1) * SMALL * 1.25 / 72 if text else 0.0


def name_list(head: str, names: list[str], width_in: float, max_lines: int = 8) -> str:
    """head + the names, wrapped to `width_in` inches, at most `max_lines` lines (then the names that fit and
    '... and K more'); '' without names."""
    if not names:
        return ""
    text = wrap(head + ", ".join(names), width_in - 0.1)
    if text.count("\n") < max_lines:
        return text
    low, high = 0, len(names)  # the most names that fit with the tail saying how many more
    while low < high:
        k = (low + high + 1) // 2
        trial = wrap(head + ", ".join(names[:k]) + f" ... and {len(names) - k} more", width_in - 0.1)
        low, high = (k, high) if trial.count("\n") < max_lines else (low, k - 1)
    return wrap(head + ", ".join(names[:low]) + f" ... and {len(names) - low} more", width_in - 0.1)


def rest_note(names: list[str], first: int, width_in: float) -> str:
    """'not shown (board rows 29–67): a, b, c' (name_list); '' when nothing is left out."""
    return name_list(f"not shown (board rows {first + 1}–{first + len(names)}): ", names, width_in)


class Room:
    """The height a figure of rows takes: fixed inches, plus a row per model (per panel row), plus its note."""

    def __init__(self, width: float, fixed: float, panel_rows: int = 1, per_panel: float = 0.45):
        self.width, self.fixed, self.panel_rows, self.per_panel = width, fixed, panel_rows, per_panel

    def __call__(self, n: int, note: str) -> float:
        return self.fixed + self.panel_rows * (self.per_panel + n * ROW) + note_height(note)


def fit_rows(total: int, top: int | None, room: Room, names: list[str]) -> tuple[int, str]:
    """How many of `total` models a figure shows, and the note naming the rest. room(n, note) is the
    height the figure takes for n models with `note` under it; the most that fit MAX_HEIGHT, at most
    `top` (at least one)."""
    room_for = int((MAX_HEIGHT - room.fixed - room.panel_rows * room.per_panel) / (room.panel_rows * ROW))
    n = max(1, min(total, top or total, room_for))
    while True:
        note = rest_note(names[n:], n, room.width)
        if n <= 1 or room(n, note) <= MAX_HEIGHT:
            return n, note
        n -= 1


def short(model: str, width: int) -> str:
    """A name clipped to `width` characters in its middle ('org/wavlm-…-plus-sd'): the end often tells two
    variants apart, the start the organisation."""
    if len(model) <= width:
        return model
    keep = width - 1
    return model[: math.ceil(keep / 2)] + "\u2026" + model[len(model) - keep // 2 :]


def name_chars(width_in: float, share: float = 0.42) -> int:
    """How many characters of a model name fit `share` of a figure's width at SMALL points (3.6 pt a
    character on average in DejaVu Sans, rounded down)."""
    return max(12, int(share * width_in * 72 / 3.7))


# --------------------------------------------------------------------------------------------------------------------
# labels that never overlap


def _angles() -> list[tuple[float, float]]:
    """Directions to try, right and left of the point first (labels read along the line)."""
    degrees = (0, 180, 30, 150, -30, -150, 60, 120, -60, -120, 90, -90, 15, 165, -15, -165, 45, 135, -45, -135)
    return [(math.cos(math.radians(d)), math.sin(math.radians(d))) for d in degrees]


RADII = (5, 9, 14, 20, 28, 38, 50, 64, 80)  # points from the point's centre


def _box(x: float, y: float, w: float, h: float, cos: float, sin: float) -> tuple[float, float, float, float, str, str]:
    """The box of a w x h label anchored at (x, y) on the side facing the direction (cos, sin)."""
    ha = "left" if cos > 0.3 else "right" if cos < -0.3 else "center"
    va = "bottom" if sin > 0.3 else "top" if sin < -0.3 else "center"
    x0 = x if ha == "left" else x - w if ha == "right" else x - w / 2
    y0 = y if va == "bottom" else y - h if va == "top" else y - h / 2
    return x0, y0, x0 + w, y0 + h, ha, va


def place_labels(ax, points: list[tuple[float, float, str]], marker_pt: float = 4.0, bars=()) -> list[str]:
    """Label each point (x, y in data units, text) where its box is inside the axes, clear of the ticks, and
    overlaps no marker, no error bar (bars: (x, low, high) in data units) and no other label; leader lines for
    labels set off their point. The figure's layout is fixed first (the boxes are measured in its final coordinates). Returns the texts that found no place."""
    fig = ax.figure
    fig.canvas.draw()
    fig.set_layout_engine("none")  # positions stay as measured: a later layout would move the axes under the labels
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72  # display units per point
    frame = ax.get_window_extent(renderer)
    inset = (ax.xaxis.get_major_ticks()[0].get_tick_padding() if ax.xaxis.get_major_ticks() else 3.5) * px + 1.5 * px
    left, bottom, right, top = frame.x0 + inset, frame.y0 + inset, frame.x1 - inset, frame.y1 - inset
    at = np.array([ax.transData.transform((x, y)) for x, y, _ in points]).reshape(-1, 2)
    r = (marker_pt / 2 + 1.0) * px
    taken = [(mx - r, my - r, mx + r, my + r) for mx, my in at]  # markers first: no label covers a point
    for x, low, high in bars:  # nor an interval (its caps a marker's width)
        (bx, by0), (_, by1) = ax.transData.transform((x, low)), ax.transData.transform((x, high))
        taken.append((bx - 2 * px, by0 - px, bx + 2 * px, by1 + px))
    gap = 1.0 * px  # a hair of white between two labels
    unplaced: list[str] = []
    order = sorted(range(len(points)), key=lambda i: _crowd(at, i))  # the crowded points choose first
    for i in order:
        x, y, text = points[i]
        probe = ax.text(0, 0, text, fontsize=SMALL)
        extent = probe.get_window_extent(renderer)
        probe.remove()
        w, h = extent.width + 2 * gap, extent.height + 2 * gap
        boxes = np.array(taken)
        found = None
        for radius in RADII:
            for cos, sin in _angles():
                cx, cy = at[i][0] + cos * radius * px, at[i][1] + sin * radius * px
                x0, y0, x1, y1, ha, va = _box(cx, cy, w, h, cos, sin)
                if x0 < left or y0 < bottom or x1 > right or y1 > top:
                    continue
                if np.any((boxes[:, 0] < x1) & (boxes[:, 2] > x0) & (boxes[:, 1] < y1) & (boxes[:, 3] > y0)):
                    continue
                found = (x0, y0, x1, y1, ha, va, radius, cos, sin)
                break
            if found:
                break
        if found is None:
            unplaced.append(text)
            continue
        x0, y0, x1, y1, ha, va, radius, cos, sin = found
        taken.append((x0, y0, x1, y1))
        # the text is drawn at the box's anchor (the gap kept inside the box, on every side)
        off = (cos * radius, sin * radius)
        arrow = {"arrowstyle": "-", "color": GREY, "lw": 0.4, "shrinkA": 0, "shrinkB": marker_pt / 2} if radius > 9 else None
        ax.annotate(
            text,
            (x, y),
            xytext=(off[0] + _nudge(ha, gap / px), off[1] + _nudge(va, gap / px)),
            textcoords="offset points",
            fontsize=SMALL,
            ha=ha,
            va=va,
            arrowprops=arrow,
            annotation_clip=False,
        )
    return unplaced


def _nudge(align: str, gap: float) -> float:
    """The label's anchor moved by the gap into its box (left/bottom: +gap, right/top: -gap, centred: 0)."""
    return gap if align in ("left", "bottom") else -gap if align in ("right", "top") else 0.0


def _crowd(at: np.ndarray, i: int) -> float:
    """Minus the number of points within 40 display units of point i (the crowded first), then left to right."""
    near = np.sum(np.hypot(*(at - at[i]).T) < 40)
    return -float(near) + at[i][0] * 1e-6


def grow_below(fig, note: str) -> None:
    """Add the note under a figure whose layout is fixed, the figure made taller by what the note takes
    (everything above stays where it is, in inches)."""
    if not note:
        return
    extra = note_height(note)
    w, h = fig.get_size_inches()
    boxes = [ax.get_position() for ax in fig.axes]
    fig.set_size_inches(w, h + extra)
    for ax, b in zip(fig.axes, boxes):
        ax.set_position([b.x0, (b.y0 * h + extra) / (h + extra), b.width, b.height * h / (h + extra)])
    fig.text(0.05 / w, 0.04 / (h + extra), note, fontsize=SMALL, color=GREY, ha="left", va="bottom")


def panels(plt, n: int, width: float, legend: list[str], panel_in: float = 2.2):
    """A figure of n line panels in rows that fit `width` (at least panel_in inches each), room below for a
    legend of `legend`; returns the figure, its used axes and the legend's number of columns."""
    ncols = max(1, min(n, int(width // panel_in)))
    nrows = -(-n // ncols)
    entry = max((text_width(k) for k in legend), default=0.0) + 26  # the line sample and the gap, in points
    legend_cols = max(1, min(len(legend) or 1, int(width * 72 // entry)))
    legend_in = -(-len(legend) // legend_cols) * SMALL * 1.4 / 72 + 0.1
    panel_h = min(2.4, max(1.4, (MAX_HEIGHT - legend_in - 0.2) / nrows))
    fig, axes = plt.subplots(
        nrows, ncols, squeeze=False, figsize=(width, min(MAX_HEIGHT, nrows * panel_h + legend_in + 0.2)), layout="constrained"
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n]), legend_cols
