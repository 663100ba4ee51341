"""`--layers`: a layer sweep. One model is loaded once and each requested hidden layer runs as an
experiment of its own (mteb's experiments folder, `hidden_layer_N`), task by task, every layer
through the runner as a plain run would go, with a maeb.encoders.layers.LayerView as its encoder.

Why an experiment and not a model name (`name@layerN`): mteb's layout has no layer axis, but its
experiments folder is where a model's non-default settings go, and a layer is one; the model keeps
its name and registry record, mteb's ResultCache finds the files, and the board shows each layer
as its own row ("model [hidden_layer_4]"). The layer joins the declared identity, so its cache
file and run identity are its own; a plain run's identities do not change."""

from __future__ import annotations

from dataclasses import replace

from ..core.errors import ModelError, SpecError
from ..encoders import check_precision, load_encoder
from ..encoders.layers import LayerBank, LayerView, supports_layers

LAYER_KEY = "hidden_layer"  # the experiment setting and declared-identity key of a layer
SWEEP_FAMILIES = (
    "hf-whisper",
    "hf-ssl",
    "hf-mms",
    "hf-ast",
    "hf-clap",
)  # the built-in families whose wrappers expose hidden states


def parse_layers(text: str | list[int] | tuple[int, ...], count: int | None = None, model: str = "") -> list[int]:
    """--layers as a sorted list of layer indices: "all" (needs `count`, the model's hidden
    states) or comma-separated integers (negative: from the last, as Python indexes; evaluate()
    also takes a list). Without `count` only the syntax is checked (and [] returned for "all")."""
    text = ",".join(map(str, text)) if isinstance(text, (list, tuple)) else str(text).strip()
    if text == "all":
        return list(range(count)) if count is not None else []
    try:
        wanted = [int(part) for part in text.split(",")]
    except ValueError:
        raise SpecError(f"--layers takes all or comma-separated layer indices (0,4,8), not {text!r}") from None
    if count is None:
        return sorted(set(wanted))
    bad = [i for i in wanted if not -count <= i < count]
    if bad:
        raise SpecError(
            f"--layers {text}: model {model!r} has hidden states 0..{count - 1} (0: the input to the first layer); {bad[0]} is not one"
        )
    return sorted({i % count for i in wanted})


def layer_job(job, layer: int):
    """The resolved run of one layer: the layer in the declared identity (its cache and run
    identity) and in the experiment settings (its folder), the sweep's own options dropped."""
    cfg = replace(job.options, layers=None, precision=None)  # the dtype a --precision sets is in the overrides already
    return replace(
        job,
        options=cfg,
        declared={**job.declared, LAYER_KEY: layer},
        experiment={**job.experiment, LAYER_KEY: layer},
    )


def sweep(meta, specs, job, log):
    """Run `specs` once per requested layer of `meta`'s model (job: maeb.run.options.ResolvedRun
    with `layers` set), loading the model once; returns one RunSummary for all layers, its task
    names suffixed with the layer."""
    from .runner import run
    from .summary import RunSummary, add_stats

    cfg = job.options
    encoder = load_encoder(
        meta, device=cfg.device, protocol=job.protocol, endpoints=cfg.endpoints, raise_unexpected=cfg.debug, **job.overrides
    )
    check_precision(meta, encoder, cfg.precision)
    if not supports_layers(encoder):
        raise ModelError(
            f"model {meta.name!r} (family {meta.family!r}): --layers needs a wrapper that exposes its hidden states "
            f"(layer_count and embed_layers); built-in families with one: {', '.join(SWEEP_FAMILIES)}"
        )
    layers = parse_layers(cfg.layers, int(encoder.layer_count()), meta.name)
    log(f"{meta.name}: layer sweep over hidden states {', '.join(map(str, layers))} of 0..{encoder.layer_count() - 1}")
    bank, total = LayerBank(encoder), RunSummary()
    for spec in specs:
        for layer in layers:
            part = run(meta, [spec], layer_job(job, layer), log, encoder=LayerView(encoder, layer, bank))
            tag = f" [{LAYER_KEY} {layer}]"
            total.done += [n + tag for n in part.done]
            total.skipped_existing += [n + tag for n in part.skipped_existing]
            total.skipped_modality += [n + tag for n in part.skipped_modality]
            total.failed.update({n + tag: why for n, why in part.failed.items()})
            total.results += part.results
            add_stats(total.stats, part.stats)
            total.wall_seconds += part.wall_seconds
        bank.clear()  # the next task's clips are others
    log(f"{meta.name}: layer sweep ran the model on {bank.forward_passes} batches for {len(layers)} layers")
    return total
