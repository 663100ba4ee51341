"""Speech from Debian's text-to-speech engines: espeak-ng (many languages, voice variants, rate
and pitch), flite (four voices) and festival (two diphone voices, batched in one process)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from ..core.errors import MaebError
from . import run_tool

RATE = 16000


@dataclass(frozen=True)
class Voice:
    """A speaker of the synthetic speech: its label, the TTS engine and the engine's voice name, and gender."""

    name: str  # the speaker label
    engine: str  # espeak-ng | flite | festival
    ident: str  # the engine's own voice name
    gender: str


VOICES = [
    Voice("espeak-alex", "espeak-ng", "Alex", "male"),
    Voice("espeak-michael", "espeak-ng", "Michael", "male"),
    Voice("espeak-gene", "espeak-ng", "Gene", "male"),
    Voice("espeak-max", "espeak-ng", "Max", "male"),
    Voice("espeak-andrea", "espeak-ng", "Andrea", "female"),
    Voice("espeak-annie", "espeak-ng", "Annie", "female"),
    Voice("espeak-linda", "espeak-ng", "Linda", "female"),
    Voice("espeak-steph", "espeak-ng", "Steph", "female"),
    Voice("flite-kal16", "flite", "kal16", "male"),
    Voice("flite-awb", "flite", "awb", "male"),
    Voice("flite-rms", "flite", "rms", "male"),
    Voice("flite-slt", "flite", "slt", "female"),
    Voice("festival-kal", "festival", "kal_diphone", "male"),
    Voice("festival-ked", "festival", "ked_diphone", "male"),
]
ESPEAK_VARIANTS = [v for v in VOICES if v.engine == "espeak-ng"]
LANGUAGES = {  # espeak-ng voice -> label; digits are read in each language
    "en-us": "english",
    "de": "german",
    "fr-fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
    "pl": "polish",
    "sv": "swedish",
    "tr": "turkish",
}
RATES = {"slow": 110, "normal": 175, "fast": 260}  # words per minute
PITCHES = {"low": 15, "mid": 50, "high": 85}  # espeak-ng pitch 0-99


def _load(path: Path) -> np.ndarray:
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    audio = audio.mean(axis=1)
    if rate != RATE:
        audio = soxr.resample(audio, rate, RATE).astype(np.float32)
    peak = np.abs(audio).max()
    if peak == 0:
        raise MaebError(f"text-to-speech produced silence in {path.name}")
    return (audio / peak * 0.7).astype(np.float32)


def synthesize(requests: list[dict]) -> list[np.ndarray]:
    """Each request: text, voice (a Voice), and for espeak-ng optional lang, rate, pitch.
    Festival requests are batched into one festival process."""
    out: list[np.ndarray | None] = [None] * len(requests)
    with tempfile.TemporaryDirectory(prefix="maeb-tts-") as tmp_name:
        tmp = Path(tmp_name)
        festival: list[tuple[int, Path]] = []
        script = []
        for i, req in enumerate(requests):
            voice, text, wav = req["voice"], req["text"], tmp / f"{i}.wav"
            if voice.engine == "espeak-ng":
                name = f"{req.get('lang', 'en-us')}+{voice.ident}"
                run_tool(
                    [
                        "espeak-ng",
                        "-v",
                        name,
                        "-s",
                        str(req.get("rate", 175)),
                        "-p",
                        str(req.get("pitch", 50)),
                        "-w",
                        str(wav),
                        text,
                    ],
                    "espeak-ng",
                )
                out[i] = _load(wav)
            elif voice.engine == "flite":
                run_tool(["flite", "-voice", voice.ident, "-t", text, "-o", str(wav)], "flite")
                out[i] = _load(wav)
            else:
                script.append(f'(voice_{voice.ident})\n(utt.save.wave (utt.synth (Utterance Text "{text}")) "{wav}" \'riff)')
                festival.append((i, wav))
        if script:
            scm = tmp / "batch.scm"
            scm.write_text("\n".join(script) + "\n")
            run_tool(["festival", "-b", str(scm)], "festival (and festvox-kallpc16k, festvox-kdlpc16k)")
            for i, wav in festival:
                out[i] = _load(wav)
    waves = [wave for wave in out if wave is not None]
    if len(waves) != len(requests):  # every engine branch above fills its slot; a new engine must too
        raise RuntimeError(
            f"maeb.synth.speech: {len(requests) - len(waves)} request(s) got no audio (an engine without a branch)"
        )
    return waves
