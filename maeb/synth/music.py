"""Music from General MIDI: MIDI files written here, rendered by two different sound sources
(fluidsynth with the FluidR3 GM soundfont, timidity with freepats). All clips of one source go into
one MIDI file at fixed offsets and are rendered in one run, then cut: one synthesizer start instead
of hundreds."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from . import run_tool

RATE = 16000
CLIP_SECONDS = 2.5
GAP_SECONDS = 1.5  # room for release tails between clips
TICKS = 480  # per quarter note; the file's tempo is 120 bpm, so 960 ticks per second

# instrument families, each with General MIDI programs that freepats also holds
FAMILIES = {
    "piano": [0, 1, 2, 4],
    "chromatic percussion": [8, 9, 13, 14],
    "organ": [16, 19, 21],
    "guitar": [24, 25, 26, 27],
    "bass": [32, 33, 34, 35],
    "strings": [40, 42, 44, 48],
    "brass": [56, 57, 58, 60],
    "reed": [64, 65, 66, 71],
}
KEYS = {"C": 0, "D": 2, "E": 4, "F#": 6, "G#": 8, "A#": 10}
TEMPI = {"slow": 70, "medium": 120, "fast": 180}
SOURCES = ("fluidsynth", "timidity")


def _varlen(value: int) -> bytes:
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))


def write_midi(path: Path, clips: list[dict]) -> None:
    """clips: program, key, tempo class, octave; clip i starts at i * (CLIP + GAP) seconds."""
    events: list[tuple[int, bytes]] = []
    per_second = 2 * TICKS
    for i, clip in enumerate(clips):
        channel = [c for c in range(16) if c != 9][i % 15]
        start = int(i * (CLIP_SECONDS + GAP_SECONDS) * per_second)
        events.append((start, bytes([0xC0 | channel, clip["program"]])))
        root = 12 * clip["octave"] + KEYS[clip["key"]]
        pattern = [root, root + 4, root + 7, root + 12, root + 7, root + 4]
        step = int(per_second * 30.0 / TEMPI[clip["tempo"]])  # eighth notes at the clip's tempo
        t, k = start, 0
        while t + step <= start + CLIP_SECONDS * per_second:
            note = pattern[k % len(pattern)]
            events.append((t, bytes([0x90 | channel, note, 96])))
            events.append((t + int(step * 0.9), bytes([0x80 | channel, note, 0])))
            t, k = t + step, k + 1
    events.sort(key=lambda e: (e[0], e[1][0] & 0xF0 == 0x90))  # note-offs before note-ons at one tick
    track = bytearray(b"\x00\xff\x51\x03" + (500000).to_bytes(3, "big"))  # 120 bpm
    now = 0
    for tick, data in events:
        track += _varlen(tick - now) + data
        now = tick
    track += b"\x00\xff\x2f\x00"
    path.write_bytes(b"MThd" + struct.pack(">IHHH", 6, 0, 1, TICKS) + b"MTrk" + struct.pack(">I", len(track)) + bytes(track))


def _render(source: str, midi: Path, wav: Path) -> None:
    if source == "fluidsynth":
        cmd = [
            "fluidsynth",
            "-ni",
            "-q",
            "-g",
            "0.6",
            "-r",
            "44100",
            "-F",
            str(wav),
            "/usr/share/sounds/sf2/FluidR3_GM.sf2",
            str(midi),
        ]
    else:
        cmd = ["timidity", "-c", "/etc/timidity/freepats.cfg", "-Ow", "--output-mono", "-s", "44100", "-o", str(wav), str(midi)]
    run_tool(cmd, cmd[0])


def render(source: str, clips: list[dict]) -> list[np.ndarray]:
    """Render all clips with one sound source; returns one 16 kHz mono array per clip."""
    with tempfile.TemporaryDirectory(prefix="maeb-midi-") as tmp:
        midi, wav = Path(tmp) / "all.mid", Path(tmp) / "all.wav"
        write_midi(midi, clips)
        _render(source, midi, wav)
        audio, rate = sf.read(wav, dtype="float32", always_2d=True)
    audio = soxr.resample(audio.mean(axis=1), rate, RATE)
    out = []
    for i in range(len(clips)):
        start = int(i * (CLIP_SECONDS + GAP_SECONDS) * RATE)
        piece = audio[start : start + int(CLIP_SECONDS * RATE)]
        piece = np.pad(piece, (0, int(CLIP_SECONDS * RATE) - len(piece)))
        peak = np.abs(piece).max()
        out.append((piece / peak * 0.7 if peak > 0 else piece).astype(np.float32))
    return out
