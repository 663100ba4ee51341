"""Layer sweeps (`--layers`): one loaded encoder seen as one encoder per hidden layer.

A wrapper that exposes its hidden states has `layer_count()` and `embed_layers(clips)`, which
pools every hidden state the way embed_audio pools its output, in one forward pass (index 0: the
input to the first transformer layer; the last index: embed_audio's own vectors). LayerView is
the encoder of one layer: its config() adds the layer, so each layer's vectors are cached apart,
and the views of one sweep share a LayerBank, so the first view to see a batch runs the model and
the others take their layer's vectors from the bank instead of running it again."""

from __future__ import annotations

import hashlib

import numpy as np

# the sides a layer view does not offer: a hidden state has no text side in its space, no frames
# of its own and writes nothing
_HIDDEN_SIDES = frozenset({"embed_text", "embed_frames", "generate", "synthesize"})


def supports_layers(encoder) -> bool:
    """Whether a loaded wrapper exposes its hidden states (layer_count and embed_layers)."""
    return callable(getattr(encoder, "embed_layers", None)) and callable(getattr(encoder, "layer_count", None))


def clip_digest(clip: np.ndarray) -> str:
    """A clip's content as the bank keys it: its length and float32 samples (what the model sees)."""
    data = np.ascontiguousarray(clip, dtype=np.float32)
    return hashlib.blake2b(data.tobytes(), digest_size=16, person=str(len(data)).encode()[:16]).hexdigest()


class LayerBank:
    """Every layer's vector of the clips one forward pass saw, until each layer's view takes its own.

    Each vector is handed out once (a layer's run caches it), so the bank shrinks as the sweep's
    layers run; `clear()` drops what a layer never asked for (its result was already written)."""

    def __init__(self, encoder) -> None:
        self.encoder = encoder
        self.forward_passes = 0  # batches the model ran on (the tests count them)
        self._held: dict[str, dict[int, np.ndarray]] = {}

    def vectors(self, clips: list[np.ndarray], layer: int) -> np.ndarray:
        """Layer `layer`'s vectors of a batch: from the bank when every clip is there, else from
        one forward pass over the whole batch (batch-mates unchanged), whose other layers are kept."""
        keys = [clip_digest(c) for c in clips]
        if all(layer in self._held.get(k, {}) for k in keys):
            return np.stack([self._take(k, layer) for k in keys])
        layers = [np.asarray(v, dtype=np.float32) for v in self.encoder.embed_layers(clips)]
        self.forward_passes += 1
        for i, key in enumerate(keys):
            self._held[key] = {j: v[i] for j, v in enumerate(layers) if j != layer}
        return layers[layer]

    def _take(self, key: str, layer: int) -> np.ndarray:
        held = self._held[key]
        vector = held.pop(layer)
        if not held:
            del self._held[key]
        return vector

    def clear(self) -> None:
        """Forget every held vector (between tasks, so memory holds one task's clips at most)."""
        self._held.clear()


class LayerView:
    """The encoder of one hidden layer of `encoder`: embed_audio gives that layer's pooled vectors
    (through the shared bank), config() the wrapper's config with the layer added, and every other
    attribute (rate, caps, batching) is the wrapper's own. Audio only (no text side)."""

    def __init__(self, encoder, layer: int, bank: LayerBank) -> None:
        self.encoder, self.layer, self.bank = encoder, int(layer), bank

    def embed_audio(self, clips: list[np.ndarray]) -> np.ndarray:
        """This layer's pooled vectors of the clips, (n, d) float32."""
        return self.bank.vectors(clips, self.layer)

    def config(self) -> dict:
        """The wrapper's config with the hidden layer: a layer's vectors are keyed apart."""
        return {**self.encoder.config(), "hidden_layer": self.layer}

    def __getattr__(self, name: str):
        if name in _HIDDEN_SIDES or name in ("encoder", "layer", "bank"):
            raise AttributeError(name)
        return getattr(self.encoder, name)
