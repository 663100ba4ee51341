"""Family "mteb": any model of mteb's registry through mteb's own wrapper, for the audio models
maeb has no family of its own for (scripts/import_models.py assigns it).

The wrapper is loaded with mteb's ModelMeta.load_model (mteb and the model's mteb extras must be
installed: the entry's `requires`), and its encode() receives a DataLoader of rows in mteb's
format: {"audio": {"array", "sampling_rate"}} or {"text": str}, with task metadata of one mteb
task (option `task`, default BeijingOpera, a MAEB classification task: wrappers that choose prompts or adapters by task type see an
audio classification task) and a prompt type per side. maeb resamples each clip to the wrapper's
own rate (read from the loaded wrapper), so the wrapper's collator does not resample again;
length caps, padding and pooling are the wrapper's. A local checkpoint is used by pointing the
meta's name at the folder (`path`), as mteb loads local checkpoints."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ModelError
from .base import UNSET, AudioEncoderBase, TextEncoderBase
from .install import require
from .meta import SCORED_SIMILARITIES

_RATE_ATTRIBUTES = ("sampling_rate", "sample_rate", "target_sampling_rate", "sr")


class _Rows:
    """A map-style dataset with the `features` mteb's wrappers look at."""

    def __init__(self, rows: list[dict], column: str):
        self.rows = rows
        self.features = {column: None}
        self.column_names = [column]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return self.rows[index]


def _collate(rows):
    return {key: [row[key] for row in rows] for key in rows[0]}


def wrapper_rate(model, default: int = 16000) -> int:
    """The sampling rate a loaded mteb wrapper expects (read from it, its processor or its feature extractor), else `default`."""
    for holder in (model, getattr(model, "processor", None), getattr(model, "feature_extractor", None)):
        if holder is None:
            continue
        for name in _RATE_ATTRIBUTES:
            value = getattr(holder, name, None)
            if isinstance(value, (int, np.integer)) and value > 0:
                return int(value)
        extractor = getattr(holder, "feature_extractor", None)
        value = getattr(extractor, "sampling_rate", None)
        if isinstance(value, (int, np.integer)) and value > 0:
            return int(value)
    return default


class MtebWrapperEncoder(AudioEncoderBase, TextEncoderBase):
    """Any model of mteb's registry through mteb's own wrapper (family "mteb"; see the module docstring)."""

    min_samples = 0
    max_seconds = None  # the wrapper's own cap applies
    batching = "padded"  # the wrapper receives the batch as maeb groups it and batches as it likes
    software = ("mteb", "torch", "transformers")

    def __init__(
        self,
        meta,
        device="cpu",
        path=None,
        task="BeijingOpera",
        audio_prompt_type=None,
        text_prompt_type="query",
        sample_rate=UNSET,
        model=None,
        protocol=None,
    ):
        if meta.similarity not in SCORED_SIMILARITIES:
            raise ModelError(
                f"model {meta.name!r} scores with {meta.similarity} over token vectors; maeb's evaluators compare one vector per item"
            )
        if "dense" not in meta.model_type:
            raise ModelError(f"model {meta.name!r} is a {'/'.join(meta.model_type)} model, not an embedding model maeb can run")
        mteb = require("mteb", "mteb")
        self.loader = "given"
        if model is None:
            mmeta = mteb.get_model_meta(meta.name)
            if path:
                mmeta = mmeta.model_copy(update={"name": str(path)})
            try:
                model = mmeta.load_model(device=device)
            except ImportError as exc:
                raise ModelError(
                    f"model {meta.name!r}: mteb's wrapper needs a package that is not installed ({exc}); "
                    f"install: {' '.join(meta.requires) or 'mteb'}"
                ) from exc
            self.loader = getattr(mmeta.loader, "__name__", None) or str(mmeta.loader)
        self.model = model
        self.task_name = task
        self.task_metadata = mteb.get_task(task).metadata
        from mteb.types import PromptType

        self._prompt = {None: None, "query": PromptType.query, "document": PromptType.document}
        for value in (audio_prompt_type, text_prompt_type):
            if value not in self._prompt:
                raise ValueError(f"prompt types are query, document or None, not {value!r}")
        self.audio_prompt_type, self.text_prompt_type = audio_prompt_type, text_prompt_type
        self.sample_rate = int(sample_rate) if sample_rate is not UNSET else wrapper_rate(model)
        self.device = device

    def config(self):
        return {
            "wrapper": f"mteb:{self.loader}",
            "task_metadata": self.task_name,
            "audio_prompt_type": self.audio_prompt_type,
            "text_prompt_type": self.text_prompt_type,
            "sample_rate": self.sample_rate,
        }

    def _encode(self, rows, column, prompt_type):
        from torch.utils.data import DataLoader

        # _Rows is map-style (len and getitem), all a DataLoader reads; torch's stubs ask a Dataset
        loader: Any = DataLoader(_Rows(rows, column), batch_size=max(1, len(rows)), collate_fn=_collate)  # type: ignore[arg-type]
        out = self.model.encode(
            loader,
            task_metadata=self.task_metadata,
            hf_split="test",
            hf_subset="default",
            prompt_type=self._prompt[prompt_type],
            batch_size=max(1, len(rows)),
            show_progress_bar=False,
        )
        if hasattr(out, "detach"):
            out = out.detach().float().cpu().numpy()
        return np.asarray(out, dtype=np.float32)

    def embed_audio(self, clips):
        rows = [{"audio": {"array": np.asarray(c, dtype=np.float32), "sampling_rate": self.sample_rate}} for c in clips]
        return self._encode(rows, "audio", self.audio_prompt_type)

    def embed_text(self, texts):
        return self._encode([{"text": t} for t in texts], "text", self.text_prompt_type)
