"""PANNs CNN14 (16 kHz variant "Cnn14_16k"), the AudioSet tagger whose 2048-d embedding and 527
class outputs audio-generation papers use for FD, KL and IS. Written from the architecture's
description (Kong et al., PANNs, 2020):

- front end: |STFT|^2 (Hann window 512, hop 160, centred with reflect padding) -> 64 Slaney mel
  bins 50-8000 Hz (librosa's filter bank) -> 10*log10(max(x, 1e-10)) (ref 1.0, no top_db);
- bn0, a batch norm over the mel bins;
- six blocks of two (3x3 conv, batch norm, ReLU), 2x2 average pooling after blocks 1-5 (none after
  block 6), 64..2048 channels, dropout only in training;
- mean over frequency, then max + mean over time; fc1 2048->2048 with ReLU is the embedding;
  fc_audioset 2048->527 gives the logits, their sigmoid the clipwise (multi-label) output.

Layer names are those of the released checkpoint, so its learned layers load strictly; its
front-end buffers (spectrogram_extractor.*, logmel_extractor.*) are rebuilt here and skipped.
`load(...)` gives the released weights (downloaded once, sha256-verified), a local checkpoint or
a seeded random initialisation (the offline stand-in: the numbers mean nothing, the code path is
the real one)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..audio.pipeline import resample
from ..core.context import default_cache_dir
from ..core.download import download_verified, sha256_file
from ..core.errors import ModelError, SpecError

SAMPLE_RATE = 16000
N_FFT = 512
HOP = 160
N_MELS = 64
FMIN, FMAX = 50.0, 8000.0
EMBED_DIM = 2048
N_CLASSES = 527
MIN_SAMPLES = 32000  # the evaluation toolkit zero-pads shorter clips to 2 s before the tagger
CHANNELS = (64, 128, 256, 512, 1024, 2048)
FRONT_END = ("spectrogram_extractor.", "logmel_extractor.")  # released buffers we rebuild

# the released 16 kHz CNN14 (Zenodo record 3987831); sha256 as published by independent users of
# the file and consistent with the record's md5 362fc5ff18f1d6ad2f6d464b45893f2c
RELEASED = {
    "panns-cnn14-16k": {
        "url": "https://zenodo.org/records/3987831/files/Cnn14_16k_mAP%3D0.438.pth?download=1",
        "file": "Cnn14_16k_mAP=0.438.pth",
        "sha256": "e2ee543a27919542c2ea03eabaa70b24dcd4e6c8e05621de6b67a94e4c5058e6",
        "bytes": 358668570,
    }
}


def _nn():
    import torch
    from torch import nn

    return torch, nn


def build(seed: int = 0):
    """A CNN14 with seeded random weights (Xavier-uniform convs and linears, unit batch norms),
    in eval mode."""
    torch, nn = _nn()
    F = torch.nn.functional

    class ConvBlock(nn.Module):  # type: ignore[name-defined]  # torch is imported when built
        def __init__(self, cin: int, cout: int):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.bn2 = nn.BatchNorm2d(cout)

        def forward(self, x, pool: bool):
            x = F.relu(self.bn1(self.conv1(x)))
            x = F.relu(self.bn2(self.conv2(x)))
            return F.avg_pool2d(x, 2) if pool else x

    class Cnn14(nn.Module):  # type: ignore[name-defined]
        def __init__(self):
            super().__init__()
            import librosa

            mel = librosa.filters.mel(sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=N_MELS, fmin=FMIN, fmax=FMAX)
            # not persistent: the state dict holds only learned layers, as the released one does
            self.register_buffer("window", torch.hann_window(N_FFT), persistent=False)
            self.register_buffer("mel", torch.from_numpy(mel.T.astype(np.float32)), persistent=False)
            self.bn0 = nn.BatchNorm2d(N_MELS)
            for i, cout in enumerate(CHANNELS):
                setattr(self, f"conv_block{i + 1}", ConvBlock(CHANNELS[i - 1] if i else 1, cout))
            self.fc1 = nn.Linear(EMBED_DIM, EMBED_DIM)
            self.fc_audioset = nn.Linear(EMBED_DIM, N_CLASSES)

        def logmel(self, wave):
            spec = torch.stft(wave, N_FFT, HOP, window=self.window, center=True, pad_mode="reflect", return_complex=True)
            power = spec.real**2 + spec.imag**2  # (batch, freq, frames)
            mel = power.transpose(1, 2) @ self.mel  # (batch, frames, mel)
            return 10.0 * torch.log10(torch.clamp(mel, min=1e-10))

        def forward(self, wave):
            """(batch, samples) at 16 kHz -> (embedding (batch, 2048), logits (batch, 527))."""
            x = self.logmel(wave)[:, None]  # (batch, 1, frames, mel)
            x = self.bn0(x.transpose(1, 3)).transpose(1, 3)  # normalise each mel bin
            for i in range(len(CHANNELS)):
                x = getattr(self, f"conv_block{i + 1}")(x, pool=i < len(CHANNELS) - 1)
                x = F.dropout(x, 0.2, self.training)
            x = x.mean(dim=3)  # over frequency
            x = x.max(dim=2).values + x.mean(dim=2)  # over time
            x = F.dropout(x, 0.5, self.training)
            x = F.relu(self.fc1(x))
            embedding = F.dropout(x, 0.5, self.training)
            return embedding, self.fc_audioset(embedding)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Cnn14()
        for module in model.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
    return model.eval()


def load_state(model, state: dict, where: str) -> None:
    """Load a checkpoint's learned layers strictly (every learned key present, none unknown);
    the released front-end buffers are skipped since the front end is rebuilt from its settings."""
    if isinstance(state.get("model"), dict):
        state = state["model"]  # the released file wraps the weights with training metadata
    learned = {k: v for k, v in state.items() if not k.startswith(FRONT_END)}
    try:
        result = model.load_state_dict(learned, strict=False)
    except RuntimeError as exc:  # a tensor of the wrong shape
        detail = next((line.strip() for line in str(exc).splitlines() if "size mismatch" in line), str(exc).splitlines()[0])
        raise ModelError(f"{where} does not fit CNN14 ({detail})") from exc
    # strict on the learned layers: every one present, nothing unknown (the batch-norm step
    # counter is unused in eval and absent from some older files)
    missing = [k for k in result.missing_keys if not k.endswith("num_batches_tracked")]
    if missing or result.unexpected_keys:
        detail = f"missing {', '.join(missing[:3]) or 'none'}; unexpected {', '.join(result.unexpected_keys[:3]) or 'none'}"
        raise ModelError(f"{where} is not a CNN14 checkpoint ({detail}); give the released Cnn14_16k .pth")


def _torch_load(path: Path):
    """The released file pickles a few numpy scalars beside the tensors: allow exactly those
    types in torch's restricted (weights-only) loader, never a full unpickle."""
    torch, _ = _nn()
    from numpy._core.multiarray import _reconstruct

    # the file names numpy's array rebuilder by its numpy-1 path
    allowed = [(_reconstruct, "numpy.core.multiarray._reconstruct"), np.ndarray, np.dtype]
    allowed += [t for t in (getattr(np.dtypes, "Int64DType", None), getattr(np.dtypes, "Float64DType", None)) if t]
    try:
        with torch.serialization.safe_globals(allowed):
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for unreadable or unsafe files
        raise ModelError(f"cannot read the CNN14 checkpoint {path} ({type(exc).__name__}: {exc})".splitlines()[0]) from exc


def released_path(name: str, cache_dir) -> Path:
    """The released checkpoint in cache_dir/panns/, downloaded once; verified at every load."""
    spec = RELEASED[name]
    path = Path(cache_dir) / "panns" / str(spec["file"])
    if path.exists() and (path.stat().st_size != spec["bytes"] or sha256_file(path) != spec["sha256"]):
        path.unlink()  # a partial or corrupted file: never load it
    if not path.exists():
        download_verified(
            str(spec["url"]),
            path,
            str(spec["sha256"]),
            f"the CNN14 checkpoint {name}",
            "offline, give a local .pth file as the checkpoint",
        )
    return path


# the stand-in's class head is scaled so its class probabilities differ from clip to clip (logits
# with a spread of a few units instead of hundredths), which KL and IS need to say anything
RANDOM_HEAD_GAIN = 100.0


def load(checkpoint: str, seed: int = 0, device: str = "cpu", cache_dir=None):
    """(model on device in eval mode, identity) for checkpoint "random" (seeded stand-in), a
    released name (RELEASED) or a local .pth. identity: {"checkpoint", "revision" (sha256 of the
    weights, or random-seed<N>), "stand_in"}. A failed download raises maeb.core.errors.DataError."""
    model = build(seed)
    if checkpoint == "random":
        torch, _ = _nn()
        with torch.no_grad():  # a random head's logits are ~0.02 apart: its softmax would be flat
            model.fc_audioset.weight.mul_(RANDOM_HEAD_GAIN)
        revision = f"random-seed{int(seed)}-head-gain{RANDOM_HEAD_GAIN:g}"
        identity = {"checkpoint": "random", "revision": revision, "stand_in": True}
    else:
        if checkpoint in RELEASED:
            if cache_dir is None:
                cache_dir = default_cache_dir()
            path = released_path(checkpoint, cache_dir)
            digest = RELEASED[checkpoint]["sha256"]
        else:
            path = Path(checkpoint)
            if not path.is_file():
                known = ", ".join(["random", *RELEASED])
                raise SpecError(f"CNN14 checkpoint {checkpoint!r} is neither a file nor one of {known}")
            digest = sha256_file(path)
        load_state(model, _torch_load(path), f"CNN14 checkpoint {path}")
        identity = {"checkpoint": checkpoint, "revision": digest, "stand_in": False}
    return model.to(device), identity


def prepare(samples: np.ndarray, rate: int) -> np.ndarray:
    """A clip as the evaluation toolkit feeds the tagger: DC removed, resampled to 16 kHz, zero
    padded to at least 2 s (the six poolings need a minimum length; this also matches it)."""
    wave = np.asarray(samples, dtype=np.float32)
    wave = wave - wave.mean(dtype=np.float64).astype(np.float32) if wave.size else wave
    if rate != SAMPLE_RATE:
        wave = resample(wave, rate, SAMPLE_RATE, "soxr-hq")
    if wave.size < MIN_SAMPLES:
        wave = np.pad(wave, (0, MIN_SAMPLES - wave.size))
    return np.ascontiguousarray(wave, dtype=np.float32)


def infer(model, waves: list[np.ndarray], device: str = "cpu", batch_size: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings (n, 2048), logits (n, 527)) as float32 for prepared 16 kHz clips. Only clips of
    identical length share a batch: zero padding would change the max/mean over time."""
    torch, _ = _nn()
    emb = np.zeros((len(waves), EMBED_DIM), np.float32)
    logits = np.zeros((len(waves), N_CLASSES), np.float32)
    by_length: dict[int, list[int]] = {}
    for i, wave in enumerate(waves):
        by_length.setdefault(len(wave), []).append(i)
    with torch.inference_mode():
        for idx in by_length.values():
            for start in range(0, len(idx), batch_size):
                part = idx[start : start + batch_size]
                batch = torch.from_numpy(np.stack([waves[i] for i in part])).to(device)
                e, z = model(batch)
                emb[part], logits[part] = e.float().cpu().numpy(), z.float().cpu().numpy()
    if not (np.isfinite(emb).all() and np.isfinite(logits).all()):
        raise ModelError("CNN14 produced non-finite outputs; check the checkpoint and the clips")
    return emb, logits


@lru_cache(maxsize=2)
def load_shared(checkpoint: str, seed: int = 0, device: str = "cpu", cache_dir=None):
    """load(), once per run for each checkpoint: the subsets of a task (and the tasks of a run)
    share one 80M-parameter network instead of building it again (it is only ever run forward)."""
    return load(checkpoint, seed, device, cache_dir)
