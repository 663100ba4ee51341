"""A model entry's options are checked when the catalog reads it, against the options its family's
constructor takes, read from the wrapper's source without importing it (maeb.encoders.signature)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from maeb.core.errors import SpecError
from maeb.encoders.family import FAMILY_REGISTRY
from maeb.encoders.signature import NOT_OPTIONS, constructor_options
from maeb.spec.catalog import read_model_file


def entry(folder, family: str, options: str):
    path = folder / "entry.toml"
    path.write_text(f'[[model]]\nname = "me/m"\nfamily = "{family}"\nrevision = "0"\noptions = {{{options}}}\n')
    return path


def test_a_misspelt_option_is_refused_when_the_entry_is_read(tmp_path):
    path = entry(tmp_path, "hf-ssl", "max_secondz = 10.0")
    with pytest.raises(SpecError) as caught:
        read_model_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path} model 'me/m': option 'max_secondz' is not an option of family 'hf-ssl' ")
    assert "(maeb.encoders.hf:SelfSupervisedEncoder); allowed: " in message and "max_seconds" in message
    assert "\n" not in message
    assert read_model_file(entry(tmp_path, "hf-ssl", "max_seconds = 10.0"))[0].options == {"max_seconds": 10.0}


def test_options_passed_on_to_the_base_class_are_allowed(tmp_path):
    # MMSEncoder takes target_lang and passes **options on to SelfSupervisedEncoder
    assert read_model_file(entry(tmp_path, "hf-mms", 'target_lang = "fra", frames = "conv"'))[0].options["frames"] == "conv"
    with pytest.raises(SpecError, match="option 'target_langs' is not an option of family 'hf-mms'"):
        read_model_file(entry(tmp_path, "hf-mms", 'target_langs = "fra"'))


def test_an_outside_class_is_not_read(tmp_path):
    # a `module:Class` entry names code maeb imports only when allowed: its options are checked at load
    assert read_model_file(entry(tmp_path, "somewhere_else:Encoder", "anything = 1"))[0].options == {"anything": 1}


def test_the_source_reading_agrees_with_the_imported_constructors():
    """For every built-in family whose wrapper imports here and takes no **kwargs, the options read
    from the source are exactly the constructor's (so the catalog check refuses what loading would)."""
    compared = 0
    for name, record in FAMILY_REGISTRY.items():
        module, attr = record.factory.split(":", 1)
        if not module.startswith("maeb."):
            continue
        static = constructor_options(module, attr)
        try:
            params = inspect.signature(getattr(importlib.import_module(module), attr)).parameters
        except ImportError:
            continue
        if any(p.kind == p.VAR_KEYWORD for p in params.values()):
            continue
        assert static == frozenset(params) - NOT_OPTIONS, name
        compared += 1
    assert compared >= 30
