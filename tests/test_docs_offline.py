"""The built documentation site works opened from the disk with no network (the README says: open
site/index.html): no page, stylesheet or script loads anything from another host (a plain `<a href>`
link is the one external URL allowed), search runs from file:// (checked in Chromium where it is
installed), and 404.html's links resolve from the disk."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)  # http://, https:// and protocol-relative //host
# in CSS (files, <style>, style=""): url(...) and @import "..." that leave the site
CSS_EXTERNAL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])\s*((?:https?:)?//[^'")\s]+)""", re.IGNORECASE)
# in JavaScript: a URL given to src/href, url(), @import or importScripts
JS_EXTERNAL = re.compile(
    r"""(?:\b(?:src|href)\s*[=:]\s*|url\(\s*|@import\s+|importScripts\(\s*)['"`]?((?:https?:)?//[^'"`)\s]+)""",
    re.IGNORECASE,
)
URL_ATTRIBUTES = {"src", "href", "srcset", "poster", "data", "action", "formaction", "xlink:href", "background"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `make docs` builds it (strict), into a temporary folder."""
    out = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


class _Refs(HTMLParser):
    """Every URL an HTML file makes the browser fetch: (tag, attribute, url), plus inline CSS and scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str, str]] = []
        self.inline: list[tuple[str, str]] = []  # ("style"|"script", text)
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in URL_ATTRIBUTES:
                urls = [part.split()[0] for part in value.split(",") if part.strip()] if name == "srcset" else [value]
                self.refs += [(tag, name, url) for url in urls]
            elif name == "style":
                self.inline.append(("style", value))
            elif tag == "meta" and name == "content" and "url=" in value.lower():  # <meta http-equiv=refresh>
                self.refs.append((tag, name, value.split("=", 1)[1]))
        self._in = tag if tag in ("style", "script") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in:
            self.inline.append((self._in, data))


def _html_refs(path: Path) -> _Refs:
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def external_loads(site: Path) -> list[str]:
    """Each place the built site would fetch from another host, as 'file: what url'."""
    found = []
    for path in sorted(site.rglob("*")):
        where = path.relative_to(site)
        if path.suffix == ".html":
            parsed = _html_refs(path)
            found += [
                f"{where}: <{tag} {attr}> {url}"
                for tag, attr, url in parsed.refs
                if EXTERNAL.match(url) and (tag, attr) != ("a", "href")
            ]
            for kind, text in parsed.inline:
                pattern = CSS_EXTERNAL if kind == "style" else JS_EXTERNAL
                found += [f"{where}: inline <{kind}> {m.group(1)}" for m in pattern.finditer(text)]
        elif path.suffix == ".css":
            found += [f"{where}: {m.group(1)}" for m in CSS_EXTERNAL.finditer(path.read_text(encoding="utf-8"))]
        elif path.suffix == ".js":
            found += [f"{where}: {m.group(1)}" for m in JS_EXTERNAL.finditer(path.read_text(encoding="utf-8"))]
    return found


def test_site_loads_nothing_from_another_host(site):
    """No <script src>, <link href>, <img src>, CSS url()/@import or script-built src/href reaches another
    host: no web fonts, no CDN shim for search. Only <a href> links may point outside."""
    found = external_loads(site)
    assert not found, f"{len(found)} external loads in the built site, first: " + "; ".join(found[:5])


def test_the_check_finds_what_the_theme_loads_by_default(tmp_path):
    """The scan above can fail: the theme's defaults (Google fonts, the offline plugin's CDN shim) are
    found, and a plain external <a href> is not."""
    page = tmp_path / "index.html"
    page.write_text(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<script src="https://unpkg.com/iframe-worker/shim"></script>'
        "<style>@import 'https://x.example/a.css'; body{background:url(//cdn.example/b.png)}</style>"
        '<a href="https://example.org/">a plain link</a>',
        encoding="utf-8",
    )
    (tmp_path / "a.css").write_text("@font-face{src:url(https://fonts.gstatic.com/x.woff2)}", encoding="utf-8")
    (tmp_path / "b.js").write_text('s.src="https://cdn.example/c.js";', encoding="utf-8")
    found = external_loads(tmp_path)
    assert len(found) == 6, found
    assert not any("example.org" in f for f in found)


def test_theme_loaders_that_would_reach_a_host_stay_off(site):
    """The theme's bundle holds two loaders that fetch from a host when a page asks for them: mermaid
    (a diagram on the page) and the repository facts (repo_url set). No page triggers either."""
    for path in sorted(site.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        assert 'class="mermaid"' not in text, (
            f"{path.relative_to(site)} has a mermaid diagram: the theme loads mermaid from a CDN"
        )
        assert 'data-md-component="source"' not in text, (
            f"{path.relative_to(site)} shows repository facts (repo_url): the theme fetches them from the repository's API"
        )


def test_every_page_loads_the_local_worker_shim(site):
    """Search needs a Worker, which browsers refuse to a file:// page: every page loads the site's own
    stand-in (docs/assets/javascripts/iframe-worker-local.js), and the search index comes as a script."""
    assert (site / "search" / "search_index.js").is_file(), "no search/search_index.js: is the offline plugin on?"
    assert (site / "assets" / "javascripts" / "iframe-worker-local.js").is_file()
    for path in sorted(site.rglob("*.html")):
        srcs = [url for tag, attr, url in _html_refs(path).refs if tag == "script" and attr == "src"]
        assert any(s.endswith("assets/javascripts/iframe-worker-local.js") for s in srcs), (
            f"{path.relative_to(site)} does not load iframe-worker-local.js"
        )


def test_404_links_resolve_from_disk(site):
    """404.html (at the site's root) links to pages relatively, so opened from the disk its links work
    (mkdocs writes /index.html, which from file:// is the root of the disk)."""
    refs = _html_refs(site / "404.html").refs
    local = [(tag, attr, url) for tag, attr, url in refs if not EXTERNAL.match(url) and not url.startswith(("#", "data:"))]
    assert len(local) > 10, "404.html links to almost nothing"
    absolute = [url for _tag, _attr, url in local if url.startswith("/")]
    assert not absolute, f"404.html has {len(absolute)} root-absolute links, first: {absolute[:3]}"
    for _tag, _attr, url in local:
        target = url.split("#", 1)[0].split("?", 1)[0]
        if target:
            assert (site / target).exists(), f"404.html links to {url}, which is not in the site"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _search_from_disk(page: Path, query: str, profile: Path) -> str:
    """The DOM of `page` opened from file:// with `?q=query` (the theme opens its search with it),
    after the scripts ran, in headless Chromium with no network."""
    chromium = _chromium()
    assert chromium
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=10000",
            "--dump-dom",
            f"{page.as_uri()}?q={query}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"chromium failed on {page}: {done.stderr[-1500:]}"
    return done.stdout


@pytest.mark.skipif(_chromium() is None, reason="no Chromium (scripts/install_debian.sh installs it)")
@pytest.mark.parametrize("page", ["index.html", "reference/api.html"])
def test_search_works_from_disk(site, page, tmp_path):
    """Opened from file:// with no network, a page's search box is shown (the theme hides it when it
    cannot start its search worker) and a query finds pages."""
    dom = _search_from_disk(site / page, "parity", tmp_path / "profile")
    box = re.search(r'<div class="md-search"[^>]*>', dom)
    assert box, f"{page}: no search box in the page"
    assert "hidden" not in box.group(0), f"{page}: the search box is hidden from file:// (the search worker did not start)"
    meta = re.search(r'md-search-result__meta">([^<]*)<', dom)
    assert meta and re.match(r"[1-9]\d* matching document", meta.group(1)), (
        f"{page}: searching 'parity' from file:// found {meta.group(1) if meta else 'no result list'}"
    )
    assert 'class="md-search-result__link"' in dom, f"{page}: the result list has no links"
