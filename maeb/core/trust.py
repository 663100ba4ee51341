"""Whether maeb may import code that a spec or a model entry names (`type = "module:Class"`,
`family = "module:Class"`), or that ships with a model's weights (a family that loads its checkpoint
with transformers' trust_remote_code: the folder's or hub repository's own .py files). A spec file
is data a user may have downloaded; importing the module it names runs that module's code, from the
current folder too, and a weights folder is no more trusted, so either happens only when the user said so:
`--allow-code` on the command line or MAEB_ALLOW_CODE=1 (read by the fronts, maeb.core.environment),
or allow_code() from Python. maeb's own modules (maeb.*) need no permission."""

from __future__ import annotations

from .errors import MaebError

HOW = "pass --allow-code (or set MAEB_ALLOW_CODE=1; from Python, maeb.core.trust.allow_code())"
_allowed = False  # per process, as imports are


def allow_code(allowed: bool = True) -> None:
    """Let specs and entries name modules outside maeb (or stop letting them)."""
    global _allowed
    _allowed = bool(allowed)


def code_allowed() -> bool:
    """Whether modules outside maeb may be imported on a spec's or an entry's word."""
    return _allowed


def is_own(module: str) -> bool:
    """Whether a module is maeb's own (imported without permission)."""
    return module == "maeb" or module.startswith("maeb.")


def require_code(ref: str, what: str, error: type[MaebError]) -> None:
    """Before importing the module of `ref` ("module:Class"): `error` naming `what` and the opt-in
    when it is outside maeb and code is not allowed."""
    module = ref.split(":", 1)[0]
    if not is_own(module) and not _allowed:
        raise error(
            f"{what} {ref!r} would import and run module {module!r} from outside maeb (the current folder or "
            f"sys.path); refused: if you trust it, {HOW}"
        )


def require_model_code(model: str, error: type[MaebError]) -> None:
    """Before loading a checkpoint with the Python code that ships beside its weights
    (trust_remote_code): `error` naming the model and the opt-in when code is not allowed. That code
    came with the download, not with maeb or an installed package."""
    if not _allowed:
        raise error(
            f"model {model!r} would import and run the Python code of its weights folder or hub repository "
            f"(trust_remote_code); refused: if you trust it, {HOW}"
        )
