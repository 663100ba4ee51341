"""A model family is one record (maeb.encoders.family.Family): every built-in family is declared
once, the old per-fact dicts and the protocols' family tables are views of the records, and a
family registered from a module outside maeb loads, checks its requirements, takes its protocol
rules and runs through the dry run like a built-in one."""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import maeb.encoders as enc
from maeb.core.errors import ModelError, SpecError
from maeb.encoders.family import FAMILY_REGISTRY, Family, register_family
from maeb.encoders.protocols import PROTOCOLS, get_protocol
from maeb.spec.catalog import parse_model

ROOT = Path(__file__).resolve().parents[1]


def _builtin_names() -> list[str]:
    """The family names written in maeb/encoders/families.py and maeb/audiogen/families.py (the
    text-to-audio systems, on their own floor), read from their source (not from the registry,
    which is a dict and would hide a name declared twice)."""
    trees = [ast.parse((ROOT / f"maeb/{floor}/families.py").read_text()) for floor in ("encoders", "audiogen")]
    return [
        node.args[0].value
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Family" and isinstance(node.args[0], ast.Constant)
    ]


def _defines(ref: str) -> bool:
    """Whether the module of a "module:attr" reference defines attr at top level (read, not imported)."""
    module, attr = ref.split(":")
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, ref
    tree = ast.parse(Path(spec.origin).read_text())
    return any(getattr(node, "name", None) == attr for node in tree.body)


def test_every_family_is_declared_once_and_every_reference_exists():
    names = _builtin_names()
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(names) <= set(FAMILY_REGISTRY)
    for name in names:
        record = FAMILY_REGISTRY[name]
        assert _defines(record.factory), record.factory
        if record.tiny:
            assert _defines(record.tiny), record.tiny
        if record.no_deps:
            assert record.extra, name  # the extra brings what the --no-deps package really needs
    used = {m["family"] for f in (ROOT / "models").glob("*.toml") for m in tomllib.loads(f.read_text()).get("model", [])}
    assert {f for f in used if ":" not in f} <= set(names)


def test_the_protocol_tables_are_views_of_the_records():
    records = FAMILY_REGISTRY.values()
    for proto in PROTOCOLS.values():
        for name, table in proto.families.items():
            record = FAMILY_REGISTRY[name]
            first = next(s for s in proto.rule_sets if s in record.rules)
            assert table == record.rules[first]
            for arch in table:
                assert proto.family_rules(name, None if arch == "*" else arch) == {**table["*"], **table[arch]}
        assert set(proto.families) == {f.name for f in records if set(f.rules) & set(proto.rule_sets)}
    # the paper protocol: wav2vec2-style encoders cut at 30 s (mteb a79aefed5), mteb 2.26.24 no cap;
    # a family without paper rules (Whisper) follows its 2.26 rules
    assert get_protocol("paper").family_rules("hf-ssl")["max_seconds"] == 30.0
    assert get_protocol("mteb-2.26").family_rules("hf-ssl")["max_seconds"] is None
    assert get_protocol("paper").family_rules("hf-whisper") == get_protocol("mteb-2.26").family_rules("hf-whisper")
    assert get_protocol("mteb-2.26-stable").families == get_protocol("mteb-2.26").families


def test_a_record_is_refused_in_one_line_when_malformed_or_taken():
    with pytest.raises(ModelError, match="must be 'module:attr'"):
        Family("x-bad", "no_colon")
    with pytest.raises(ModelError, match="must not hold ':'"):
        Family("pkg:Class", "pkg:Class")
    with pytest.raises(ModelError, match="'hf-ssl' is already registered"):
        register_family(Family("hf-ssl", "elsewhere:Encoder"))
    assert register_family(FAMILY_REGISTRY["mfcc"]) is FAMILY_REGISTRY["mfcc"]  # the same record again: a no-op


MODULE = '''
import numpy as np

from maeb.encoders.base import UNSET, AudioEncoderBase, as_seconds, pick, protocol_rules
from maeb.encoders.family import Family, register_family


class BandEnergy(AudioEncoderBase):
    """Log band energies of a 512-point spectrum."""

    sample_rate = 16000
    batching = "padded"

    def __init__(self, meta, device="cpu", bands=16, max_seconds=UNSET, protocol=None):
        rules = protocol_rules(protocol, "outside-band-energy")
        self.bands = int(bands)
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", 10.0))

    def config(self):
        return {"bands": self.bands, "max_seconds": self.max_seconds}

    def embed_audio(self, clips):
        return np.stack([np.log1p(np.abs(np.fft.rfft(c, 512))[: self.bands]) for c in clips]).astype(np.float32)


register_family(
    Family(
        "outside-band-energy",
        "outside_family_mod:BandEnergy",
        requires=("numpy",),
        rules={"mteb-2.26": {"*": {"max_seconds": 4.0}}, "paper": {"*": {"max_seconds": 2.0}}},
    )
)
'''


@pytest.fixture
def outside_family(tmp_path, monkeypatch):
    (tmp_path / "outside_family_mod.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = {"name": "me/band-energy", "family": "outside-band-energy", "revision": "none", "embed_dim": 16}
    with pytest.raises(SpecError, match="outside-band-energy"):  # unknown until its module registers it
        parse_model(entry, "test entry")
    import outside_family_mod  # noqa: F401  (registers the record)

    yield parse_model(entry, "test entry")
    FAMILY_REGISTRY.pop("outside-band-energy", None)
    sys.modules.pop("outside_family_mod", None)


def test_a_family_registered_outside_maeb_loads_with_its_requirements_and_protocol_rules(outside_family):
    meta = outside_family
    assert enc.requirements(meta) == ("numpy",) and enc.runnable_problems(meta) == []
    assert FAMILY_REGISTRY["outside-band-energy"].factory == "outside_family_mod:BandEnergy"
    assert enc.load_encoder(meta, protocol="mteb-2.26").max_seconds == 4.0
    assert enc.load_encoder(meta, protocol="paper").max_seconds == 2.0
    encoder = enc.load_encoder(meta, protocol="paper", max_seconds=3, bands=8)
    assert encoder.config() == {"bands": 8, "max_seconds": 3.0}
    tone = np.sin(2 * np.pi * 440 * np.arange(1600) / 16000).astype(np.float32)
    assert encoder.embed_audio([tone]).shape == (1, 8)
    with pytest.raises(ModelError, match="no tiny variant"):
        from maeb.encoders.tiny import build

        build(meta, Path("unused"))


def test_a_family_registered_outside_maeb_runs_through_the_dry_run(outside_family, tmp_path, capsys):
    from maeb.cli.commands import main

    folder = tmp_path / "tones"
    (folder / "audio").mkdir(parents=True)
    rows = ["file_name,label"]
    for i, hz in enumerate([220.0, 220.0, 220.0, 3520.0, 3520.0, 3520.0]):
        t = np.arange(8000) / 16000
        sf.write(folder / "audio" / f"c{i}.wav", ((0.3 + 0.02 * i) * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)
        rows.append(f"audio/c{i}.wav,{'low' if hz < 1000 else 'high'}")
    (folder / "metadata.csv").write_text("\n".join(rows) + "\n")
    task = tmp_path / "Tones.toml"
    task.write_text(f'name = "Tones"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n')
    model = tmp_path / "band.toml"
    model.write_text('[[model]]\nname = "me/band-energy"\nfamily = "outside-band-energy"\nrevision = "none"\nembed_dim = 16\n')
    args = ["run", "-m", str(model), "-t", str(task), "--cache-dir", str(tmp_path / "cache"), "--dry-run"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "total: 1 task, 1 to run, 6 clips" in out
    assert "for me/band-energy" in out
    # the entry's family is known only through its record: without it the same command stops in one line
    FAMILY_REGISTRY.pop("outside-band-energy")
    assert main(args) == 2
    assert "outside-band-energy" in capsys.readouterr().err
