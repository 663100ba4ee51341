"""Issue 46 item 15: `maeb plot` writes every figure as results are written (drawn in memory, then a
temporary file renamed into place): a plot killed or failing mid-figure leaves the figure that was
there, never a torn or empty one, and a full disk is one line, not a traceback."""

from __future__ import annotations

import errno

import pytest

from maeb.analysis import figures
from maeb.core.errors import OutputError

plt = pytest.importorskip("matplotlib.pyplot")


class _Killed(BaseException):
    """Stands in for the signal that kills a process mid-write (not an Exception: nothing catches it)."""


class _TornSave:
    """A matplotlib figure whose savefig writes half a file, then dies."""

    def savefig(self, target, **kwargs):
        if hasattr(target, "write"):
            target.write(b"%PDF-1.4 torn")
        else:
            with open(target, "wb") as handle:
                handle.write(b"%PDF-1.4 torn")
        raise _Killed


def _drawn(name="borda_ranks"):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return figures.Figure(name, "a caption", fig)


def test_a_figure_killed_mid_write_leaves_the_old_file(tmp_path):
    good = tmp_path / "borda_ranks.pdf"
    good.write_bytes(b"%PDF-1.4 the good figure")
    with pytest.raises(_Killed):
        figures.write([figures.Figure("borda_ranks", "x", _TornSave())], tmp_path, ["pdf"])
    assert good.read_bytes() == b"%PDF-1.4 the good figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["borda_ranks.pdf"]  # no temporary file left


def test_figures_are_whole_files_in_every_format(tmp_path):
    written = figures.write([_drawn()], tmp_path, ["pdf", "svg", "png"])
    assert [p.name for p in written] == ["borda_ranks.pdf", "borda_ranks.svg", "borda_ranks.png"]
    assert written[0].read_bytes().startswith(b"%PDF") and written[0].read_bytes().rstrip().endswith(b"%%EOF")
    assert written[1].read_text().rstrip().endswith("</svg>")
    assert written[2].read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)


def test_a_full_disk_is_one_line_and_leaves_no_empty_figure(tmp_path, monkeypatch):
    import os

    good = tmp_path / "borda_ranks.png"
    good.write_bytes(b"\x89PNG the good figure")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="free some space"):
        figures.write([_drawn()], tmp_path, ["png"])
    assert good.read_bytes() == b"\x89PNG the good figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["borda_ranks.png"]


@pytest.mark.parametrize("where", ["mkdir", "fsync"])
def test_plot_on_a_full_disk_is_one_line_naming_the_figure_and_leaves_nothing(tmp_path, monkeypatch, capsys, where):
    """`maeb plot` end to end: the folder cannot be made, or the disk fills while a figure is
    written: exit 2, one line naming the folder or figure, no 0-byte or temporary file."""
    import os
    from pathlib import Path

    from maeb.cli.commands import main

    from .test_uncertainty import write_result

    for model, value in (("org/a", 0.6), ("org/b", 0.5), ("org/c", 0.4)):
        for task in ("T1", "T2"):
            write_result(tmp_path / "res", model, task, [value, value + 0.01, value - 0.01])

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    out = tmp_path / "figs"
    if where == "mkdir":
        real = Path.mkdir
        monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: full() if self == out else real(self, *a, **k))
    else:
        monkeypatch.setattr(os, "fsync", full)
    capsys.readouterr()
    rc = main(["plot", str(tmp_path / "res"), "--out", str(out), "--draws", "40", "--format", "png"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("maeb: error")]
    assert rc == 2 and len(err) == 1 and "No space left on device" in err[0] and "free some space" in err[0]
    assert (str(out) in err[0]) and (where == "mkdir" or ".png" in err[0])
    assert not out.exists() or list(out.iterdir()) == []
