"""maeb 0.4.0 removed the import paths of 0.2 (flat modules), the folders' forwarding of old names,
the old names kept as aliases and the compatibility finder. Here: each removed path fails to import
and its new home imports, `import maeb` puts nothing on sys.meta_path, the changelog lists each
removed path with its home, and no module, test, script or documentation example uses a removed
path, or imports TaskSpec and DataSpec from anywhere but their one home, maeb.core.taskspec."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# what maeb 0.3.x forwarded (its maeb/_compat.py tables), kept here as the record of what 0.4.0 removed
MOVED = {
    "maeb.errors": "maeb.core.errors",
    "maeb.progress": "maeb.core.progress",
    "maeb.device": "maeb.core.device",
    "maeb.identity": "maeb.core.identity",
    "maeb.context": "maeb.core.context",
    "maeb.resample": "maeb.audio.resample",
    "maeb.fbank": "maeb.audio.fbank",
    "maeb.stream": "maeb.audio.stream",
    "maeb.windows": "maeb.audio.windows",
    "maeb.perturb": "maeb.audio.perturb",
    "maeb.perturbed": "maeb.audio.perturbed",
    "maeb.transforms": "maeb.data.transforms",
    "maeb.webdataset": "maeb.data.webdataset",
    "maeb.hub": "maeb.data.hub",
    "maeb.hub_rules": "maeb.data.hub_rules",
    "maeb.sampling": "maeb.data.sampling",
    "maeb.protocols": "maeb.encoders.protocols",
    "maeb.tiny": "maeb.encoders.tiny",
    "maeb.judge": "maeb.encoders.chat",
    "maeb.cache": "maeb.engine.cache",
    "maeb.embed": "maeb.engine.embed",
    "maeb.frames": "maeb.engine.frames",
    "maeb.generation": "maeb.engine.generation",
    "maeb.taskrecord": "maeb.engine.taskrecord",
    "maeb.similarity": "maeb.metrics.similarity",
    "maeb.textmetrics": "maeb.metrics.textmetrics",
    "maeb.catalog": "maeb.spec.catalog",
    "maeb.loader": "maeb.spec.loader",
    "maeb.derive": "maeb.spec.derive",
    "maeb.describe": "maeb.spec.describe",
    "maeb.scores": "maeb.results.read",
    "maeb.leaderboard": "maeb.analysis.leaderboard",
    "maeb.report": "maeb.analysis.report",
    "maeb.selection": "maeb.analysis.selection",
    "maeb.correlate": "maeb.analysis.correlate",
    "maeb.durations": "maeb.analysis.durations",
    "maeb.uncertainty": "maeb.analysis.uncertainty",
    "maeb.tables": "maeb.analysis.tables",
    "maeb.runner": "maeb.run.runner",
    "maeb.options": "maeb.run.options",
    "maeb.distributed": "maeb.run.distributed",
    "maeb.rayworker": "maeb.run.rayworker",
    "maeb.stability": "maeb.run.stability",
    "maeb.numeric_env": "maeb.run.numeric_env",
    "maeb.lite": "maeb.benchmarks.lite",
    "maeb.mmag_lite": "maeb.benchmarks.mmag_lite",
    "maeb.robust": "maeb.benchmarks.robust",
    "maeb.checkmodel": "maeb.cli.check_model",
    "maeb.environment": "maeb.core.environment",
    "maeb.benchmarks.lite.sounds": "maeb.synth.sounds",
    "maeb.benchmarks.lite.speech": "maeb.synth.speech",
    "maeb.benchmarks.lite.music": "maeb.synth.music",
    "maeb.benchmarks.mmag_lite.scenes": "maeb.synth.scenes",
}
# old module names that became folders: `from maeb.data import Table` was maeb.data.sources.Table
FOLDERS = {
    "maeb.audio": "maeb.audio.pipeline",
    "maeb.data": "maeb.data.sources",
    "maeb.spec": "maeb.spec.taskspec",
    "maeb.results": "maeb.results.write",
    "maeb.cli": "maeb.cli.commands",
}
# (module, old name) -> what to use instead
OLD_NAMES = {
    ("maeb.run.runner", "RunConfig"): "maeb.run.options.RunOptions",
    ("maeb.run.runner", "check_run_config"): "maeb.run.options.check_options",
    ("maeb.run.runner", "context_of"): "maeb.run.options.context_of",
    ("maeb.encoders", "FAMILIES"): "maeb.encoders.family.FAMILY_REGISTRY[name].factory",
    ("maeb.encoders", "FAMILY_REQUIRES"): "maeb.encoders.family.FAMILY_REGISTRY[name].requires",
    ("maeb.encoders", "FAMILY_EXTRAS"): "maeb.encoders.family.FAMILY_REGISTRY[name].extra",
    ("maeb.encoders", "NO_DEPS"): "maeb.encoders.family.FAMILY_REGISTRY[name].no_deps",
    ("maeb.encoders.hf", "_dtype"): "maeb.encoders.base.torch_dtype",
    ("maeb.encoders.hf", "_source"): "maeb.encoders.base.model_source",
}
SPEC_HOME = "maeb.core.taskspec"
SPEC_NAMES = {"TaskSpec", "DataSpec"}


def _home(dotted: str) -> tuple[str, str | None]:
    """A new home as (module, attribute or None): maeb.encoders.family.FAMILY_REGISTRY[name].factory
    is (maeb.encoders.family, FAMILY_REGISTRY)."""
    dotted = dotted.split("[", 1)[0]
    module, attr = dotted.rsplit(".", 1)
    try:
        if importlib.util.find_spec(dotted) is not None:
            return dotted, None
    except ModuleNotFoundError:  # a module's attribute, not a submodule
        pass
    return module, attr


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_removed_module_path_fails_and_its_new_home_imports(old):
    sys.modules.pop(old, None)
    with pytest.raises(ModuleNotFoundError, match=re.escape(old.rsplit(".", 1)[0] if old.count(".") > 1 else old)):
        importlib.import_module(old)
    assert importlib.import_module(MOVED[old]).__name__ == MOVED[old]


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_a_folder_forwards_no_name_of_the_module_it_replaced(folder):
    package = importlib.import_module(folder)
    module = importlib.import_module(FOLDERS[folder])
    public = [n for n in vars(module) if not n.startswith("_") and importlib.util.find_spec(f"{folder}.{n}") is None]
    assert public, f"{module.__name__} has no public names"
    for name in public:
        assert name not in vars(package), f"{folder} still offers {name}"
        with pytest.raises(AttributeError):
            getattr(package, name)
    assert not hasattr(package, "__getattr__"), f"{folder} still forwards names"


@pytest.mark.parametrize(("module", "name"), sorted(OLD_NAMES))
def test_an_old_name_is_gone_and_what_replaces_it_exists(module, name):
    assert not hasattr(importlib.import_module(module), name), f"{module}.{name}"
    home, attr = _home(OLD_NAMES[(module, name)])
    assert attr is None or hasattr(importlib.import_module(home), attr), OLD_NAMES[(module, name)]


def test_import_maeb_adds_no_finder_and_no_compatibility_module():
    """The finder every `import maeb` installed through 0.3.x is gone (a fresh interpreter, so no
    test's imports count)."""
    code = (
        "import sys\n"
        "before = list(sys.meta_path)\n"
        "import maeb, maeb.spec, maeb.data, maeb.audio, maeb.results, maeb.cli\n"
        "added = [type(f).__module__ + '.' + type(f).__name__ for f in sys.meta_path if f not in before]\n"
        "left = [m for m in ('maeb._compat', 'maeb._forward') if m in sys.modules]\n"
        "print(added, left, maeb.__version__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "[]", "0.4.0"]
    assert not (ROOT / "maeb" / "_compat.py").exists() and not (ROOT / "maeb" / "_forward.py").exists()


def _section(version: str) -> str:
    text = (ROOT / "docs" / "changelog.md").read_text(encoding="utf-8")
    return text[text.index(f"## {version}\n") :].split("\n## ", 1)[0]


def test_the_changelog_of_040_lists_every_removed_path_with_its_home():
    rows = {}
    for line in _section("0.4.0").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            rows[cells[0]] = cells[1]
    wanted = {f"`{old}`": f"`{new}`" for old, new in MOVED.items()}
    wanted |= {f"`{m}.{n}`": f"`{new}`" for (m, n), new in OLD_NAMES.items()}
    missing = [old for old, new in wanted.items() if not rows.get(old, "").startswith(new)]
    assert missing == []
    for folder, module in FOLDERS.items():
        row = next((new for old, new in rows.items() if old.startswith(f"`from {folder} import NAME`")), "")
        assert row.startswith(f"`from {module} import NAME`"), folder
    assert any(SPEC_HOME in new and "TaskSpec" in old for old, new in rows.items())


def _resolve(package: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _old_uses_in_python(source: str, package: str, where: str) -> list[str]:
    """Where Python source uses a removed path: an import of a moved module (or `-m` and its name in
    a command line), a name a folder forwarded, an old name imported or read from its module, or
    TaskSpec and DataSpec imported from anywhere but their home."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}
    found = []

    def removed(dotted: str) -> bool:
        return any(dotted == old or dotted.startswith(old + ".") for old in MOVED)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _resolve(package, node)
            for alias in node.names:
                full = f"{module}.{alias.name}"
                bound[alias.asname or alias.name] = full
                forwarded = module in FOLDERS and importlib.util.find_spec(full) is None
                spec_elsewhere = alias.name in SPEC_NAMES and module.startswith("maeb") and module != SPEC_HOME
                if removed(module) or removed(full) or forwarded or (module, alias.name) in OLD_NAMES or spec_elsewhere:
                    found.append(f"{where}:{node.lineno}: from {module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name] = alias.name
                if removed(alias.name):
                    found.append(f"{where}:{node.lineno}: import {alias.name}")
        elif isinstance(node, (ast.List, ast.Tuple)):  # a command line: [..., "-m", "maeb.robust", ...]
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            for flag, word in zip(words, words[1:]):
                if flag == "-m" and isinstance(word, str) and removed(word):
                    found.append(f"{where}:{node.lineno}: -m {word}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = bound.get(node.value.id, "")
            if (module, node.attr) in OLD_NAMES or (
                node.attr in SPEC_NAMES and module.startswith("maeb") and module != SPEC_HOME
            ):
                found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr} ({module})")
    return found


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
COMMAND = re.compile(r"-m\s+(maeb\.[\w.]+)")


def _old_uses_in_markdown(text: str, where: str) -> list[str]:
    """A page's python blocks read as Python; every block's `python -m maeb.x` read as a command."""
    found = []
    for lang, block in FENCE.findall(text):
        if lang in ("python", "py", "pycon"):
            code = "\n".join(line[4:] if line.startswith((">>> ", "... ")) else line for line in block.splitlines())
            try:
                found += _old_uses_in_python(code, "", where)
            except SyntaxError:
                found.append(f"{where}: a python block that does not parse")
        for module in COMMAND.findall(block):
            if any(module == old or module.startswith(old + ".") for old in MOVED):
                found.append(f"{where}: -m {module}")
    return found


def test_no_module_test_script_or_example_uses_a_removed_path():
    """maeb's modules, tests, scripts and the docs' examples use only today's paths (this file names
    the removed ones on purpose); the changelog lists them on purpose."""
    files = [p for folder in ("maeb", "tests", "scripts", "examples") for p in sorted((ROOT / folder).rglob("*.py"))]
    files = [p for p in files if p != Path(__file__).resolve()]
    uses = []
    for path in files:
        parts = path.relative_to(ROOT).with_suffix("").parts
        package = ".".join(parts[:-1] if parts[-1] != "__init__" else parts)
        uses += _old_uses_in_python(path.read_text(encoding="utf-8"), package, str(path.relative_to(ROOT)))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        if page.name != "changelog.md":
            uses += _old_uses_in_markdown(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    assert len(files) > 100 and len(pages) > 20
    assert uses == []


def test_the_scan_sees_each_kind_of_old_use():
    """The scan above finds every kind of old use (a scan that finds nothing would pass it)."""
    sample = (
        "import maeb.runner\n"
        "from maeb.run.runner import RunConfig\n"
        "from maeb.data import Table\n"
        "from maeb.data import sources\n"
        "import maeb.encoders as enc\n"
        "enc.FAMILY_EXTRAS\n"
        "ARGS = ['-m', 'maeb.robust']\n"
        "from maeb.benchmarks.lite import sounds\n"
        "from maeb.spec import TaskSpec\n"
        "from ..spec.taskspec import DataSpec\n"
        "from ..core.taskspec import TaskSpec\n"
        "from maeb.spec import taskspec as readers\n"
        "readers.TaskSpec\n"
    )
    uses = [u.split(": ", 1)[1] for u in _old_uses_in_python(sample, "maeb.run", "sample.py")]
    assert sorted(uses) == sorted(
        [
            "import maeb.runner",
            "from maeb.run.runner import RunConfig",
            "from maeb.data import Table",
            "-m maeb.robust",
            "from maeb.benchmarks.lite import sounds",
            "enc.FAMILY_EXTRAS (maeb.encoders)",
            "from maeb.spec import TaskSpec",
            "from maeb.spec.taskspec import DataSpec",
            "readers.TaskSpec (maeb.spec.taskspec)",
        ]
    )
    page = "Run it:\n\n```bash\npython -m maeb.lite --check\n```\n\n```python\nfrom maeb.spec import TaskSpec\n```\n"
    assert _old_uses_in_markdown(page, "p.md") == ["p.md: -m maeb.lite", "p.md:1: from maeb.spec import TaskSpec"]
