#!/usr/bin/env python3
"""Retrieval quality of Python BM25 engines on LoCoMo, scored like
`cargo xtask eval locomo`.

Every turn of every session of a conversation becomes one document,
`"<speaker> <text>"`, with `" [shares <blip_caption>]"` appended when the
turn shares an image. Each question is asked only against the documents of
its own conversation (one index per conversation), and its recall@k is the
fraction of its evidence dia_ids found among the dia_ids of the top k
documents. The figures are means over questions, as percentages, overall
and per category.

Engines:
  * bm25s with PyStemmer's English stemmer and English stop words, at its
    defaults (k1=1.5, b=0.75) and at k1=0.9, b=0.4;
  * rank_bm25's BM25Okapi over lowercase `\\w+` words, stemmed with the same
    Snowball stemmer (no stop words);
  * SQLite FTS5 with `tokenize='porter'`, queried with an OR of the
    question's quoted words and ranked by bm25().

Usage:
  python3 benches/peers/locomo_recall.py --data PATH [--json]

With --json, stdout gets one JSON line per engine and the table goes to
stderr. Nothing is fetched from the network.
"""

import argparse
import json
import os
import re
import sqlite3
import sys
import time

# Keep any BLAS / OpenMP pools to one thread, as in latency.py; set before
# numpy is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import bm25s  # noqa: E402
import numpy as np  # noqa: E402
import Stemmer  # noqa: E402  (PyStemmer)
from rank_bm25 import BM25Okapi  # noqa: E402

KS = (1, 5, 10)
CATEGORIES = {
    1: "1 multi-hop",
    2: "2 temporal",
    3: "3 open-domain",
    4: "4 single-hop",
    5: "5 adversarial",
}
DIA_ID = re.compile(r"^D\d+:\d+$")
WORD = re.compile(r"\w+")


# --------------------------------------------------------------------------
# Data


def conversation_docs(sample):
    """The documents of one conversation: (dia_ids, texts), in turn order."""
    conv = sample["conversation"]
    dia_ids, texts = [], []
    n = 1
    while f"session_{n}" in conv:
        for turn in conv[f"session_{n}"]:
            content = turn.get("text") or ""
            caption = turn.get("blip_caption")
            if isinstance(caption, str):
                content += f" [shares {caption}]"
            if not content:
                continue
            dia_ids.append(turn["dia_id"])
            texts.append(f"{turn['speaker']} {content}")
        n += 1
    return dia_ids, texts


def evidence(values):
    """LoCoMo evidence as written (`D8:6; D9:17`, `D:11:26`) -> dia_ids."""
    out = set()
    for value in values or []:
        if not isinstance(value, str):
            continue
        for part in value.split(";"):
            p = part.strip()
            if p.startswith("D:"):
                p = "D" + p[2:]
            if DIA_ID.match(p):
                out.add(p)
    return sorted(out)


def words(text):
    """Lowercase word tokens (rank_bm25's tokenizer and FTS5's query terms)."""
    return WORD.findall(text.lower())


# --------------------------------------------------------------------------
# Engines: each is built over one conversation's texts and answers
# search(question, k) with the indices of its top k documents, best first.


STEMMER = Stemmer.Stemmer("english")


class Bm25s:
    def __init__(self, texts, k1, b):
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=STEMMER, show_progress=False)
        self.n = len(texts)
        self.retriever = bm25s.BM25(k1=k1, b=b)
        self.retriever.index(tokens, show_progress=False)

    def search(self, question, k):
        query = bm25s.tokenize(
            [question], stopwords="en", stemmer=STEMMER, return_ids=False, show_progress=False
        )
        docs, _scores = self.retriever.retrieve(query, k=min(k, self.n), show_progress=False)
        return docs[0].tolist()


class RankBm25:
    def __init__(self, texts):
        self.bm25 = BM25Okapi([STEMMER.stemWords(words(t)) for t in texts])

    def search(self, question, k):
        scores = self.bm25.get_scores(STEMMER.stemWords(words(question)))
        # A stable sort: equal scores keep document order.
        return np.argsort(-scores, kind="stable")[:k].tolist()


def fts5_query(text):
    """An FTS5 MATCH expression: the text's words, each quoted, joined by OR."""
    return " OR ".join(f'"{w}"' for w in words(text))


class Fts5:
    def __init__(self, texts):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter')")
        with self.db:
            self.db.executemany(
                "INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(texts)
            )

    def search(self, question, k):
        match = fts5_query(question)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (match, k),
        )
        return [r[0] for r in rows]


ENGINES = [
    ("bm25s k1=1.5 b=0.75", lambda texts: Bm25s(texts, k1=1.5, b=0.75)),
    ("bm25s k1=0.9 b=0.4", lambda texts: Bm25s(texts, k1=0.9, b=0.4)),
    ("rank_bm25 BM25Okapi", RankBm25),
    ("sqlite fts5 porter", Fts5),
]


# --------------------------------------------------------------------------
# Evaluation


class Tally:
    def __init__(self):
        self.questions = 0
        self.at = [0.0] * len(KS)

    def add(self, want, got):
        self.questions += 1
        for i, k in enumerate(KS):
            top = set(got[:k])
            self.at[i] += sum(1 for w in want if w in top) / len(want)

    def pct(self, i):
        return 100.0 * self.at[i] / max(self.questions, 1)


def evaluate(samples, make_engine):
    """Runs one engine over all samples: (overall Tally, {category: Tally}, skipped)."""
    overall, by_cat, skipped = Tally(), {}, 0
    for sample in samples:
        dia_ids, texts = conversation_docs(sample)
        engine = make_engine(texts)
        for qa in sample["qa"]:
            want = evidence(qa.get("evidence"))
            if not want:
                skipped += 1
                continue
            hits = engine.search(qa["question"], max(KS))
            got = [dia_ids[i] for i in hits]
            cat = qa.get("category", 0)
            for tally in (overall, by_cat.setdefault(cat, Tally())):
                tally.add(want, got)
    return overall, by_cat, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="LoCoMo JSON (e.g. locomo-dev.json)")
    ap.add_argument("--json", action="store_true", help="one JSON line per engine on stdout")
    args = ap.parse_args()

    with open(args.data, encoding="utf-8") as f:
        samples = json.load(f)
    turns = sum(len(conversation_docs(s)[0]) for s in samples)

    out = sys.stderr if args.json else sys.stdout
    for name, make_engine in ENGINES:
        started = time.perf_counter()
        overall, by_cat, skipped = evaluate(samples, make_engine)
        seconds = time.perf_counter() - started
        print(
            f"{name}: {len(samples)} conversations, {turns} turns, {overall.questions} questions "
            f"({skipped} without usable evidence skipped); {seconds:.1f} s",
            file=out,
        )
        print(f"{'category':<16} {'questions':>9} {'R@1':>8} {'R@5':>8} {'R@10':>8}", file=out)
        rows = [(CATEGORIES.get(c, str(c)), t) for c, t in sorted(by_cat.items())]
        for label, t in rows + [("overall", overall)]:
            print(
                f"{label:<16} {t.questions:>9} {t.pct(0):>8.1f} {t.pct(1):>8.1f} {t.pct(2):>8.1f}",
                file=out,
            )
        print(file=out)
        if args.json:
            print(
                json.dumps(
                    {
                        "engine": name,
                        "recall_at_1": overall.pct(0),
                        "recall_at_5": overall.pct(1),
                        "recall_at_10": overall.pct(2),
                        "questions": overall.questions,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
