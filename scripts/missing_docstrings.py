"""List maeb's public functions, classes and methods without a docstring (issue 26: every public
function documented). Public: the name and its module's name do not start with '_'; a method may take
its docstring from the base class it overrides (inspect.getdoc). Exit 1 when any is missing.

    python scripts/missing_docstrings.py [--count]
"""

import importlib
import inspect
import pkgutil
import sys

import maeb


def public_modules():
    for info in pkgutil.walk_packages(maeb.__path__, "maeb."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]) or info.name.endswith("__main__"):
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError as exc:  # an optional family package is absent: its module cannot be read here
            print(f"skipped {info.name}: {exc}", file=sys.stderr)


def missing(modules=None) -> list[str]:
    """The dotted names of the public functions, classes and methods of `modules` (default: every
    public module of maeb) that have no docstring, sorted."""
    out = []
    for module in public_modules() if modules is None else modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                if not obj.__doc__:
                    out.append(f"{module.__name__}.{name}")
            elif inspect.isclass(obj):
                if not _own_doc(obj):
                    out.append(f"{module.__name__}.{name}")
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    func = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                    if inspect.isfunction(func) and not inspect.getdoc(
                        getattr(obj, attr, func) if not isinstance(member, property) else member
                    ):
                        out.append(f"{module.__name__}.{name}.{attr}")
    return sorted(set(out))


def _own_doc(cls) -> bool:
    # a dataclass without a docstring gets its signature as __doc__, and a subclass shows its base's: neither counts
    doc = vars(cls).get("__doc__") or ""
    return bool(doc) and not doc.startswith(cls.__name__ + "(")


if __name__ == "__main__":
    found = missing()
    if "--count" not in sys.argv:
        print("\n".join(found))
    print(f"{len(found)} public names without a docstring", file=sys.stderr)
    sys.exit(1 if found else 0)
