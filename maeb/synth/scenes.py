"""Scene scripts and their rendering. A script (a JSON-able dict) names one clip: its duration, a
speaker (a maeb.synth.speech voice) saying a sentence from an onset, a General MIDI instrument
playing a seeded arpeggio underneath, and 1-2 foreground sound events (maeb.synth.sounds) where no
one speaks. render() is a pure function of the script, so the reference recording and a system
that renders the same script agree sample for sample."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..core.errors import DataError
from . import music, sounds, speech

RATE = 16000
DURATION = 6.0
GENERATOR_VERSION = 2
SPEECH_RMS = 0.08  # over the trimmed utterance
MUSIC_RMS = 0.01  # 18 dB under the speech: a steady bed (its envelope is flattened)
EVENT_RMS = 0.08  # over the event's audible frames
AUDIBLE_DB = 6.0  # a source is timed where its own 20 ms frames rise this far over the bed
LIMIT = 0.95  # a mix whose peak exceeds this is scaled down as a whole

# espeak-ng and flite only: festival starts a process per call and is slow for single clips
SPEAKERS = {v.name: v for v in speech.VOICES if v.engine in ("espeak-ng", "flite")}
# the resynth system's voices: the other gender, all espeak-ng (its rate can match a duration)
OTHER_GENDER = {
    "espeak-alex": "espeak-andrea",
    "espeak-michael": "espeak-annie",
    "espeak-gene": "espeak-linda",
    "espeak-max": "espeak-steph",
    "flite-kal16": "espeak-linda",
    "flite-awb": "espeak-annie",
    "flite-rms": "espeak-steph",
    "espeak-andrea": "espeak-alex",
    "espeak-annie": "espeak-michael",
    "espeak-linda": "espeak-gene",
    "espeak-steph": "espeak-max",
    "flite-slt": "espeak-michael",
}
INSTRUMENTS = {
    0: "piano",
    24: "acoustic guitar",
    40: "violin",
    19: "church organ",
    56: "trumpet",
    73: "flute",
    46: "harp",
    11: "vibraphone",
}
OTHER_INSTRUMENT = {0: 4, 24: 25, 40: 42, 19: 16, 56: 57, 73: 71, 46: 8, 11: 13}  # same family, other timbre
EVENT_PHRASES = {  # no quotes and no speech verb: a sound clause must not read as speech
    "knocking": "someone knocks on a door",
    "clapping": "a person claps",
    "dripping": "water drips",
    "footsteps": "footsteps walk past",
    "birdsong": "a bird chirps",
}
TEMPLATES = (
    "please {verb} the {noun}",
    "turn {direction} at the {place}",
    "meet me near the {place}",
    "the {noun} is {adj} today",
    "we left the {noun} by the {place}",
    "can you {verb} the {adj} {noun}",
)
FILL = {
    "verb": ("open", "close", "carry", "clean", "bring", "check"),
    "noun": ("window", "kettle", "letter", "basket", "lantern", "blanket", "ladder"),
    "direction": ("left", "right"),
    "place": ("station", "bridge", "market", "library", "corner", "harbor"),
    "adj": ("warm", "quiet", "ready", "heavy", "yellow", "empty"),
}


def sentence(rng: np.random.Generator) -> str:
    """A random sentence from the templates, for the scenes' speech."""
    template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
    return template.format(**{k: v[int(rng.integers(len(v)))] for k, v in FILL.items()})


def _voice(name: str):
    if name not in SPEAKERS:
        raise DataError(f"scene script names voice {name!r}; known: {', '.join(SPEAKERS)}")
    return SPEAKERS[name]


def _span(clip: np.ndarray, fraction: float) -> tuple[int, int]:
    """First and one-past-last sample whose magnitude reaches `fraction` of the peak."""
    above = np.flatnonzero(np.abs(clip) >= fraction * np.abs(clip).max())
    return int(above[0]), int(above[-1]) + 1


@lru_cache(maxsize=256)
def _utterance(voice: str, text: str, rate: int) -> np.ndarray:
    """The TTS output with its leading and trailing silence cut, at the fixed speech level."""
    clip = speech.synthesize([{"text": text, "voice": _voice(voice), "rate": rate}])[0]
    start, stop = _span(clip, 0.02)
    clip = clip[start:stop].astype(np.float64)
    return (clip * SPEECH_RMS / np.sqrt(np.mean(clip**2))).astype(np.float32)


def utterance(voice: str, text: str, rate: int = 175) -> np.ndarray:
    """The synthesised utterance of `text` by `voice` at `rate` words per minute (a copy of the cached one)."""
    return _utterance(voice, text, rate).copy()  # the cache's copy stays untouched


def _fade(clip: np.ndarray, seconds: float = 0.01) -> np.ndarray:
    n = min(int(seconds * RATE), len(clip) // 2)
    ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
    clip = clip.copy()
    clip[:n] *= ramp
    clip[len(clip) - n :] *= ramp[::-1]
    return clip


def _fit_voice(voice: str, text: str, target: int) -> np.ndarray:
    """Another voice saying the text in `target` samples: espeak-ng's rate is set from a first
    try, and what still runs over is cut with a fade, so the speech keeps the script's interval."""
    clip = utterance(voice, text)
    if _voice(voice).engine == "espeak-ng" and abs(len(clip) - target) > 0.03 * target:
        clip = utterance(voice, text, int(np.clip(round(175 * len(clip) / target), 80, 400)))
    return _fade(clip[:target], 0.02) if len(clip) > target else clip


@lru_cache(maxsize=64)
def _arpeggio(program: int, key: str, tempo: str) -> np.ndarray:
    return music.render("fluidsynth", [{"program": program, "key": key, "tempo": tempo, "octave": 5}])[0]


def _envelope(x: np.ndarray, seconds: float = 0.05) -> np.ndarray:
    n = max(1, int(seconds * RATE))
    power = np.convolve(np.square(x.astype(np.float64)), np.ones(n) / n, mode="same")
    return np.sqrt(np.maximum(power, 1e-12))


def background(program: int, key: str, tempo: str, seconds: float) -> np.ndarray:
    """The 2.5 s arpeggio repeated for the clip, its loudness held level (note attacks and decays
    flattened by a 50 ms envelope), so the bed is steady and the foreground stands out of it as a
    listener - and an energy detector - hears it."""
    piece = _fade(_arpeggio(program, key, tempo))
    out = np.resize(piece, int(round(seconds * RATE))).astype(np.float64)
    out = out / np.maximum(_envelope(out), 1e-3 * np.sqrt(np.mean(out**2)))
    return (out * MUSIC_RMS / (np.sqrt(np.mean(out**2)) + 1e-12)).astype(np.float32)


def audible_span(clip: np.ndarray, frame: float = 0.02) -> tuple[int, int] | None:
    """First and one-past-last sample of the 20 ms frames in which the clip alone is AUDIBLE_DB
    over the bed: the interval the timestamps give and a detector can find."""
    hop = int(frame * RATE)
    n = len(clip) // hop
    if n == 0:
        return None
    rms = np.sqrt(np.mean(np.square(clip[: n * hop].reshape(n, hop).astype(np.float64)), axis=1))
    loud = np.flatnonzero(rms > MUSIC_RMS * 10 ** (AUDIBLE_DB / 20))
    return (int(loud[0]) * hop, (int(loud[-1]) + 1) * hop) if loud.size else None


# impulse trains interleaved per event, so one event has no silence longer than a detector's
# merge gap (0.3 s) inside it: a rapid knock, applause, a run of steps
DENSITY = {"knocking": 1, "clapping": 3, "dripping": 1, "footsteps": 2}


def event(label: str, seconds: float, seed: int) -> np.ndarray:
    """A sound event clip of `label` and `seconds`, drawn from `seed`, with short fades."""
    rng = np.random.default_rng(seed)
    if label == "birdsong":
        species = [s for s in sounds.SPECIES if s != "trill"]  # a trill's 0.5 s pauses split one call in two
        clip = sounds.chirp_call(str(rng.choice(species)), seconds, rng)
    elif label in sounds.EVENTS:
        clip = np.asarray(sum(sounds.impulsive(label, seconds, rng) for _ in range(DENSITY[label])))
    else:
        raise DataError(f"scene script names sound event {label!r}; known: {', '.join(EVENT_PHRASES)}")
    clip = _fade(np.asarray(clip, dtype=np.float32), 0.005).astype(np.float64)
    active = _envelope(clip) > 0.1 * _envelope(clip).max()
    level = np.sqrt(np.mean(clip[active] ** 2)) if active.any() else 1.0
    return (clip * EVENT_RMS / (level + 1e-12)).astype(np.float32)


def _add(mix: np.ndarray, clip: np.ndarray, onset: float) -> int:
    start = int(round(onset * RATE))
    clip = clip[: max(0, len(mix) - start)]
    mix[start : start + len(clip)] += clip
    return start


def _timed(mix: np.ndarray, clip: np.ndarray, onset: float) -> list[float]:
    """Place the clip's audible part at the onset; [onset, offset] of that part in the mix."""
    span = audible_span(clip)
    if span is None:
        raise DataError(f"a scene part never rises {AUDIBLE_DB} dB over the music bed")
    clip = clip[span[0] : span[1]]
    start = _add(mix, clip, onset)
    return [round(start / RATE, 3), round(min(len(mix), start + len(clip)) / RATE, 3)]


def render(script: dict, voice_map: dict | None = None, instrument_map: dict | None = None) -> tuple[np.ndarray, dict]:
    """The clip of a script (float32 mono 16 kHz) and its timings measured on what was placed:
    speech_segments [[on, off]] of the trimmed utterance, sound_segments [[on, off, label]] of each
    event cut to where it reaches 5% of its peak. voice_map / instrument_map (voice name -> voice name,
    program -> program) swap timbres; speech then keeps the original utterance's length."""
    n = int(round(float(script["duration"]) * RATE))
    mix = np.zeros(n, dtype=np.float64)
    m = script["music"]
    program = int((instrument_map or {}).get(int(m["program"]), m["program"]))
    mix += background(program, m["key"], m["tempo"], n / RATE)
    s = script["speech"]
    voice = (voice_map or {}).get(s["voice"], s["voice"])
    said = utterance(s["voice"], s["text"])
    if voice != s["voice"]:
        said = _fit_voice(voice, s["text"], len(said))
    timings = {"speech_segments": [_timed(mix, said, float(s["onset"]))], "sound_segments": []}
    for e in script["events"]:
        clip = event(e["label"], float(e["seconds"]), int(e["seed"]))
        timings["sound_segments"].append([*_timed(mix, clip, float(e["onset"])), e["label"]])
    peak = np.abs(mix).max()
    if peak > LIMIT:
        mix *= LIMIT / peak
    return mix.astype(np.float32), timings


def make_script(rng: np.random.Generator, duration: float = DURATION) -> dict:
    """A scene: the speech and 1-2 events in a random order with gaps, inside the clip. The
    utterance is synthesised here so the events can be placed where no one speaks."""
    voice = list(SPEAKERS)[int(rng.integers(len(SPEAKERS)))]
    text = sentence(rng)
    length = len(_utterance(voice, text, 175)) / RATE
    program = list(INSTRUMENTS)[int(rng.integers(len(INSTRUMENTS)))]
    labels = list(EVENT_PHRASES)
    for _ in range(20):  # redraw until the parts fit; fewer events make the last tries fit
        count = int(rng.integers(1, 3))
        events: list[dict[str, Any]] = [
            {
                "label": labels[int(rng.integers(len(labels)))],
                "seconds": round(float(rng.uniform(0.5, 1.0)), 2),
                "seed": int(rng.integers(1 << 31)),
            }
            for _ in range(count)
        ]
        parts = [None, *events]
        rng.shuffle(parts)
        t = round(float(rng.uniform(0.2, 0.6)), 2)
        for part in parts:
            if part is None:
                speech_onset, end = t, t + length
            else:
                part["onset"], end = t, t + part["seconds"]
            t = round(end + float(rng.uniform(0.4, 0.7)), 2)  # wider than a detector's merge gap
        if end <= duration - 0.2:
            break
    else:
        raise DataError(f"cannot fit a {length:.1f} s utterance and its events into a {duration} s scene")
    return {
        "duration": duration,
        "speech": {"voice": voice, "text": text, "onset": speech_onset},
        "music": {"program": program, "key": str(rng.choice(list(music.KEYS))), "tempo": str(rng.choice(list(music.TEMPI)))},
        "events": sorted(events, key=lambda e: e["onset"]),
    }


def voice_prompt(voice: str, text: str) -> np.ndarray:
    """A 2-4 s clip of the voice: the utterance after 0.2 s of silence, padded to 2 s, cut at 4 s."""
    clip = np.concatenate([np.zeros(int(0.2 * RATE), np.float32), utterance(voice, text)])
    if len(clip) > 4 * RATE:
        clip = _fade(clip[: 4 * RATE], 0.02)
    return np.pad(clip, (0, max(0, 2 * RATE - len(clip))))


def _clauses(script: dict, timings: dict, timed: bool) -> list[str]:
    gender = {"male": "man", "female": "woman"}[_voice(script["speech"]["voice"]).gender]
    on, off = timings["speech_segments"][0]
    parts = [(on, off, f'a {gender} says "{script["speech"]["text"]}"')]
    parts += [(a, b, EVENT_PHRASES[label]) for a, b, label in timings["sound_segments"]]
    return [f"{text} ({a:.1f}-{b:.1f}s)" if timed else text for a, b, text in sorted(parts)]


def caption(script: dict, timings: dict) -> str:
    """The overall caption: who says what, the events in order, the music throughout."""
    text = ", then ".join(_clauses(script, timings, False))
    instrument = INSTRUMENTS[int(script["music"]["program"])]
    return f"{text[0].upper()}{text[1:]}, while soft {instrument} music plays throughout."


def timestamped_caption(script: dict, timings: dict) -> str:
    """Each timed clause ends with "(<onset>-<offset>s)"; the background music is untimed."""
    text = ", then ".join(_clauses(script, timings, True))
    instrument = INSTRUMENTS[int(script["music"]["program"])]
    return f"{text[0].upper()}{text[1:]}, over soft {instrument} music."
