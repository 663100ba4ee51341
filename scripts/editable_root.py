"""Put this clone's root on the sys.path of the Python that runs this script (a .pth file in its
site-packages), after an editable install (`make install-dev` runs it).

Why: git names a clone `maeb`, and from the folder that holds it, `python -m maeb` imports that
folder (it has no __init__.py) as a namespace package `maeb`: the current folder comes first on
sys.path, and setuptools' editable finder is asked only after every sys.path entry has been searched.
With the clone's root on sys.path the real package (maeb/maeb/__init__.py) is found in that search,
and a regular package always wins over a namespace one. `pip uninstall maeb` does not remove the
file: delete <site-packages>/maeb_clone_root.pth with it.

    .venv/bin/python scripts/editable_root.py"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "maeb_clone_root.pth"


def main() -> int:
    """Write the .pth file (one line: the clone's root); 2 if this is not a clone of maeb."""
    if not (ROOT / "maeb" / "__init__.py").is_file():
        print(f"{ROOT} holds no maeb/__init__.py: not a clone of maeb", file=sys.stderr)
        return 2
    site = Path(sysconfig.get_paths()["purelib"])
    (site / NAME).write_text(f"{ROOT}\n", encoding="utf-8")
    print(f"{site / NAME}: {ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
