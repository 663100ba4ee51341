"""Loading a model entry: the factory its family names (resolve_factory), the options checked
against the constructor before anything is built, the call Class(meta, device=..., **options) with
every failure said in one line (load_encoder), and the identity of what was loaded."""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from typing import Any

from ..core.errors import MaebError, MissingPackage, ModelError
from ..core.identity import check_env_options
from ..core.trust import require_code
from .checks import check_encoder
from .familyrecord import FAMILY_REGISTRY, get_family
from .install import install_hint, missing_of, missing_package, requirements
from .meta import ModelMeta
from .sides import has_audio, length_policy


def resolve_factory(family: str) -> Any:
    """The class (or function) that builds models of a family: a registered family's factory, or
    the object a "package.module:Class" family names; imports its module."""
    record = get_family(family)
    target = record.factory if record is not None else family
    if ":" not in target:
        raise ModelError(f"unknown model family {family!r}; known: {', '.join(sorted(FAMILY_REGISTRY))} or 'module:factory'")
    module_name, attr = target.split(":", 1)
    outside = record is not None and not module_name.startswith("maeb.")
    if outside and record is not None:
        # an outside record's `requires` is its author's promise: check it before importing their
        # code, so a missing package is named as theirs rather than surfacing as an odd ImportError
        unmet = missing_of(record.requires)
        if unmet:
            raise MissingPackage(
                f"family {family!r} (registered outside maeb, factory {target}) requires {', '.join(unmet)}, "
                f"not installed here; install it with `pip install {' '.join(repr(r.split(' (')[0]) for r in unmet)}`"
            )
    if record is None:  # a model entry's own module: imported only when the user said so
        require_code(target, "model family", ModelError)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if (record is None or outside) and missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise ModelError(_not_on_path(family, module_name)) from exc
        if record is None or outside:  # the user's own module imports, but a package it needs is missing
            raise ModelError(
                f"family {family!r}: module {module_name} imports {missing or exc}, which is not installed in this "
                f"environment; install it there"
            ) from exc
        how = (
            f"`{install_hint(family)}`"
            if record.extra is not None or record.no_deps
            else "maeb's extras (`make install`) or the package named here"
        )
        raise MissingPackage(f"family {family!r} needs a package that is not installed ({exc.name}); install {how}") from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise ModelError(f"family {family!r}: {module_name} has no {attr!r}") from exc


def _not_on_path(family: str, module_name: str) -> str:
    """Why the module a `module:Class` family names cannot be imported, and what to do."""
    import sys
    from pathlib import Path

    here = Path.cwd()
    top = module_name.split(".")[0]
    message = f"family {family!r}: module {module_name} not found on sys.path (current folder {here})"
    on_path = any(Path(entry or ".").resolve() == here.resolve() for entry in sys.path)
    if ((here / f"{top}.py").exists() or (here / top / "__init__.py").exists()) and not on_path:
        return (
            message + f"; {top} is in the current folder, which is not on sys.path when maeb runs as the `maeb` command: "
            f"run `python -m maeb ...` here, or set PYTHONPATH={here}"
        )
    return (
        message + f"; run `python -m maeb ...` from the folder that holds {top}.py, set PYTHONPATH to that folder, "
        "or install the module as a package"
    )


CONSTRUCTOR = (
    "maeb builds a model as Class(meta, device=..., **options): meta is the model's entry (maeb.encoders.ModelMeta: "
    "name, revision, options, ...), device 'cpu' or 'cuda', options the entry's options and --option values"
)


def _constructor_mismatch(factory, meta: ModelMeta, device: str, options: dict) -> str | None:
    """What stops `factory(meta, device=device, **options)` from binding, said against the contract
    (CONSTRUCTOR), or None when the call binds."""
    import inspect

    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None  # no signature to read (a builtin): the call itself says what is wrong
    try:
        sig.bind(meta, device=device, **options)
        return None
    except TypeError as exc:
        reason = str(exc)
    name = getattr(factory, "__qualname__", repr(factory))
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    first = positional[0] if positional else None
    # the entry goes first: a parameter named meta, or a required one that is no option (one with a default is an option)
    takes_meta = any(p.kind == p.VAR_POSITIONAL for p in params) or (
        first is not None
        and (first.name == "meta" or (first.default is first.empty and first.name not in options and first.name != "device"))
    )
    rest = [str(p) for p in params if p.name not in ("meta", "device", "self")]
    wanted = "def __init__(" + ", ".join(["self", "meta", 'device="cpu"', *rest]) + ")"
    if not takes_meta:
        return f"{name}{sig} does not take the model's entry as its first argument; {CONSTRUCTOR}: declare {wanted}"
    if "device" not in sig.parameters and not var_kw:
        return f"{name}{sig} takes no device; {CONSTRUCTOR}: declare {wanted}"
    unknown = [k for k in options if k not in sig.parameters and not var_kw]
    if unknown:
        return (
            f"{name}{sig} takes no option {', '.join(sorted(unknown))} (from the entry's options or --option); "
            f"rename or drop it, or add it to the constructor ({CONSTRUCTOR})"
        )
    return f"{name}{sig} cannot be called as {name}(meta, device={device!r}, **{sorted(options)}): {reason}; {CONSTRUCTOR}"


def load_encoder(
    meta: ModelMeta, device: str = "cpu", protocol=None, *, endpoints=None, raise_unexpected: bool = False, **overrides
):
    """Build the encoder for a registry entry; options in the entry, then overrides, go to the
    factory, and the protocol (maeb.encoders.protocols) to factories that take one. endpoints: values of
    the variables a factory's `from_environment` ({option: variable}) names, for the options the
    entry and overrides leave unset (the fronts read them: RunOptions.endpoints). raise_unexpected:
    a constructor's unexpected exception propagates with its traceback (RunOptions.debug)."""
    import inspect

    from .protocols import DEFAULT_PROTOCOL, get_protocol

    options = {**meta.options, **overrides}
    check_env_options(options, f"model {meta.name!r}: option")
    factory = resolve_factory(meta.family)
    accepts: Mapping[str, inspect.Parameter]
    try:
        accepts = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        accepts = {}
    check_option_values(meta, accepts, options)
    check_performance_declared(meta, factory, accepts)
    for key, variable in getattr(factory, "from_environment", {}).items():
        if options.get(key) is None and (endpoints or {}).get(variable):
            options[key] = endpoints[variable]
    if "protocol" in accepts:
        options["protocol"] = get_protocol(protocol or DEFAULT_PROTOCOL)
    mismatch = _constructor_mismatch(factory, meta, device, options)
    if mismatch:
        raise ModelError(f"model {meta.name!r} (family {meta.family!r}): {mismatch}")
    from ..data import hub

    downloads = hub.from_hub(meta.revision, options.get("path"))
    if downloads:
        hub.prepare()
    try:
        encoder = factory(meta, device=device, **options)
    except ImportError as exc:  # a package the wrapper imports when it builds the model
        raise missing_package(meta.name, meta.family, exc) from exc
    except TypeError as exc:
        raise ModelError(
            f"model {meta.name!r}: family {meta.family!r} raised TypeError while building it with options "
            f"{sorted(options)} ({exc})"
        ) from exc
    except (ValueError, OverflowError) as exc:  # the wrapper refused a value (its message names it)
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(options.items()) if k != "protocol")
        raise ModelError(f"model {meta.name!r}: bad option value ({exc}); options given: {shown}") from exc
    except OSError as exc:
        told = hub.explain(exc, "model", meta.name, meta.revision) if downloads else None
        raise ModelError(
            told
            or f"model {meta.name!r} could not be loaded ({hub.first_line(exc)}). Weights come from the hub at revision "
            f"{meta.revision}; offline, set the entry's `path` option to a local copy"
        ) from exc
    except MaebError:
        raise
    except Exception as exc:  # anything else a wrapper's constructor raises (a custom class's own check, say)
        if raise_unexpected:
            raise
        raise ModelError(
            f"model {meta.name!r}: building family {meta.family!r} raised {type(exc).__name__}: {hub.first_line(exc)} "
            "(set MAEB_DEBUG=1 for the traceback)"
        ) from exc
    check_encoder(meta, encoder)
    return encoder


def check_performance_declared(meta: ModelMeta, factory, accepts: Mapping[str, Any]) -> None:
    """The performance options a family declares (Family.performance) are options of its
    constructor: a misspelt one would leave the real knob in the cache key and declare nothing."""
    knobs = meta.performance_options
    if not knobs or not accepts or any(p.kind == p.VAR_KEYWORD for p in accepts.values()):
        return
    own = sorted(k for k in accepts if k not in ("self", "meta", "device", "protocol"))
    unknown = sorted(knobs - set(accepts))
    if unknown:
        name = getattr(factory, "__qualname__", repr(factory))
        raise ModelError(
            f"family {meta.family!r} declares performance option {', '.join(map(repr, unknown))}, which {name} does not "
            f"take; its options: {', '.join(own) or 'none'}"
        )


def check_option_values(meta: ModelMeta, accepts, options: dict) -> None:
    """Each option against the kind of its wrapper parameter's default, before anything is built:
    a finite number where the default is a number (positive for max_seconds), true/false where it
    is a boolean; one line naming the option (`--option max_seconds=abc` is not a traceback)."""
    for key, value in options.items():
        param = accepts.get(key) if hasattr(accepts, "get") else None
        default = getattr(param, "default", None)
        where = f"model {meta.name!r}: option {key}={value!r}"
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ModelError(f"{where} must be true or false (default {default})")
        elif isinstance(default, (int, float)):
            number = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str):
                try:
                    number = float(value)  # "inf", "nan": numbers a wrapper's float() would take
                except ValueError:
                    pass
            if number is None:
                raise ModelError(f"{where} must be a number (default {default})")
            if not math.isfinite(number):
                raise ModelError(f"{where} must be a finite number (default {default})")
            if key == "max_seconds" and number <= 0:
                raise ModelError(f"{where} must be a positive number of seconds (default {default})")


def identity(meta: ModelMeta, encoder, protocol: str | None = None, device: str = "cpu") -> dict:
    """The full encoder identity (maeb.core.identity) of a loaded encoder with the entry's own options."""
    from dataclasses import replace

    from ..core.identity import declared_identity, encoder_identity
    from .protocols import DEFAULT_PROTOCOL, get_protocol

    proto = get_protocol(protocol or DEFAULT_PROTOCOL)
    policy = replace(length_policy(encoder), resampler=proto.resampler) if has_audio(encoder) else None
    return encoder_identity(declared_identity(meta, meta.options, proto.name), encoder, policy, device, requirements(meta))
