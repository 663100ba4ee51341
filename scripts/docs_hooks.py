"""mkdocs hooks of the documentation site (mkdocs.yml `hooks:`), run by `make docs` and
tests/test_docs_offline.py's build.

404.html: mkdocs renders the error page with root-absolute links (/index.html, /assets/...), so a
server can serve it at any missing path. Without a site_url the site is meant to be opened from the
disk (README: open site/index.html), where /index.html is the disk's root and every link of 404.html
breaks; 404.html sits at the site's root, so links relative to it work from the disk and from a
server that serves the site at its root. With a site_url set (a deployed site) mkdocs's absolute
links are kept."""

from __future__ import annotations

from typing import Any


def on_template_context(context: dict[str, Any], template_name: str, config: Any) -> dict[str, Any]:
    """The error page's links relative to the site's root (where 404.html is written)."""
    if template_name == "404.html" and not config.site_url:
        context["base_url"] = "."
    return context
