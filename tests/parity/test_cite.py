"""docs/cite.md's BibTeX of the benchmark equals the citation mteb 2.26.24's own MAEB record carries
(every field, authors in order), so the page cites what mteb's leaderboard cites.

Run with `.venv-parity/bin/python -m pytest tests/parity/test_cite.py`."""

from __future__ import annotations

import pytest

from tests.test_docs_site import DOCS, _bibtex_entries


def _normalised(entry: dict[str, str]) -> dict[str, str]:
    return {k.lower(): " ".join(v.split()) for k, v in entry.items()}


@pytest.mark.parametrize("benchmark", ["MAEB", "MAEB(audio-only)"])  # the two mteb 2.26.24 registers
def test_cite_page_equals_mteb_s_citation(benchmark):
    mteb = pytest.importorskip("mteb")
    if mteb.__version__ != "2.26.24":
        pytest.fail(f"mteb is {mteb.__version__}; the reference is 2.26.24 (bash scripts/parity_env.sh)")
    citation = mteb.get_benchmark(benchmark).citation
    ((key, theirs),) = _bibtex_entries(f"```bibtex\n{citation.strip()}\n```\n").items()
    page = _bibtex_entries((DOCS / "cite.md").read_text(encoding="utf-8"))
    assert key in page, f"docs/cite.md has no entry {key!r} (mteb's key for {benchmark})"
    assert _normalised(page[key]) == _normalised(theirs)
