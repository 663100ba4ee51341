"""A model entry's options checked when the catalog is read, against the options its family's
constructor takes. The constructor is read from the wrapper's source (ast), not imported, so
reading the catalog still imports no wrapper and no deep-learning code; only maeb's own families
are read this way (an outside family's options are checked when its model loads, by load_encoder).
A misspelt option (`max_secondz`) is told in one line before any run starts, not at load time."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from ..core.errors import SpecError
from .familyrecord import get_family
from .meta import ModelMeta

PACKAGE = Path(__file__).resolve().parent.parent  # maeb/
# what load_encoder passes itself: never an entry's option
NOT_OPTIONS = frozenset({"self", "meta", "device", "protocol"})


def check_entry_options(meta: ModelMeta, where: str) -> None:
    """Refuse, in one line naming the entry, its family and the allowed keys, an option of a model
    entry that its family's constructor does not take (maeb's own families; None known: no check)."""
    record = get_family(meta.family)
    if record is None or not record.factory.startswith("maeb."):
        return
    module, attr = record.factory.split(":", 1)
    allowed = constructor_options(module, attr)
    unknown = sorted(set(meta.options) - allowed) if allowed is not None else []
    if unknown:
        raise SpecError(
            f"{where}: option {', '.join(map(repr, unknown))} is not an option of family {meta.family!r} "
            f"({record.factory}); allowed: {', '.join(sorted(allowed or ())) or 'none'}"
        )


@functools.cache
def constructor_options(module: str, name: str, depth: int = 0) -> frozenset[str] | None:
    """The keyword options the class or function `name` of maeb module `module` takes (meta, device
    and protocol left out), read from the source; None where the source cannot say (a class whose
    __init__ comes from outside maeb or a decorator, a function taking **kwargs). A constructor
    taking **options adds those of its base class, to which maeb's wrappers pass them on."""
    tree = _tree(module)
    if tree is None or depth > 8:
        return None
    node = next((n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name), None)
    if node is None:  # a name the module imports from another of maeb's modules
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if (alias.asname or alias.name) == name:
                        source = _absolute(module, stmt)
                        return None if source is None else constructor_options(source, alias.name, depth + 1)
        return None
    if isinstance(node, ast.FunctionDef):
        own, forwards = _parameters(node.args)
        return None if forwards else own
    if node.decorator_list:  # a dataclass or the like writes its own __init__
        return None
    init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    base = node.bases[0].id if len(node.bases) == 1 and isinstance(node.bases[0], ast.Name) else None
    inherited = constructor_options(module, base, depth + 1) if base is not None else None
    if init is None:
        return inherited
    own, forwards = _parameters(init.args)
    if not forwards:
        return own
    return None if inherited is None else own | inherited


def _parameters(args: ast.arguments) -> tuple[frozenset[str], bool]:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return frozenset(n for n in names if n not in NOT_OPTIONS), args.kwarg is not None


def _tree(module: str) -> ast.Module | None:
    """The parsed source of one of maeb's modules (found by its path under maeb/, nothing imported)."""
    parts = module.split(".")
    if parts[0] != "maeb":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    return _parse(path) if path.is_file() else None


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _absolute(module: str, stmt: ast.ImportFrom) -> str | None:
    """The module an ImportFrom in `module` names, made absolute (None outside maeb)."""
    if not stmt.level:
        return stmt.module if stmt.module and stmt.module.startswith("maeb.") else None
    package = module.split(".")
    if not _tree_is_package(module):
        package = package[:-1]
    package = package[: len(package) - (stmt.level - 1)] if stmt.level > 1 else package
    return ".".join([*package, *([stmt.module] if stmt.module else [])])


def _tree_is_package(module: str) -> bool:
    return PACKAGE.joinpath(*module.split(".")[1:]).is_dir()
