"""Regenerate every generated page of the documentation in one command (`make regen`), or say which are
stale (`--check`, exit 1). A model family, task type, spec field, catalog task, command-line flag or
module added in the tree changes one of these pages, and its test fails until the page is rebuilt.

    python scripts/regen_docs.py           # rewrite the stale pages, name each one
    python scripts/regen_docs.py --check   # only name them; exit 1 if any is stale"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _script(name: str):
    """A module of scripts/ (not a package), loaded by path."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spec_reference() -> str:
    from maeb.spec import describe

    return describe.markdown()


def _catalog_page(name: str) -> Callable[[], str]:
    page = f"docs/catalog/{name}.md"
    return lambda: _script("docs_catalog").PAGES[page]()


# page -> (what renders it, the test that checks it)
PAGES: dict[str, tuple[Callable[[], str], str]] = {
    "docs/architecture.md": (lambda: _script("architecture").render(), "tests/test_architecture.py"),
    "docs/spec-reference.md": (_spec_reference, "tests/test_describe.py"),
    "docs/hub-layouts.md": (lambda: _script("hub_layouts_table").render(), "tests/test_hub_layouts.py"),
    "docs/reference/cli.md": (lambda: _script("cli_reference").render(), "tests/test_docs_site.py"),
    "docs/reference/options.md": (lambda: _script("cli_reference").render_options(), "tests/test_docs_site.py"),
    # the browsable catalog: one page per registry (scripts/docs_catalog.py)
    **{f"docs/catalog/{n}.md": (_catalog_page(n), "tests/test_docs_site.py") for n in ("tasks", "benchmarks", "models")},
}


def stale() -> dict[str, str]:
    """The pages whose committed text differs from what their generator writes today, with that text."""
    out = {}
    for page, (render, _test) in PAGES.items():
        text = render()
        path = ROOT / page
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out[page] = text
    return out


def main(argv: list[str]) -> int:
    """Rewrite (or with --check only list) the stale generated pages."""
    unknown = [a for a in argv if a != "--check"]
    if unknown:  # a misspelt --check must not rewrite the pages and exit 0
        print(f"regen_docs.py: unknown argument {unknown[0]!r}; the only flag is --check", file=sys.stderr)
        return 2
    changed = stale()
    for page, text in changed.items():
        if "--check" in argv:
            print(f"stale: {page} (checked by {PAGES[page][1]}); run: python scripts/regen_docs.py")
        else:
            (ROOT / page).parent.mkdir(parents=True, exist_ok=True)
            (ROOT / page).write_text(text, encoding="utf-8")
            print(f"wrote {page}")
    if not changed:
        print(f"all {len(PAGES)} generated pages are current")
    return 1 if changed and "--check" in argv else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
