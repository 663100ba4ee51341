"""Which rows, ids, labels and audio a task gets from a hub dataset repository: mteb 2.26.24's
loading rules, restated in one place. maeb.spec.loader and maeb.data.sources follow these functions and nothing
else decides which config, split, column or id is read. Each rule cites what it mirrors (paths
under mteb/; tests/parity/test_loaders.py checks them against that code on every layout variant).

Retrieval and reranking (abstasks/retrieval_dataset_loaders.py, RetrievalDatasetLoader):
  R1  split fallback (`_get_split`): a config is read at the task's split when it has one of that
      name, else at its only split whatever that is called (MACS_t2a's corpus sits under split
      `corpus`); a config with several splits and none of that name is an error.
  R2  config names (`_load_corpus`, `_load_queries`, `_load_qrels`, `_load_top_ranked`): a subset
      other than `default` prefixes every config with `{subset}-`. Queries come from the config
      `query` whenever the repository has one (even for a prefixed subset), else `{prefix}queries`.
      Qrels come from `{subset}-qrels` for a subset; without one from `default`, else `qrels`.
      `{prefix}top_ranked`, when present, gives each query its candidates (reranking).
      `{prefix}instruction` would join instructions to the queries; maeb refuses it (no audio
      task has one).
  R3  ids (`_load_corpus`, `_load_queries`): a `_id` column is cast to string and renamed `id`;
      else `id` is used as stored. maeb stops on ids that are not strings: mteb would compare
      them with the string ids of the qrels and silently match none.
  R4  qrels (`_load_qrels`): only query-id, corpus-id and score, cast to string, string, int32;
      grouped by query, so a repeated (query, document) pair keeps its last score.
  R5  queries (`load`): only queries whose id has qrels are kept, in stored order, repeats kept.
  R6  candidates (`_load_top_ranked`): query-id to string, corpus-ids to a list of strings; a
      repeated query keeps its last list.
  R7  content columns (abstasks/task_metadata.py `get_modalities`, abstasks/retrieval.py
      `_get_content_columns`): the category decides: in `a2t` queries are read from `audio` and
      documents from `text`, and so on; a column is named after its modality.
  R8  document text (_create_dataloaders.py `_corpus_to_dict`): `(title + " " + text).strip()`
      when the title is not empty, else `text.strip()`; query text as stored
      (maeb.data.sources.document_text).
Tables (classification, clustering, pair, zero-shot, multilabel; abstasks/abstask.py
`AbsTask.load_data`):
  T1  a task without subsets reads the config its metadata names (`dataset["name"]`, maeb's
      data.config), else the repository's default config: the one named `default` or marked
      `default: true`, or its only config (datasets' `load_dataset` without a name).
  T2  a task with subsets reads one config per subset (`hf_subsets`, narrowed by languages).
  T3  splits are read by name, no fallback (`self.dataset[split]`); where a task's own
      dataset_transform renames a split, the spec says so (data.split_names).
  T4  ClassLabel columns arrive as their integer ids and are used as labels as they are.
  T5  a task whose dataset_transform calls `stratified_subsampling` (abstasks/abstask.py) gets a
      label column that was not a ClassLabel cast to one, names sorted as text over all splits,
      even when nothing is subsampled; maeb keeps the values. The class order is the same
      (sorted), so probes and clusterings score alike; integer labels past 9 would be renumbered
      in text order (1, 10, 2, ...), which no catalog task with that step has (UrbanSound8kZeroshot
      is 0-9).
  T6  mteb's clip filters (VoxPopuli tasks' dataset_transform) drop clips that are empty or too
      short, but bytes that are no audio at all stop them with a decoder error; maeb's
      drop_invalid_audio drops those too.
Tasks with their own load_data or dataset_transform (Clotho, Common Voice, FLEURS, SVQ, JamALT,
FSD2019Kaggle, the transforms of 20 others) are restated per task in the specs by
scripts/import_catalog.py (CUSTOM)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.errors import DataError


# -- R1 ------------------------------------------------------------------------------------------
def pick_split(available: Sequence[str], wanted: str, where: str) -> str:
    """The split a config is read at: `wanted`, else its only split (R1)."""
    available = list(available)
    if wanted in available:
        return wanted
    if len(available) == 1:
        return str(available[0])
    raise DataError(f"{where}: no split {wanted!r} among {available}; name the right one in the spec's eval_splits")


# -- R2 ------------------------------------------------------------------------------------------
def retrieval_configs(configs: Sequence[str], subset: str, where: str) -> dict[str, str | None]:
    """Config per role (corpus, queries, qrels, top_ranked) of a retrieval repository (R2)."""
    known = set(configs)
    prefix = "" if subset == "default" else f"{subset}-"
    if prefix + "instruction" in known:
        raise DataError(f"{where}: config {prefix}instruction (instructions joined to queries) is not supported by maeb")
    if prefix:
        qrels = prefix + "qrels"
    else:
        qrels = "default" if "default" in known else "qrels"
    names: dict[str, str | None] = {
        "corpus": prefix + "corpus",
        "queries": "query" if "query" in known else prefix + "queries",
        "qrels": qrels,
    }
    for role, name in names.items():
        if name not in known:
            expected = {"qrels": f"{prefix}qrels" if prefix else "default or qrels", "queries": f"query or {prefix}queries"}
            raise DataError(
                f"{where}: no {role} config ({expected.get(role, name)}); the repository has {', '.join(sorted(known))}"
            )
    names["top_ranked"] = prefix + "top_ranked" if prefix + "top_ranked" in known else None
    return names


# -- R3 ------------------------------------------------------------------------------------------
def id_column(columns: Sequence[str], where: str) -> str:
    """`_id` (BEIR's name) when present, else `id` (R3)."""
    if "_id" in columns:
        return "_id"
    if "id" in columns:
        return "id"
    raise DataError(f"{where}: no id column (id or _id); columns are {', '.join(columns)}")


def ids_as_strings(values: list, column: str, where: str) -> list[str]:
    """A retrieval id column as strings: '_id' values are cast (as mteb does); other non-string ids are a DataError, because mteb
    would match none of them against the qrels."""
    if column == "_id":
        return [str(v) for v in values]
    bad = next((v for v in values if not isinstance(v, str)), None)
    if bad is not None:
        raise DataError(
            f"{where}: ids in column 'id' are {type(bad).__name__}, not strings ({bad!r}); mteb matches them against "
            "the string ids of the qrels and finds none. Store them as strings (or as '_id', which is cast)"
        )
    return list(values)


# -- R7 ------------------------------------------------------------------------------------------
def content_columns(category: str | None, audio_column: str = "audio") -> tuple[str | None, str | None]:
    """(query column, document column) of a retrieval task's category; None: audio if present,
    else text (a spec without a category)."""
    if not category or "2" not in category:
        return None, None
    query, doc = category.split("2", 1)
    return (audio_column if query == "a" else "text"), (audio_column if doc == "a" else "text")


def items(table, content: str | None, audio_column: str, where: str, document: bool = False) -> list[tuple[str, object]]:
    """(id, audio or text) per row of a corpus or queries table (R3, R7, R8)."""
    from .sources import document_text

    id_col = id_column(list(table.columns), where)
    ids = ids_as_strings(table[id_col], id_col, where)
    if content is None:
        content = audio_column if audio_column in table else "text"
    table.require([content], "audio or text content")
    values = table[content]
    if content != audio_column and document:
        titles = table["title"] if "title" in table else [None] * len(table)
        return [(i, document_text(t, title)) for i, t, title in zip(ids, values, titles)]
    return list(zip(ids, values))


# -- R4, R5, R6 -----------------------------------------------------------------------------------
def qrels(table, where: str) -> dict[str, dict[str, int]]:
    """query id -> {document id: score} (R4)."""
    table.require(["query-id", "corpus-id", "score"], "qrels")
    out: dict[str, dict[str, int]] = {}
    for q, c, s in zip(table["query-id"], table["corpus-id"], table["score"]):
        try:
            score = int(s)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{where}: qrels score {s!r} of query {q!r} is not an integer") from exc
        out.setdefault(str(q), {})[str(c)] = score
    return out


def keep_queries(queries: list[tuple[str, object]], relevant: dict) -> list[tuple[str, object]]:
    """Queries with qrels, in stored order (R5)."""
    return [(q, v) for q, v in queries if q in relevant]


def candidates(table, where: str) -> dict[str, list[str]]:
    """query id -> candidate document ids (R6)."""
    table.require(["query-id", "corpus-ids"], "top_ranked")
    return {str(q): [str(c) for c in (cs or [])] for q, cs in zip(table["query-id"], table["corpus-ids"])}
