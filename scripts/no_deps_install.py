"""Install a model package without the heavy frameworks its declared dependencies would pull in:
torch, torchaudio and torchvision always (their wheels pin the torch they were built with, so pip
would replace the installed one), and TensorFlow, JAX, Keras and the like unless the family's wrapper
imports them. The package itself goes in with --no-deps, then the dependencies that are kept, with
constraints.txt's pins. Says what it installs and what it left out, and why.

    .venv/bin/python scripts/no_deps_install.py torchcrepe==0.0.24
    .venv/bin/python scripts/no_deps_install.py basic-pitch==0.4.0 --wrapper maeb/encoders/pitch.py --dry-run

--wrapper (a file, or a module such as maeb.encoders.audioset) is read, not imported: the names of
its import statements and of its `require("x", ...)`, `import_module("x")` and `import_torch()`
calls are what it imports. A heavy dependency it imports is kept (torch's family excepted); without
--wrapper every heavy dependency is left out. pip's dry-run report of the kept dependencies is read
too, so a heavy package one of them pulls in is caught: the kept set is then installed pinned, one
by one, with --no-deps. --dry-run prints all of this and installs nothing.

A family whose package imports torchaudio at import time still needs a torchaudio built for your torch
(`pip install --no-deps torchaudio==<the version released with your torch>`); the tests stub it
instead (tests/family_fixtures.py: stub_torchaudio)."""

from __future__ import annotations

import argparse
import ast
import email
import importlib.metadata
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
# pip would resolve these against their own torch pin and replace the installed torch: left out
# even when the wrapper imports them (the installed torch is the one to use)
TORCH_FAMILY = {"torch", "torchaudio", "torchvision"}
# frameworks of hundreds of MB that a package often declares for one optional back end (basic-pitch
# declares TensorFlow beside its ONNX and TFLite runtimes): each distribution with the import names
# that show a wrapper really uses it
HEAVY = {
    "tensorflow": {"tensorflow"},
    "tensorflow-cpu": {"tensorflow"},
    "tensorflow-gpu": {"tensorflow"},
    "tensorflow-intel": {"tensorflow"},
    "tensorflow-macos": {"tensorflow"},
    "tensorflow-io": {"tensorflow_io"},
    "tensorflow-io-gcs-filesystem": {"tensorflow"},
    "tensorflow-text": {"tensorflow_text"},
    "tf-keras": {"tf_keras"},
    "keras": {"keras"},
    "tflite-runtime": {"tflite_runtime"},
    "jax": {"jax"},
    "jaxlib": {"jax", "jaxlib"},
    "flax": {"flax"},
    "paddlepaddle": {"paddle"},
    "mxnet": {"mxnet"},
    "cntk": {"cntk"},
}
# the calls by which maeb's wrappers import a package when a model is built (maeb.encoders.install.require,
# importlib.import_module); their first argument is the module's name
IMPORT_CALLS = {"require", "import_module"}


def _pip(*args: str, dry_run: bool) -> None:
    command = [sys.executable, "-m", "pip", "install", "-q", *args]
    print("+", " ".join(command[2:]))
    if not dry_run:
        subprocess.run(command, check=True)


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def wrapper_path(wrapper: str) -> Path:
    """The file of a wrapper given as a path, a module (maeb.encoders.audioset) or a factory
    (maeb.encoders.audioset:VggishEncoder)."""
    path = Path(wrapper)
    if path.suffix == ".py" or path.exists():
        return path
    module = wrapper.split(":")[0]
    return ROOT / (module.replace(".", "/") + ".py")


def wrapper_imports(source: str) -> set[str]:
    """The top-level names of the modules a wrapper's source imports, read from its syntax tree
    (nothing is imported): import statements anywhere in the file (wrappers import their package
    inside methods), the first argument of require(...) and import_module(...), and torch for
    import_torch(). Relative imports are maeb's own and left out."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called == "import_torch":
                names.add("torch")
            elif called in IMPORT_CALLS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names.add(first.value.split(".")[0])
    return names


def imported_distributions(imports: set[str]) -> set[str]:
    """The distributions (normalised names) behind a set of import names: the installed ones by
    their metadata's top-level names, the heavy frameworks by HEAVY's table, and the import name
    itself (most distributions are named as they import)."""
    installed = importlib.metadata.packages_distributions()
    out = {_normal(name) for name in imports}
    for name in imports:
        out.update(_normal(d) for d in installed.get(name, ()))
    out.update(dist for dist, names in HEAVY.items() if names & imports)
    return out


def leave_out_reason(name: str, imported: set[str] | None) -> str | None:
    """Why a dependency is left out, or None when it is installed. `imported`: the distributions the
    wrapper imports (None: no wrapper given)."""
    normal = _normal(name)
    if normal in TORCH_FAMILY:
        return "pip would replace the installed torch; bring a matching build yourself"
    if normal in HEAVY and (imported is None or normal not in imported):
        if imported is None:
            return "a heavy framework; pass --wrapper to keep the ones your wrapper imports"
        return "a heavy framework the wrapper does not import"
    return None


def declared(requirement: str) -> list[Requirement]:
    """The package's unconditional requirements (extras and other platforms' markers left out): from
    the installed distribution's metadata when that version is installed, else from its wheel's
    METADATA (pip downloads the wheel alone, nothing is installed)."""
    wanted = Requirement(requirement)
    try:
        installed = importlib.metadata.distribution(wanted.name)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is not None and wanted.specifier.contains(installed.version, prereleases=True):
        return requirements_of(str(installed.metadata))
    with tempfile.TemporaryDirectory() as folder:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-d",
            folder,
            requirement,
        ]
        if subprocess.run(command, capture_output=True, text=True).returncode != 0:
            raise SystemExit(f"no_deps_install: pip found no wheel for {requirement}")
        wheel = next(Path(folder).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            return requirements_of(archive.read(name).decode("utf-8"))


def requirements_of(metadata: str) -> list[Requirement]:
    """The Requires-Dist lines of a wheel's METADATA that apply here without extras."""
    out = []
    for text in email.message_from_string(metadata).get_all("Requires-Dist") or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            out.append(requirement)
    return out


def split(requirements: list[Requirement], imported: set[str] | None = None) -> tuple[list[Requirement], list[Requirement]]:
    """(what to install, what to leave out: torch's family, and the heavy frameworks the wrapper
    does not import; `imported` as for leave_out_reason)."""
    keep = [r for r in requirements if leave_out_reason(r.name, imported) is None]
    return keep, [r for r in requirements if leave_out_reason(r.name, imported) is not None]


def resolve(requirements: list[str]) -> list[dict] | None:
    """pip's dry-run report of installing `requirements` with constraints.txt: the `install` items
    (each with metadata name, version, requires_dist), or None where pip could not resolve them (no
    index here, an old pip): the transitive check is then skipped, and said so."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command = [sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--report", str(report)]
        command += ["-c", str(ROOT / "constraints.txt"), *requirements]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not report.exists():
            last = (done.stderr.strip().splitlines() or ["no report"])[-1]
            print(f"no_deps_install: pip's dry-run report failed ({last}); heavy packages pulled in indirectly not checked")
            return None
        return json.loads(report.read_text()).get("install", [])


def pulled_in(items: list[dict], imported: set[str] | None) -> list[tuple[str, str, str]]:
    """The packages of a pip report that would be left out: (name==version, who requires it, reason)."""
    out = []
    for item in items:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        reason = leave_out_reason(name, imported)
        if reason is None:
            continue
        by = [
            other["metadata"]["name"]
            for other in items
            if any(_normal(Requirement(r).name) == _normal(name) for r in other["metadata"].get("requires_dist") or [])
        ]
        out.append((f"{name}=={version}", ", ".join(by) or "requested", reason))
    return out


def main(argv: list[str] | None = None) -> int:
    """Install PACKAGE==VERSION with --no-deps, then its dependencies but the heavy ones it need not have."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requirement", help="the package, pinned: NAME==VERSION")
    parser.add_argument("--wrapper", help="the family's wrapper (file or module): heavy dependencies it imports are kept")
    parser.add_argument("--dry-run", action="store_true", help="print what it would install and leave out; install nothing")
    args = parser.parse_args(argv)
    wanted = Requirement(args.requirement)
    imported = None
    if args.wrapper:
        path = wrapper_path(args.wrapper)
        if not path.is_file():
            raise SystemExit(f"no_deps_install: wrapper {args.wrapper} not found (looked for {path})")
        imported = imported_distributions(wrapper_imports(path.read_text()))
    keep, left = split(declared(args.requirement), imported)
    kept = [str(r).split(";")[0].strip() for r in keep]
    _pip("--no-deps", args.requirement, dry_run=args.dry_run)
    indirect: list[tuple[str, str, str]] = []
    if kept:
        items = resolve(kept)
        indirect = pulled_in(items, imported) if items else []
        if indirect and items:
            # a kept dependency pulls in a heavy one: install the report's set, pinned, without it
            left_names = {_normal(p.split("==")[0]) for p, _, _ in indirect}
            pinned = [
                f"{i['metadata']['name']}=={i['metadata']['version']}"
                for i in items
                if _normal(i["metadata"]["name"]) not in left_names
            ]
            _pip("--no-deps", *pinned, dry_run=args.dry_run)
        else:
            if items:
                pins = ", ".join(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in items)
                print(f"pip would install: {pins or 'nothing new'}")
            _pip("-c", str(ROOT / "constraints.txt"), *kept, dry_run=args.dry_run)
    for requirement in left:
        print(f"left out: {str(requirement).split(';')[0].strip()} ({leave_out_reason(requirement.name, imported)})")
    for package, by, reason in indirect:
        print(f"left out: {package}, required by {by} ({reason})")
    done = "would be installed (--dry-run)" if args.dry_run else "installed"
    print(f"{wanted.name}: {done} with {len(keep)} of its {len(keep) + len(left)} declared dependencies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
