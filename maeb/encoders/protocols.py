"""The reference protocols maeb reproduces, written down in one place.

A protocol fixes everything between the dataset and the evaluator that mteb's code decides and a
model entry does not: how clips are resampled, each family's length cap, batching and pooling
rule, how text documents are built, and the evaluator details that change a score or a result
file. Every result records the protocol it followed (`maeb.protocol`).

- "mteb-2.26" (default): mteb 2.26.24 as released; `make parity` checks maeb against it end to
  end. No single code state produced the published MAEB leaderboard (its files come from several
  states of mteb's maeb branch, some with unseeded k-means and unresampled pair audio, and from
  releases 2.12-2.18), so the newest release is the reference.
- "paper": the length caps and batching of the commit that introduced MAEB (a79aefed5), which is
  what the paper describes (wav2vec2-style encoders cut at 30 s), with 2.26.24's evaluators.
- "mteb-2.26-stable" (opt-in): mteb-2.26's vectors and draws, but the classification and
  multilabel probes fit standardised features to convergence (maeb.tasktypes.probe), so their
  scores do not depend on the machine's rounding (mteb's unconverged probe turns last-bit
  differences into points: maeb.run.stability). Not mteb's numbers; its results go to the
  experiments folder like any other protocol's, and it reuses mteb-2.26's cached vectors.
- "mteb-2.26-tie-aware" (opt-in): mteb-2.26's vectors, draws and evaluators, but where scores tie
  (within tie_tolerance x the largest |score| of a list) a rank metric is its expected value over
  every order of the tied items (McSherry and Najork, ECIR 2008; maeb.metrics.ties), a zero-shot
  argmax tie is split in the accuracy (1/|tied| of a clip; F1 and the other label metrics keep the
  first tied class, as mteb), and a pair AP is its expected value over orders of tied
  pairs. Where nothing ties the scores are mteb-2.26's to the bit. Experiments folder, shared vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import SpecError
from .familyrecord import FAMILY_REGISTRY, get_family

# Wrapper settings are declared per family, in its record's `rules` (maeb.encoders.families), one
# table per rule set ("mteb-2.26", "paper") and architecture (a transformers model_type, or "*").
# Keys: max_seconds (None: no cap), batching ("padded", "single", or "by-norm": single when the
# feature encoder normalises with group norm, i.e. feat_extract_norm != "layer"), frames ("conv" or
# "ratio", see encoders.pooling), layer ("last_hidden_state" or "hidden_states[-1]"), min_samples
# (zero-padding of short clips), dtype ("auto": the checkpoint's stored dtype, what transformers 5
# loads when mteb passes none), l2, text_max_tokens, short_pad_samples (EnCodec's padding of short
# clips), batches ("mteb": where a padded batch's length enters a vector, through the ratio frame
# count or a mean over padding, clips are batched as mteb batches them, in each call's order in
# batches of call_batch_size, and a vector is cached with its batch; otherwise maeb batches by
# length and shares vectors), and family-specific ones (front_end, pad, window_seconds, ...).


@dataclass(frozen=True)
class Protocol:
    """One reference protocol: resampler, text documents, probe, and the family rule sets it
    follows (`rule_sets`: a family's settings come from the first of them its record declares)."""

    name: str
    reference: str
    resampler: str  # see maeb.audio.pipeline.RESAMPLERS
    text_documents: str  # "title-text-strip": mteb's (title + " " + text).strip(); "raw"
    call_batch_size: int = 32  # mteb.evaluate's batch size, for families batched as mteb batches
    rule_sets: tuple[str, ...] = ("mteb-2.26",)
    notes: tuple[str, ...] = ()
    probe: str = "mteb"  # the classification probe (maeb.tasktypes.probe): "mteb" or "standardized"
    vectors: str | None = None  # a protocol whose vectors this one shares (it changes only evaluators)
    # rank metrics over tied scores: "first-found" (mteb's: tied documents in trec_eval's order,
    # score then id; argmax takes the first class) or "expected-over-tie-orders" (maeb.metrics.ties)
    ranks: str = "first-found"
    tie_tolerance: float = 1e-6  # scores of a list tie within this x its largest |score| (the ties record's too)

    @property
    def embeds_as(self) -> str:
        """The protocol name that keys this protocol's cached vectors."""
        return self.vectors or self.name

    @property
    def families(self) -> dict[str, dict[str, dict[str, Any]]]:
        """family -> architecture -> settings, for every registered family with rules here."""
        tables = {name: record.rules_for(self.rule_sets) for name, record in FAMILY_REGISTRY.items()}
        return {name: table for name, table in tables.items() if table is not None}

    def family_rules(self, family: str, arch: str | None = None) -> dict[str, Any]:
        """The settings this protocol fixes for a family's wrapper: the "*" row, then the
        architecture's own row over it ({} for a family without rules)."""
        record = get_family(family)
        table = (record.rules_for(self.rule_sets) if record is not None else None) or {}
        return {**table.get("*", {}), **(table.get(arch, {}) if arch else {})}

    def describe(self, resampler: str | None = None) -> dict:
        """The protocol as a result file records it (name, reference, resampler, text documents, probe)."""
        return {
            "name": self.name,
            "reference": self.reference,
            "resampler": resampler or self.resampler,
            "text_documents": self.text_documents,
            **({"probe": self.probe} if self.probe != "mteb" else {}),
            **({"ranks": self.ranks, "tie_tolerance": self.tie_tolerance} if self.ranks != "first-found" else {}),
        }


PROTOCOLS: dict[str, Protocol] = {
    "mteb-2.26": Protocol(
        name="mteb-2.26",
        reference="mteb 2.26.24 (checked end to end by `make parity`)",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        notes=(
            "maeb batches clips by length (so one vector serves every task); mteb pads batches of 32 in dataset "
            "order, which moves the ratio frame count of batched layer-norm models by one frame on some clips",
        ),
    ),
    "paper": Protocol(
        name="paper",
        reference="the MAEB paper's length policy as coded in mteb a79aefed5 (feat: Introduce MAEB); evaluators of mteb 2.26.24",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        rule_sets=("paper", "mteb-2.26"),
        notes=(
            "no published MAEB score comes from a79aefed5: the public results were written by several states of "
            "mteb's maeb branch (stamped 1.38.33, 2.1.13, 2.4.2) and by releases 2.12-2.18",
        ),
    ),
    "mteb-2.26-stable": Protocol(
        name="mteb-2.26-stable",
        reference="mteb 2.26.24's vectors, draws and metrics; probes on standardised features fit to convergence (not mteb's numbers)",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        probe="standardized",
        vectors="mteb-2.26",
        notes=(
            "classification and multilabel scores do not move with the machine's last bits (see maeb.run.stability); "
            "they differ from mteb's and the published leaderboard's",
        ),
    ),
    "mteb-2.26-tie-aware": Protocol(
        name="mteb-2.26-tie-aware",
        reference="mteb 2.26.24's vectors, draws and metrics; rank metrics as expected values over the orders of tied scores "
        "(McSherry and Najork, ECIR 2008), zero-shot argmax ties split (not mteb's numbers where scores tie)",
        resampler="torchaudio-sinc-hann",
        text_documents="title-text-strip",
        vectors="mteb-2.26",
        ranks="expected-over-tie-orders",
        notes=(
            "a score that ties does not depend on the order a CPU's rounding puts tied items in; where nothing ties "
            "within the tolerance the scores equal mteb-2.26's",
        ),
    ),
}
DEFAULT_PROTOCOL = "mteb-2.26"


def get_protocol(name: str | Protocol) -> Protocol:
    """A protocol by name (a Protocol is returned as is); an unknown name fails in one line."""
    if isinstance(name, Protocol):
        return name
    if name not in PROTOCOLS:
        raise SpecError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]
