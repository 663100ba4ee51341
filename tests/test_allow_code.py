"""Issue 46 item 1: code that ships with a model's weights (a remote-code family given a folder or a
hub name) runs only with --allow-code, as a spec's or an entry's `module:Class` does; the refusal is
one line naming the model and the flag, and nothing of the folder's code has run."""

from __future__ import annotations

import pytest

from maeb.core import trust
from maeb.core.errors import ModelError
from maeb.encoders import load_encoder, tiny
from maeb.encoders.omni import SentenceOmniEncoder

from .family_fixtures import meta_for

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture
def refused(monkeypatch):
    monkeypatch.delenv("MAEB_ALLOW_CODE", raising=False)
    monkeypatch.setattr(trust, "_allowed", False)


def marked_remote_folder(tmp_path):
    """A tiny remote-code checkpoint whose module writes a marker file when imported."""
    opts = tiny.remote(tmp_path / "m")
    marker = tmp_path / "ran"
    code = tmp_path / "m" / "tiny_remote.py"
    code.write_text(code.read_text() + f"\nopen({str(marker)!r}, 'w').write('ran')\n")
    return opts, marker


@pytest.mark.parametrize("family", ["hf-hear", "fusion-embedding"])
def test_a_remote_code_family_is_refused_without_allow_code(tmp_path, refused, family):
    opts, marker = marked_remote_folder(tmp_path)
    with pytest.raises(ModelError) as caught:
        load_encoder(meta_for(family, "someone/remote-model", **opts))
    message = str(caught.value)
    assert "someone/remote-model" in message and "--allow-code" in message and "\n" not in message
    assert not marker.exists()


def test_st_omni_is_refused_before_sentence_transformers_loads(tmp_path, refused):
    with pytest.raises(ModelError, match="--allow-code"):
        SentenceOmniEncoder(meta_for("st-omni", "someone/omni", ("audio", "text")), path=str(tmp_path))


def test_the_cli_refuses_in_one_line(tmp_path, refused, capsys):
    from maeb.cli.commands import main

    opts, marker = marked_remote_folder(tmp_path)
    entry = tmp_path / "entry.toml"
    entry.write_text(f'name = "someone/remote-model"\nfamily = "hf-hear"\nrevision = "0"\n[options]\npath = "{opts["path"]}"\n')
    assert main(["check-model", str(entry), "--no-tasks"]) == 1  # check-model reports it as its failed load check
    lines = capsys.readouterr().out.splitlines()
    assert any("someone/remote-model" in line and "--allow-code" in line for line in lines)
    assert not marker.exists()


def test_allowed_it_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(trust, "_allowed", True)
    opts, marker = marked_remote_folder(tmp_path)
    load_encoder(meta_for("hf-hear", "someone/remote-model", **opts))
    assert marker.exists()
