"""maeb's command line on a disk that fills up: a file opened for writing under DIR takes LIMIT
bytes, then each further write fails with ENOSPC, as a full disk answers (a tiny file system of
our own would need root; this needs nothing).

  python -m tests.hub.diskfull DIR LIMIT run --model ... (maeb's arguments)

Python's file objects are wrapped (builtins.open, io.open, hence pathlib's Path.open): the hub
libraries write their downloads through them. Files written by C code (SQLite, Arrow) are not."""

from __future__ import annotations

import builtins
import errno
import io
import os
import sys


class FullDisk:
    """A file object whose writes fail once `room` bytes were written."""

    def __init__(self, handle, room: int, name: str):
        self._handle = handle
        self._room = room
        self._name = name

    def write(self, data):
        if len(data) > self._room:
            self._handle.write(data[: self._room])
            self._room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self._name)
        self._room -= len(data)
        return self._handle.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()

    def __iter__(self):
        return iter(self._handle)

    def __getattr__(self, name):
        return getattr(self._handle, name)


def install(folder: str, limit: int) -> None:
    real_open = io.open
    root = os.path.abspath(folder) + os.sep

    def open_(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        writing = any(m in mode for m in "wax+")
        if writing and isinstance(file, (str, os.PathLike)) and os.path.abspath(os.fspath(file)).startswith(root):
            return FullDisk(handle, limit, os.fspath(file))
        return handle

    builtins.open = io.open = open_


if __name__ == "__main__":
    install(sys.argv[1], int(sys.argv[2]))
    from maeb.cli.commands import main

    sys.exit(main(sys.argv[3:]))
