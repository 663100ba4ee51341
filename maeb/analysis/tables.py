"""The markup the reports share (the leaderboard in maeb.analysis.report, MAEB-robust, correlate): a markdown
table, an HTML table, the self-contained HTML page around them and the JSON a page carries. Each
report declares its columns and cells; how they are written is here, once."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence

# the CSS every page starts from; a report adds its own rules (sorting, first-column alignment)
BODY_CSS = "body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }"
CELL_CSS = "th, td { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: right; }"
# a page of several tables, each followed by a gap, headers on grey
PLAIN_CSS = (
    BODY_CSS,
    "table { border-collapse: collapse; font-size: 13px; margin-bottom: 1rem; }",
    CELL_CSS,
    "th { background: #f4f4f4; }",
)


def pct(value: float | None) -> str:
    """A score in [0, 1] as a percentage with one decimal; '' when missing."""
    return "" if value is None else f"{100 * value:.1f}"


# a `]` that closes a link's or an image's text: followed by its (destination) or its [label]
# (Python-Markdown allows one space before a label, none before a destination)
_LINK_CLOSE = re.compile(r"\](?=\(|\s?\[)")


def md_text(text: str) -> str:
    """Plain text for a markdown table cell or a line under a table: markdown renderers pass raw
    HTML through, so a name holding `<script>` or `<img onerror=...>` would run in a rendered README;
    `[click](javascript:...)` or `![x](...)` would be a live link or image (Python-Markdown, which
    MkDocs uses, links any scheme), so a `]` that would close a link's text is backslash-escaped (a
    name's own backslashes doubled first, so one cannot undo it; "model [setting]" stays as it
    reads); `|` and line breaks would split the row. `&` is left alone: an entity renders as text,
    never as a tag."""
    text = _LINK_CLOSE.sub(r"\\]", str(text).replace("\\", "\\\\"))
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown_table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A markdown table's lines: the header, its rule, one line per row of cells (plain text,
    escaped here by md_text)."""
    lines = ["| " + " | ".join(map(md_text, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(md_text, cells)) + " |" for cells in rows]
    return lines


# a spreadsheet reads a cell starting with one of these as a formula (CSV injection)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> object:
    """A CSV cell that no spreadsheet evaluates: text starting with = + - @ (or a tab or carriage
    return) gets a leading apostrophe; numbers pass unchanged (a negative score stays a number)."""
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def cell(value: object, text: str) -> str:
    """A table cell showing `text` (HTML) whose data-v holds the value a page's script sorts by."""
    return f'<td data-v="{"" if value is None else html.escape(str(value))}">{text}</td>'


def td(text: str) -> str:
    """A plain table cell of HTML `text`."""
    return f"<td>{text}</td>"


def html_table(head: Sequence[str], rows: Iterable[Sequence[str]], table_id: str | None = None, sep: str = "\n") -> str:
    """An HTML table: `head` as plain text (escaped here), each row a sequence of <td> strings
    (`cell`, `td`); `sep` stands between the header and the body."""
    ident = "" if table_id is None else f' id="{table_id}"'
    header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(f"<tr>{''.join(cells)}</tr>" for cells in rows)
    return f"<table{ident}><thead><tr>{header}</tr></thead>{sep}<tbody>{body}</tbody></table>"


def json_script(element_id: str, data: object) -> str:
    """`data` as JSON inside the page, for scripts and readers of the saved file. Every `<`, `>` and
    `&` is written as its \\u escape (still the same JSON), so no string can close the element or
    open `<!--` (which makes an HTML parser treat a later `</script>` as text, stopping the page's script)."""
    text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def html_page(title: str, css: Sequence[str], body: str) -> str:
    """A self-contained page: `title` (HTML), the CSS rules one a line, then `body` (HTML);
    nothing is fetched."""
    rules = "\n".join(css)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
{rules}
</style></head>
<body>
{body}
</body></html>
"""
