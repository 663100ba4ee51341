"""What a family needs installed: its pip requirements, which of them this environment lacks
(read from installed distributions; nothing is imported), the command that installs them, and the
import a wrapper makes of its family's package (require), failing in one line with that command."""

from __future__ import annotations

import importlib

from ..core.errors import MissingPackage
from .familyrecord import get_family
from .meta import SCORED_SIMILARITIES, ModelMeta


def install_hint(family: str, what: str | None = None) -> str:
    """The command that installs what a family needs."""
    record = get_family(family)
    extra = record.extra if record is not None else None
    if record is not None and record.no_deps:
        return f"pip install 'maeb[{extra}]' && pip install --no-deps {record.no_deps}"
    return f"pip install 'maeb[{extra}]'" if extra else f"pip install {what or 'the package named here'}"


def _has_extra(family: str) -> bool:
    record = get_family(family)
    return record is not None and record.extra is not None


def runnable_problems(meta: ModelMeta) -> list[str]:
    """Why a registered model cannot run in this environment (empty: it can, given its weights)."""
    problems = []
    if meta.similarity not in SCORED_SIMILARITIES:
        problems.append(f"similarity {meta.similarity}: maeb's evaluators score one vector per item")
    if not {"dense"} & set(meta.model_type) and meta.model_type:
        problems.append(f"model type {'/'.join(meta.model_type)}: not a dense embedding model")
    missing = missing_requirements(meta)
    if missing:
        hint = f" ({install_hint(meta.family)})" if _has_extra(meta.family) else ""
        problems.append("missing " + ", ".join(missing) + hint)
    return problems


def requirements(meta: ModelMeta) -> tuple[str, ...]:
    """The pip requirements of a model: its family's, then its entry's own, without repeats."""
    record = get_family(meta.family)
    return tuple(dict.fromkeys((*(record.requires if record is not None else ()), *meta.requires)))


def missing_requirements(meta: ModelMeta) -> list[str]:
    """The requirements of a model's family and entry that this environment does not satisfy
    (installed distributions and their versions; nothing is imported)."""
    return missing_of(requirements(meta))


def missing_of(requirements: tuple[str, ...]) -> list[str]:
    """The pip requirement strings this environment does not satisfy (nothing is imported)."""
    from importlib import metadata

    missing = []
    for text in requirements:
        name, spec = _split_requirement(text)
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if spec and not _satisfies(version, spec):
            missing.append(f"{text} (installed: {version})")
    return missing


def _split_requirement(text: str) -> tuple[str, str]:
    for i, char in enumerate(text):
        if char in "<>=!~ ;[":
            return text[:i], text[i:].strip()
    return text, ""


def _satisfies(version: str, spec: str) -> bool:
    try:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        return Version(version) in SpecifierSet(spec)
    except Exception:  # packaging absent or an odd version string: do not claim a mismatch
        return True


def missing_package(meta_name: str, family: str, exc: ImportError) -> MissingPackage:
    """One line for a package a model's code imports and this environment lacks: the package
    and the command that installs it."""
    package = exc.name or str(exc)
    how = install_hint(family) if _has_extra(family) else f"pip install {package}"
    return MissingPackage(
        f"model {meta_name!r} (family {family!r}) needs the Python package {package!r}, which is not installed here; install it with `{how}`"
    )


def require(module: str, family: str, what: str | None = None):
    """Import a family's package, or fail with the pip extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        how = install_hint(family, what or module)
        raise MissingPackage(
            f"family {family!r} needs {what or module}, which is not installed here ({exc}); install it with `{how}`"
        ) from exc
