"""A model class of one's own (`family = "module:Class"`): maeb builds it as Class(meta, device=...,
**options); a class that does not take meta, device or an option is told exactly what signature it
needs, and a module that cannot be imported from the current folder is told so, apart from a
package the module needs that is not installed."""

from __future__ import annotations

import sys
import uuid

import pytest

from maeb.cli.commands import main
from maeb.core.errors import ModelError
from maeb.encoders import ModelMeta, load_encoder

# their specs and entries name modules of their own (module:Class), which maeb imports only when allowed
pytestmark = pytest.mark.usefixtures("allow_code")

BODY = """
import numpy as np

class Enc:
    sample_rate = 16000
    max_seconds = 10.0
    min_samples = 0
    batching = "padded"

    def __init__(SIGNATURE):
        self.n_mels = n_mels

    def config(self):
        return {"n_mels": self.n_mels}

    def embed_audio(self, clips):
        return np.zeros((len(clips), self.n_mels), np.float32)
"""


def _module(folder, signature: str, head: str = "") -> str:
    name = f"mywrap_{uuid.uuid4().hex[:8]}"  # a fresh module per test: sys.modules keeps what was imported
    (folder / f"{name}.py").write_text(head + BODY.replace("SIGNATURE", signature))
    return name


def _meta(module: str, **options) -> ModelMeta:
    return ModelMeta(name="me/enc", family=f"{module}:Enc", revision="1", options=options)


def test_the_documented_constructor_builds(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _module(tmp_path, 'self, meta, device="cpu", n_mels=64, channels=1')
    encoder = load_encoder(_meta(module, n_mels=8, channels=2))
    assert encoder.n_mels == 8


def test_a_class_without_meta_is_told_the_signature_it_needs(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _module(tmp_path, "self, n_mels=64, channels=1")
    with pytest.raises(ModelError) as caught:
        load_encoder(_meta(module, n_mels=8, channels=2))
    message = str(caught.value)
    assert "does not take the model's entry as its first argument" in message
    assert "Class(meta, device=..., **options)" in message
    assert 'declare def __init__(self, meta, device="cpu", n_mels=64, channels=1)' in message
    assert "multiple values" not in message and "bad options" not in message


def test_a_class_without_device_or_with_an_unknown_option(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _module(tmp_path, "self, meta, n_mels=64")
    with pytest.raises(ModelError, match=r"takes no device; .*declare def __init__\(self, meta, device=\"cpu\", n_mels=64\)"):
        load_encoder(_meta(module))
    module = _module(tmp_path, 'self, meta, device="cpu", n_mels=64')
    with pytest.raises(ModelError, match=r"takes no option hop \(from the entry's options or --option\)"):
        load_encoder(_meta(module, hop=3))


def test_a_module_not_on_the_path_is_not_a_missing_package(tmp_path, monkeypatch):
    module = _module(tmp_path, 'self, meta, device="cpu", n_mels=64')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    with pytest.raises(ModelError) as caught:
        load_encoder(_meta(module))
    message = str(caught.value)
    assert f"module {module} not found on sys.path (current folder {tmp_path})" in message
    assert "is in the current folder" in message and "python -m maeb" in message and f"PYTHONPATH={tmp_path}" in message
    assert "not installed" not in message and "make install" not in message
    with pytest.raises(ModelError, match=r"module nowhere_[0-9a-f]+ not found on sys.path .*set PYTHONPATH to that folder"):
        load_encoder(_meta(f"nowhere_{uuid.uuid4().hex[:8]}"))


def test_a_package_the_module_needs_is_named_as_missing(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _module(tmp_path, 'self, meta, device="cpu", n_mels=64', head="import zz_not_a_package_here\n")
    with pytest.raises(ModelError, match=rf"module {module} imports zz_not_a_package_here, which is not installed"):
        load_encoder(_meta(module))


def test_the_command_line_says_it_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = _module(tmp_path, "self, n_mels=64, channels=1")
    entry = tmp_path / "local.toml"
    entry.write_text(f'[[model]]\nname = "me/enc"\nfamily = "{module}:Enc"\nrevision = "1"\n')
    assert main(["check-model", str(entry)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "does not take the model's entry as its first argument" in text
