"""Helpers for the family tests: tiny checkpoints (maeb.encoders.tiny), tones, and mteb's own wrappers run
on the same checkpoint through maeb's mteb bridge, so a family's vectors can be compared with
the vectors of the mteb 2.26.24 code it reproduces."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types

import numpy as np

from maeb.encoders import ModelMeta
from maeb.mock import tone


def meta_for(family: str, name: str | None = None, modalities=("audio",), **options) -> ModelMeta:
    return ModelMeta(name=name or f"tiny/{family}", family=family, revision="0", modalities=tuple(modalities), options=options)


def clips(lengths=(0.5, 1.1, 0.5, 1.7), rate=16000, seed=0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [tone(float(rng.uniform(200, 3000)), s, rate, seed=seed + i) for i, s in enumerate(lengths)]


class Spectrogram:
    """torchaudio.transforms.Spectrogram's defaults (periodic Hann window of n_fft, centred with
    reflect padding, power 2) on torch.stft, for packages that build one inside their model."""

    def __init__(self, n_fft=400, win_length=None, hop_length=None, power=2.0, **_ignored):
        self.n_fft, self.win = n_fft, win_length or n_fft
        self.hop, self.power = hop_length or self.win // 2, power

    def to(self, *_args, **_kwargs):
        return self

    def __call__(self, x):
        import torch

        window = torch.hann_window(self.win, periodic=True, dtype=x.dtype, device=x.device)
        flat = x.reshape(-1, x.shape[-1])  # torchaudio keeps any leading dimensions
        spec = torch.stft(flat, self.n_fft, self.hop, self.win, window, center=True, pad_mode="reflect", return_complex=True)
        return spec.abs().pow(self.power).reshape(*x.shape[:-1], *spec.shape[-2:])


def stub_torchaudio(monkeypatch) -> None:
    """torchaudio cannot be installed here (every wheel pins another torch). The packages under
    test import it at module level but, on the code paths tested, call none of it (clips arrive
    at the model's rate, so nothing resamples); a module that fails loudly if it is used stands
    in. The real torchaudio is used where it is installed."""
    if importlib.util.find_spec("torchaudio") is not None and "torchaudio" not in sys.modules:
        return
    if isinstance(sys.modules.get("torchaudio"), types.ModuleType) and getattr(sys.modules["torchaudio"], "_maeb_stub", False):
        return
    import torch

    class Unavailable(torch.nn.Module):
        def __init__(self, *args, **kwargs):
            raise RuntimeError("torchaudio is not installed here; this test's code path must not use it")

    module = types.ModuleType("torchaudio")
    module.__spec__ = importlib.machinery.ModuleSpec("torchaudio", None)
    module._maeb_stub = True
    transforms = types.ModuleType("torchaudio.transforms")
    transforms.__spec__ = importlib.machinery.ModuleSpec("torchaudio.transforms", None)
    transforms.Resample = transforms.MelSpectrogram = Unavailable
    transforms.Spectrogram = Spectrogram
    module.transforms = transforms
    monkeypatch.setitem(sys.modules, "torchaudio", module)
    monkeypatch.setitem(sys.modules, "torchaudio.transforms", transforms)


def through_mteb(wrapper, name="tiny/mteb", modalities=("audio",)):
    """mteb's own wrapper object, driven through maeb's bridge (DataLoader rows in mteb's format)."""
    from maeb.encoders.mteb_bridge import MtebWrapperEncoder

    return MtebWrapperEncoder(meta_for("mteb", name, modalities), model=wrapper, sample_rate=16000)
