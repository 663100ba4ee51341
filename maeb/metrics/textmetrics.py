"""Caption and answer metrics computed as MECAT computes them, so scores equal the `mecat` package's.

BLEU-1..4: per sample (lower-cased whitespace tokens, clipped n-gram precision against all
references, brevity penalty from the closest reference length, geometric mean of p1..pn, zero when
any p_i is zero), averaged over samples. FENSE: cosine between the candidate's sentence embedding
and the mean of its references' unit embeddings, times the fluency-error penalty. DATE: the same
similarity, made discriminative: each candidate is ranked against every clip's references (a band
of +-delta/2 around its own score counts against it), and similarity and that rank are combined by
a harmonic mean per sample. DATE also re-weights input tokens by a TF-IDF over static word
embeddings, computed in half precision as MECAT does. Group scores are rounded to 4 places, as
MECAT reports them.

Checkpoints: MECAT uses paraphrase-TinyBERT-L6-v2 and the FENSE error checker
echecker_clotho_audiocaps_base; both are passed in by the caller (offline: any sentence-transformers
folder, and no checker)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# DATE's discrimination band per caption subtask (MECAT's values); QA groups use "long"'s
DATE_DELTA = {"long": 0.1703, "short": 0.1772, "speech": 0.2078, "music": 0.1566, "sound": 0.1988, "environment": 0.2150}
SPECIAL_IDS = (0, 101, 102)  # [PAD], [CLS], [SEP] of BERT's uncased vocabulary, as MECAT filters them


# -- BLEU ------------------------------------------------------------------------------------
def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)) if n <= len(tokens) else Counter()


def _precision(cand: list[str], refs: list[list[str]], n: int) -> float:
    counts = _ngrams(cand, n)
    if not counts:
        return 0.0
    best: Counter = Counter()
    for ref in refs:
        ref_counts = _ngrams(ref, n)
        for gram in counts:
            best[gram] = max(best[gram], ref_counts[gram])
    return sum(min(c, best[g]) for g, c in counts.items()) / sum(counts.values())


def sentence_bleu(candidate: str, references: Sequence[str], max_n: int = 4) -> list[float]:
    """BLEU-1 .. BLEU-max_n of one lower-cased, whitespace-split candidate against its references, with the brevity penalty of the
    closest reference length."""
    cand = candidate.lower().split()
    refs = [r.lower().split() for r in references]
    closest = min((len(r) for r in refs), key=lambda length: abs(length - len(cand)))
    if len(cand) > closest:
        bp = 1.0
    elif closest == 0:
        bp = 0.0
    else:
        bp = math.exp(1 - closest / len(cand)) if cand else 0.0
    precisions = [_precision(cand, refs, n) for n in range(1, max_n + 1)]
    out = []
    for n in range(1, max_n + 1):
        if len(cand) < n or precisions[n - 1] == 0.0 or any(p == 0.0 for p in precisions[:n]):
            out.append(0.0)
        else:
            out.append(bp * math.exp(sum(math.log(p) for p in precisions[:n]) / n))
    return out


def corpus_bleu(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """BLEU-1 to BLEU-4 of a corpus: the mean of the sentence scores (0 for an empty corpus)."""
    per = np.array([sentence_bleu(c, r) for c, r in zip(candidates, references)]) if candidates else np.zeros((0, 4))
    return {f"Bleu_{n}": float(per[:, n - 1].mean()) if len(per) else 0.0 for n in range(1, 5)}


# -- FENSE and DATE ---------------------------------------------------------------------------
class SentenceMetrics:
    """FENSE and DATE with a given sentence encoder and optional fluency-error checker (a callable
    from sentences to penalty factors: 1 for fluent, 1 - penalty for flagged)."""

    def __init__(self, sbert_path: str, device: str = "cpu", error_checker: Callable | None = None, batch_size: int = 32):
        from sentence_transformers import SentenceTransformer

        self.sbert = SentenceTransformer(str(sbert_path), device=device)
        self.bert: Any = self.sbert[0].auto_model  # a transformers model: its embeddings module is read below
        self.device = device
        self.error_checker = error_checker
        self.batch_size = batch_size

    # token-level statistics, in the dtypes MECAT uses so the numbers agree
    def _tfidf_weights(self, input_ids):
        import torch
        import torch.nn.functional as F

        special = (input_ids == 0) | (input_ids == 101) | (input_ids == 102)
        unique = torch.unique(input_ids)
        unique = unique[(unique != 0) & (unique != 101) & (unique != 102)]
        weights = torch.ones_like(input_ids, dtype=torch.float16)
        if len(unique) == 0:
            return weights
        with torch.no_grad():
            static = self.bert.embeddings.word_embeddings(unique.to(self.device)).cpu()
        static = F.normalize(static.to(torch.float16), p=2, dim=-1)
        n_words = len(unique)
        word_sim = torch.zeros((n_words, n_words), dtype=torch.float16)
        for i in range(0, n_words, 1024):
            word_sim[i : i + 1024] = torch.mm(static[i : i + 1024], static.t())
        table = torch.zeros((self.sbert.tokenizer.vocab_size, static.shape[1]), dtype=torch.float16)
        table.index_copy_(0, unique.long(), static)
        idf_sum = torch.zeros(n_words, dtype=torch.float32)
        for i in range(0, len(input_ids), 256):
            ids = input_ids[i : i + 256].long()
            embs = F.embedding(ids, table) * (~special[i : i + 256]).unsqueeze(-1).to(torch.float16)
            sim = torch.mm(static, embs.reshape(-1, static.shape[1]).t()).reshape(n_words, len(ids), -1)
            idf_sum += torch.clamp(sim.pow(2).sum(dim=2), min=0, max=1.0).float().sum(dim=1)
        idf = (torch.log((len(input_ids) + 1) / (idf_sum + 1)) + 1).numpy()
        position = {int(u): k for k, u in enumerate(unique)}
        sim_np = word_sim.numpy()
        for i, row in enumerate(input_ids.numpy()):
            cols = [j for j, t in enumerate(row) if t not in SPECIAL_IDS and int(t) in position]
            if not cols:
                continue
            idx = [position[int(row[j])] for j in cols]
            tf = np.sum(sim_np[np.ix_(idx, idx)] ** 2, axis=1)
            w = tf * idf[idx]
            if np.mean(w) > 1e-9:
                w = w / np.mean(w)
            weights[i, cols] = torch.tensor(w, dtype=torch.float16)
            if row[0] == 101:
                weights[i, 0] = float(w.max())
            sep = np.where(row == 102)[0]
            if len(sep):
                weights[i, sep[0]] = float(w.min())
        return weights

    def _embed(self, sentences: list[str], tfidf: bool):
        """Unit sentence embeddings (float32), the whole list padded to one length as MECAT pads it."""
        import torch
        import torch.nn.functional as F

        features = self.sbert.tokenize(sentences)
        ids, mask = features["input_ids"], features["attention_mask"]
        types = features.get("token_type_ids")
        weights = self._tfidf_weights(ids) if tfidf else None
        out = []
        with torch.no_grad():
            for i in range(0, len(sentences), self.batch_size):
                batch = {
                    "input_ids": ids[i : i + self.batch_size].to(self.device),
                    "attention_mask": mask[i : i + self.batch_size].to(self.device),
                }
                if types is not None:
                    batch["token_type_ids"] = types[i : i + self.batch_size].to(self.device)
                if weights is not None:
                    words = self.bert.embeddings.word_embeddings(batch.pop("input_ids"))
                    batch["inputs_embeds"] = words * weights[i : i + self.batch_size].to(
                        self.device, dtype=words.dtype
                    ).unsqueeze(-1)
                out.append(self.sbert.forward(batch)["sentence_embedding"].float().cpu())
        return F.normalize(torch.cat(out), p=2, dim=-1)

    def _penalties(self, sentences: list[str]):
        import torch

        if self.error_checker is None:
            return torch.ones(len(sentences))
        return torch.as_tensor(self.error_checker(sentences), dtype=torch.float32)

    def score(
        self,
        candidates: Sequence[str],
        references: Sequence[Sequence[str]],
        keys: Sequence[str] | None = None,
        delta: float = DATE_DELTA["long"],
        metric: str = "date",
    ) -> dict:
        """Group scores for one MECAT evaluation group: {"fense"} or {"similarity", "discrimination", "date"}.
        Samples are taken in sorted key order, as MECAT does; every sample needs the same number of
        references (MECAT averages them as one block)."""
        import torch

        keys = list(keys) if keys is not None else [f"ref_{i}" for i in range(len(candidates))]
        order = sorted(range(len(keys)), key=lambda i: keys[i])
        cands = [candidates[i] for i in order]
        refs = [list(references[i]) or [""] for i in order]
        k = len(refs[0])
        if any(len(r) != k for r in refs):
            raise ValueError(f"every sample needs the same number of references ({k}); MECAT averages them as one block")
        tfidf = metric == "date"
        ref_emb = self._embed([s for r in refs for s in r], tfidf).reshape(len(refs), k, -1).mean(dim=1)
        cand_emb = self._embed(cands, tfidf)
        penalty = self._penalties(cands)
        similarity = (cand_emb * ref_emb).sum(dim=1) * penalty
        if metric == "fense":
            return {
                "fense": round(similarity.mean().item(), 4),
                "per_sample": dict(zip([keys[i] for i in order], similarity.tolist())),
            }
        n = len(cands)
        rank = torch.zeros(n)
        for i in range(0, n, 1024):
            block = torch.mm(cand_emb[i : i + 1024], ref_emb.t()) * penalty[i : i + 1024].unsqueeze(1)
            own = similarity[i : i + 1024].unsqueeze(1)
            above = (block > own + delta / 2).sum(dim=1).float()
            near = ((block <= own + delta / 2) & (block >= own - delta / 2)).sum(dim=1).float()
            rank[i : i + 1024] = 1 - (above + near) / n
        date = 2 * similarity * rank / (similarity + rank + 1e-8)
        return {
            "similarity": round(similarity.mean().item(), 4),
            "discrimination": round(rank.mean().item(), 4),
            "date": round(date.mean().item(), 4),
            "per_sample": dict(zip([keys[i] for i in order], date.tolist())),
        }
