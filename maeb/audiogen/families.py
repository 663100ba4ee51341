"""The model families of text-to-audio systems: one record each (maeb.encoders.family.Family),
registered here, on the floor of their classes, so the encoder floor below never names them. The
catalog (maeb.spec.catalog), which reads the model entries that use these families, imports this
module; code that loads a system without the catalog imports it too."""

from __future__ import annotations

from ..encoders.families import TORCH_HF
from ..encoders.family import Family, register_family

SYSTEMS = (
    Family("tta-transformers", "maeb.audiogen.adapters:TransformersTextToAudio", requires=TORCH_HF),
    Family("tta-http", "maeb.audiogen.adapters:HTTPTextToAudio"),
    Family("mmag-oracle", "maeb.audiogen.systems:OracleSystem"),
    Family("mmag-resynth", "maeb.audiogen.systems:ResynthSystem"),
    Family("mmag-noise", "maeb.audiogen.systems:NoiseSystem"),
)

for _family in SYSTEMS:
    register_family(_family)
