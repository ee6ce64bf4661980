#!/usr/bin/env python3
"""Commit latency of the SQLite FTS5 peer: writing one note and making it
searchable, durably, in a database that already holds N notes and M source
records.

The peer of Scriptorium's one-block commit (`cargo bench -p
scriptorium-benches --bench commit` drives it with --serve, in turn with
its own commits). One on-disk database file with two FTS5 tables,

  sources(source_id UNINDEXED, body)                M rows, 4-40 words each
  notes(path UNINDEXED, block_id UNINDEXED, body)   N rows, 8-40 words each

both with tokenize='porter'. Texts are drawn from a seeded Zipf vocabulary
of 60,000 pseudo-words plus common English words (as in the Rust corpus).
The tables are filled in bulk (synchronous=OFF, one transaction, then
FTS5's 'optimize'), outside the timed part.

One commit, timed: BEGIN; INSERT one note; COMMIT; on an open connection
with PRAGMA synchronous=FULL, in the journal mode asked for (WAL: the WAL
file is fsynced at every commit and checkpointed automatically every 1,000
pages, inside whichever commit crosses the limit; DELETE: the rollback
journal and the database are fsynced at every commit). Every commit is
visible to the next query (FTS5 indexes the row in the same transaction).
Ten untimed commits follow every change of mode. Percentiles are taken as
the Rust benches take them: the value at index round((n - 1) * p) of the
sorted timings.

Note counts are reached in ascending order in the same database: for
--notes 1000,10000 the notes table is filled to 1,000, measured, then
filled to 10,000 (the notes the timed commits added count towards it).

Usage, measuring by itself:
  python3 benches/peers/commit_latency.py --dir DIR [--sources 1000000]
      [--notes 1000,10000,100000] [--commits 100] [--journal wal,delete] [--json]

With --json, stdout gets one JSON line per (notes, journal mode) and the
table goes to stderr.

Driven (--serve --dir DIR --sources M): after the sources are written it
prints {"ready": ...}, then answers one JSON line per command line on
stdin: `fill N` (fill the notes to N), `mode wal|delete` (switch, then the
untimed commits), `commit` (one timed commit: {"ms": ...}), `quit`.

Nothing is fetched from the network. The database file is
DIR/fts5-commit.db (replaced if present, removed at the end unless --keep).
"""

import argparse
import itertools
import json
import math
import os
import random
import sqlite3
import sys
import time

COMMON = (
    "the i you to and a it is that of in we my for was so have on me but this with just be are do "
    "what at can not yeah like your about all they get if go really how when did one will there out "
    "up know good time think great love going"
).split()
SYLLABLES = (
    "ka lo mi ten ar vel sto ne ri pa dor u shi gra be lum fe ho zin tra co mer li van ek so pla nu tor dea"
).split()
VOCABULARY = 60_000
WARM_UP = 10
SUFFIXES = ("", "-wal", "-shm", "-journal")


def vocabulary(rng):
    out = list(COMMON)
    seen = set(out)
    while len(out) < VOCABULARY:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randrange(2, 5)))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


class Texts:
    """Seeded texts over a Zipf (s = 1) vocabulary."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.vocab = vocabulary(self.rng)
        total = 0.0
        self.cum = []
        for k in range(1, len(self.vocab) + 1):
            total += 1.0 / k
            self.cum.append(total)

    def text(self, lo, hi):
        n = self.rng.randrange(lo, hi + 1)
        return " ".join(self.rng.choices(self.vocab, cum_weights=self.cum, k=n))


def percentile(sorted_values, p):
    """The value at index round((n - 1) * p), rounding halves up (as the Rust benches)."""
    return sorted_values[int(math.floor((len(sorted_values) - 1) * p + 0.5))]


class Peer:
    """The database, its texts, and one timed commit at a time."""

    def __init__(self, directory, sources, seed):
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, "fts5-commit.db")
        self.remove()
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute(
            "CREATE VIRTUAL TABLE sources USING fts5(source_id UNINDEXED, body, tokenize='porter')"
        )
        self.db.execute(
            "CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, block_id UNINDEXED, body, tokenize='porter')"
        )
        self.texts = Texts(seed)
        self.serial = itertools.count()
        self.mode = None
        started = time.perf_counter()
        self._fill(
            "sources",
            ((f"openprogram/t{n // 1000:05}/msg_{n:08x}", self.texts.text(4, 40)) for n in range(sources)),
        )
        self.sources = sources
        self.sources_s = time.perf_counter() - started

    def remove(self):
        for suffix in SUFFIXES:
            if os.path.exists(self.path + suffix):
                os.remove(self.path + suffix)

    def _fill(self, table, rows):
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("BEGIN")
        if table == "sources":
            self.db.executemany("INSERT INTO sources(source_id, body) VALUES (?, ?)", rows)
        else:
            self.db.executemany("INSERT INTO notes(path, block_id, body) VALUES (?, ?, ?)", rows)
        self.db.execute("COMMIT")
        self.db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        self.mode = None

    def notes(self):
        return self.db.execute("SELECT count(*) FROM notes").fetchone()[0]

    def fill(self, size):
        have = self.notes()
        if have < size:
            self._fill(
                "notes",
                (
                    (f"topics/g{k // 10000:03}/f{k // 100:05}.md", f"n{k:x}", self.texts.text(8, 40))
                    for k in range(have, size)
                ),
            )
        return self.notes()

    def set_mode(self, mode):
        got = self.db.execute(f"PRAGMA journal_mode={mode}").fetchone()[0]
        self.db.execute("PRAGMA synchronous=FULL")
        self.mode = got
        for _ in range(WARM_UP):
            self.commit()
        return got

    def commit(self):
        """One durable insert; its time in milliseconds."""
        k = next(self.serial)
        row = (f"topics/bench/f{k % 97:05}.md", f"new{k:x}", self.texts.text(8, 40))
        t0 = time.perf_counter()
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO notes(path, block_id, body) VALUES (?, ?, ?)", row)
        self.db.execute("COMMIT")
        return (time.perf_counter() - t0) * 1e3

    def size_mb(self):
        return sum(os.path.getsize(self.path + s) for s in ("", "-wal") if os.path.exists(self.path + s)) / 1e6

    def close(self, keep):
        self.db.close()
        if not keep:
            self.remove()


def reply(obj):
    print(json.dumps(obj), flush=True)


def serve(peer):
    reply({"ready": True, "sqlite": sqlite3.sqlite_version, "sources": peer.sources, "sources_s": peer.sources_s})
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            if words[0] == "fill":
                reply({"notes": peer.fill(int(words[1]))})
            elif words[0] == "mode" and len(words) == 2 and words[1] in ("wal", "delete"):
                reply({"journal_mode": peer.set_mode(words[1]), "db_mb": peer.size_mb()})
            elif words[0] == "commit":
                if peer.mode is None:
                    reply({"error": "set a mode first"})
                else:
                    reply({"ms": peer.commit()})
            elif words[0] == "quit":
                return
            else:
                reply({"error": f"unknown command {line.strip()!r}"})
        except (sqlite3.Error, ValueError, IndexError) as e:
            reply({"error": str(e)})


def measure(peer, sizes, modes, commits, as_json):
    out = sys.stderr if as_json else sys.stdout
    print(
        f"{'notes':>9} {'sources':>9} {'journal':>8} {'p50 ms':>9} {'p99 ms':>9} {'mean ms':>9} {'db MB':>8}",
        file=out,
        flush=True,
    )
    for size in sizes:
        peer.fill(size)
        for mode in modes:
            got = peer.set_mode(mode)
            timings = sorted(peer.commit() for _ in range(commits))
            r = {
                "engine": "sqlite fts5 porter",
                "sqlite": sqlite3.sqlite_version,
                "journal_mode": got,
                "synchronous": "full",
                "notes": size,
                "sources": peer.sources,
                "commits": len(timings),
                "p50_ms": percentile(timings, 0.5),
                "p99_ms": percentile(timings, 0.99),
                "mean_ms": sum(timings) / len(timings),
                "db_mb": peer.size_mb(),
            }
            print(
                f"{size:>9} {peer.sources:>9} {got:>8} {r['p50_ms']:>9.3f} {r['p99_ms']:>9.3f}"
                f" {r['mean_ms']:>9.3f} {r['db_mb']:>8.1f}",
                file=out,
                flush=True,
            )
            if as_json:
                print(json.dumps(r), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="folder for the database file")
    ap.add_argument("--sources", type=int, default=1_000_000, help="source rows (default 1,000,000)")
    ap.add_argument("--notes", default="1000,10000,100000", help="note counts, ascending, comma-separated")
    ap.add_argument("--commits", type=int, default=100, help="timed commits per size and mode (default 100)")
    ap.add_argument("--journal", default="wal,delete", help="journal modes to measure: wal, delete (default both)")
    ap.add_argument("--seed", type=int, default=0x5C0F)
    ap.add_argument("--keep", action="store_true", help="keep the database file")
    ap.add_argument("--json", action="store_true", help="one JSON line per measurement on stdout")
    ap.add_argument("--serve", action="store_true", help="answer commands on stdin (see above)")
    args = ap.parse_args()

    sizes = [int(s) for s in args.notes.split(",") if s.strip()]
    if sizes != sorted(sizes):
        sys.exit("--notes must be ascending")
    modes = [m.strip().lower() for m in args.journal.split(",") if m.strip()]
    if any(m not in ("wal", "delete") for m in modes):
        sys.exit("--journal takes wal and/or delete")

    peer = Peer(args.dir, args.sources, args.seed)
    try:
        if args.serve:
            serve(peer)
        else:
            out = sys.stderr if args.json else sys.stdout
            print(
                f"sqlite {sqlite3.sqlite_version}: {args.sources} source rows written in {peer.sources_s:.1f} s",
                file=out,
                flush=True,
            )
            measure(peer, sizes, modes, args.commits, args.json)
    finally:
        peer.close(args.keep)


if __name__ == "__main__":
    main()
