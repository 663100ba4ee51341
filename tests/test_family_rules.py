"""An outside family's record and rules: misspelt or misshapen rules refused naming the valid ones, its
declared packages enforced before its code runs and part of the embedding identity."""

from __future__ import annotations

import sys

import pytest

from maeb.core.errors import MaebError, ModelError
from maeb.encoders import ModelMeta, load_encoder, resolve_factory
from maeb.encoders.family import FAMILY_REGISTRY, Family, register_family

# item 8: register_family


def test_a_misspelt_rule_key_is_refused_naming_it_and_the_valid_ones(forget_family):
    forget_family("x-misspelt")
    with pytest.raises(ModelError, match=r"unknown key 'max_secnds'.*valid keys: .*max_seconds"):
        register_family(Family("x-misspelt", "x_mod:Enc", rules={"mteb-2.26": {"*": {"max_secnds": 4.0}}}))
    assert "x-misspelt" not in FAMILY_REGISTRY
    # a family's own key is accepted once declared
    register_family(Family("x-misspelt", "x_mod:Enc", rule_keys=("hop",), rules={"mteb-2.26": {"*": {"hop": 4}}}))


def test_rules_for_an_unknown_protocol_are_refused(forget_family):
    forget_family("x-proto")
    with pytest.raises(ModelError, match=r"unknown protocol rule set 'mteb-2.25'; known: mteb-2.26, paper"):
        register_family(Family("x-proto", "x_mod:Enc", rules={"mteb-2.25": {"*": {"max_seconds": 4.0}}}))


def test_an_outside_family_requires_is_enforced_before_its_code_runs(forget_family, tmp_path, monkeypatch):
    forget_family("x-needs")
    (tmp_path / "x_needs_mod.py").write_text("raise SystemExit('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_family(Family("x-needs", "x_needs_mod:Enc", requires=("surely-not-installed-pkg>=1",)))
    with pytest.raises(MaebError, match=r"requires surely-not-installed-pkg>=1.*pip install 'surely-not-installed-pkg>=1'"):
        resolve_factory("x-needs")
    assert "x_needs_mod" not in sys.modules


def test_a_users_missing_module_is_named_as_theirs_not_maebs_extras(forget_family, tmp_path, monkeypatch):
    forget_family("x-gone")
    forget_family("x-dep")
    register_family(Family("x-gone", "my_gone_package.enc:Enc"))
    with pytest.raises(ModelError) as told:
        resolve_factory("x-gone")
    assert "my_gone_package.enc not found on sys.path" in str(told.value) and "extras" not in str(told.value)
    (tmp_path / "x_dep_mod.py").write_text("import surely_not_installed_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_family(Family("x-dep", "x_dep_mod:Enc"))
    meta = ModelMeta(name="me/dep", family="x-dep", revision="none")
    with pytest.raises(ModelError) as told:
        load_encoder(meta)
    line = str(told.value)
    assert "x_dep_mod imports surely_not_installed_module" in line and "extras" not in line


# item 14: the cache identity keys on the family's declared packages

IDENT_MODULE = '''
import numpy as np


class Plain:
    """A wrapper that lists no `software` of its own."""

    sample_rate = 16000
    max_seconds = 10.0
    batching = "padded"

    def __init__(self, meta, device="cpu"):
        pass

    def config(self):
        return {}

    def embed_audio(self, clips):
        return np.zeros((len(clips), 4), dtype=np.float32)
'''


def test_the_embedding_identity_changes_when_a_declared_package_changes(forget_family, tmp_path, monkeypatch):
    from importlib import metadata

    from maeb.core import identity as ident
    from maeb.encoders import identity

    (tmp_path / "x_ident_mod.py").write_text(IDENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget_family("x-ident")
    register_family(Family("x-ident", "x_ident_mod:Plain", requires=("packaging>=20",)))
    meta = ModelMeta(name="me/plain", family="x-ident", revision="none")
    encoder = load_encoder(meta)
    before = identity(meta, encoder)
    assert before["software"]["packaging"] == metadata.version("packaging")
    real = metadata.version
    monkeypatch.setattr(ident.metadata, "version", lambda name: "999.0" if name == "packaging" else real(name))
    after = identity(meta, encoder)
    assert after["software"]["packaging"] == "999.0" and after != before
