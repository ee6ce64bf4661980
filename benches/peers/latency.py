#!/usr/bin/env python3
"""Index build time and top-k query latency of Python BM25 engines on the
generated benchmark corpus.

The corpus comes from the Rust crate:

  cargo run --release -q -p scriptorium-benches --bin corpus -- DOCS QUERIES OUT_DIR

which writes OUT_DIR/docs.jsonl ({"path","anchor","speaker","day","text"}
per line) and OUT_DIR/queries.jsonl ({"text"} per line). Only `text` is
indexed.

Engines, all in memory and on one thread:
  * bm25s (numpy backend, PyStemmer English stemmer, English stop words,
    k1=1.5 b=0.75), queries run sequentially (n_threads=0: no pool);
  * SQLite FTS5 with tokenize='porter' (an in-memory database; the build
    ends with FTS5's 'optimize', merging the index into one segment),
    queried with an OR of the query's quoted words, ranked by bm25();
  * rank_bm25's BM25Okapi (lowercase `\\w+` words + the same stemmer), only
    when the corpus has at most 100,000 documents, since it scores every
    document in Python for every query.

build_s is the time from the list of texts in memory to an index ready to
query (tokenizing included). A query's latency is the time from its text to
the list of its top k document numbers (tokenizing the query included). All
queries run once untimed to warm up, then once timed; p50 and p99 are
nearest-rank percentiles of those timings, in milliseconds.

Usage:
  python3 benches/peers/latency.py --corpus OUT_DIR [--k 5] [--queries N] [--json]

With --json, stdout gets one JSON line per engine and the table goes to
stderr. Nothing is fetched from the network.
"""

import argparse
import gc
import json
import math
import os
import re
import sqlite3
import sys
import time

# One thread for any BLAS / OpenMP pool; set before numpy is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import bm25s  # noqa: E402
import numpy as np  # noqa: E402
import Stemmer  # noqa: E402  (PyStemmer)
from rank_bm25 import BM25Okapi  # noqa: E402

RANK_BM25_MAX_DOCS = 100_000
WORD = re.compile(r"\w+")
STEMMER = Stemmer.Stemmer("english")


def words(text):
    """Lowercase word tokens (rank_bm25's tokenizer and FTS5's query terms)."""
    return WORD.findall(text.lower())


def read_jsonl_texts(path, limit=None):
    texts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if limit is not None and len(texts) >= limit:
                break
            if line.strip():
                texts.append(json.loads(line)["text"])
    return texts


# --------------------------------------------------------------------------
# Engines: built over the texts; search(text, k) returns the numbers of the
# top k documents, best first.


class Bm25s:
    name = "bm25s"

    def __init__(self, texts):
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=STEMMER, show_progress=False)
        self.retriever = bm25s.BM25(k1=1.5, b=0.75, backend="numpy")
        self.retriever.index(tokens, show_progress=False)

    def search(self, text, k):
        query = bm25s.tokenize(
            [text], stopwords="en", stemmer=STEMMER, return_ids=False, show_progress=False
        )
        docs, _scores = self.retriever.retrieve(query, k=k, n_threads=0, show_progress=False)
        return docs[0].tolist()


class Fts5:
    name = "sqlite fts5 porter"

    def __init__(self, texts):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter')")
        with self.db:
            self.db.executemany(
                "INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(texts)
            )
            self.db.execute("INSERT INTO docs(docs) VALUES ('optimize')")

    def search(self, text, k):
        match = " OR ".join(f'"{w}"' for w in words(text))
        if not match:
            return []
        rows = self.db.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (match, k),
        )
        return [r[0] for r in rows]


class RankBm25:
    name = "rank_bm25 BM25Okapi"

    def __init__(self, texts):
        self.bm25 = BM25Okapi([STEMMER.stemWords(words(t)) for t in texts])

    def search(self, text, k):
        scores = self.bm25.get_scores(STEMMER.stemWords(words(text)))
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top], kind="stable")].tolist()


# --------------------------------------------------------------------------
# Measurement


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def measure(engine_class, texts, queries, k):
    gc.collect()
    started = time.perf_counter()
    engine = engine_class(texts)
    build_s = time.perf_counter() - started

    for q in queries:  # warm-up, untimed
        engine.search(q, k)
    timings = []
    for q in queries:
        t0 = time.perf_counter()
        engine.search(q, k)
        timings.append((time.perf_counter() - t0) * 1e3)
    timings.sort()
    return {
        "engine": engine_class.name,
        "docs": len(texts),
        "build_s": build_s,
        "p50_ms": percentile(timings, 50),
        "p99_ms": percentile(timings, 99),
        "queries": len(queries),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="directory with docs.jsonl and queries.jsonl")
    ap.add_argument("--k", type=int, default=5, help="results per query (default 5)")
    ap.add_argument("--queries", type=int, default=None, help="use the first N queries")
    ap.add_argument("--json", action="store_true", help="one JSON line per engine on stdout")
    args = ap.parse_args()

    texts = read_jsonl_texts(os.path.join(args.corpus, "docs.jsonl"))
    queries = read_jsonl_texts(os.path.join(args.corpus, "queries.jsonl"), args.queries)
    if args.k < 1 or args.k > len(texts):
        sys.exit(f"--k must be between 1 and the number of documents ({len(texts)})")

    engines = [Bm25s, Fts5]
    if len(texts) <= RANK_BM25_MAX_DOCS:
        engines.append(RankBm25)

    out = sys.stderr if args.json else sys.stdout
    print(f"{len(texts)} docs, {len(queries)} queries, top {args.k}", file=out)
    print(f"{'engine':<22} {'docs':>9} {'build s':>9} {'p50 ms':>9} {'p99 ms':>9}", file=out, flush=True)
    for engine_class in engines:
        r = measure(engine_class, texts, queries, args.k)
        print(
            f"{r['engine']:<22} {r['docs']:>9} {r['build_s']:>9.2f} {r['p50_ms']:>9.3f} {r['p99_ms']:>9.3f}",
            file=out,
            flush=True,
        )
        if args.json:
            print(json.dumps(r), flush=True)
    if len(texts) > RANK_BM25_MAX_DOCS:
        print(f"(rank_bm25 skipped: more than {RANK_BM25_MAX_DOCS} docs)", file=out)


if __name__ == "__main__":
    main()
