#!/usr/bin/env python3
"""bindings_python.py - the Python binding (bindings/python) against the
standard library and a pure-Python snowflake generator.

Run it with the venv's interpreter once the binding is installed
(tests/bindings/test_python.sh makes one under build/python):

    build/python/venv/bin/python bench/bindings_python.py [--rounds R] [--calls N]

Each round times a batch of N calls of every contender in turn
(interleaved, so that a busy moment of the machine hits them all); the
table gives each one's median ns per ID over the rounds, the fastest peer
it is measured against, and the ratio (peer ns / idmint ns: how many times
faster idmint is). The goal stated for the binding: each idmint call at
least 3x the fastest stdlib or pure-Python peer. A report, not a test: it
exits 0 either way.

Peers: uuid.uuid4() and uuid.uuid1() for the UUID calls; for ulid() and
Snowflake.next() a pure-Python snowflake generator (a threading.Lock and
time.time(), below). The snowflake rows give both generators the same
layout: one with 16 sequence bits (65,536 IDs per millisecond), so that
the row measures the calls, and the twitter preset, whose 4,096 IDs per
millisecond cap any generator at 244 ns per ID on average (a generator
faster than that waits for the next millisecond).
"""

import argparse
import statistics
import sys
import threading
import time
import uuid
from itertools import repeat
from typing import Callable, Dict, List, Tuple

import idmint


WIDE = "time=41,node=6,seq=16,unit=1ms,epoch=1288834974657"


class PySnowflake:
    """A pure-Python snowflake generator (41 bits of ms since the twitter
    epoch, 2010-11-04, then node and sequence bits: 10 and 12 as twitter's,
    or WIDE's 6 and 16), as one would write it without a library: a lock,
    time.time(), a spin to the next millisecond when the sequence runs
    out."""

    EPOCH_MS = 1288834974657

    def __init__(self, node: int, node_bits: int = 10, seq_bits: int = 12) -> None:
        self.node = node
        self.seq_bits = seq_bits
        self.time_shift = node_bits + seq_bits
        self.seq_mask = (1 << seq_bits) - 1
        self.lock = threading.Lock()
        self.last_ms = -1
        self.seq = 0

    def next(self) -> int:
        with self.lock:
            now = int(time.time() * 1000)
            if now < self.last_ms:
                now = self.last_ms  # a step back: keep counting in the last ms
            if now == self.last_ms:
                self.seq = (self.seq + 1) & self.seq_mask
                if self.seq == 0:
                    while now <= self.last_ms:
                        now = int(time.time() * 1000)
            else:
                self.seq = 0
            self.last_ms = now
            return (((now - self.EPOCH_MS) << self.time_shift) | (self.node << self.seq_bits)
                    | self.seq)


def per_call(f: Callable[[], object], calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in repeat(None, calls):
        f()
    return (time.perf_counter_ns() - t0) / calls


def per_id_bulk(f: Callable[[int], object], calls: int, batch: int) -> float:
    n = max(1, calls // batch)
    t0 = time.perf_counter_ns()
    for _ in repeat(None, n):
        f(batch)
    return (time.perf_counter_ns() - t0) / (n * batch)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=20000, help="calls per contender and round")
    a = ap.parse_args()

    sf = idmint.Snowflake(1, WIDE)
    pysf = PySnowflake(1, 6, 16)
    sf_tw = idmint.Snowflake(2)
    pysf_tw = PySnowflake(2)
    contenders: Dict[str, Callable[[], float]] = {
        "idmint.uuid7()": lambda: per_call(idmint.uuid7, a.calls),
        "idmint.uuid4()": lambda: per_call(idmint.uuid4, a.calls),
        "idmint.uuid7_n(1000), per ID": lambda: per_id_bulk(idmint.uuid7_n, a.calls, 1000),
        "idmint.ulid()": lambda: per_call(idmint.ulid, a.calls),
        "idmint.Snowflake.next()": lambda: per_call(sf.next, a.calls),
        "idmint.Snowflake.next(), twitter": lambda: per_call(sf_tw.next, a.calls),
        "uuid.uuid4()": lambda: per_call(uuid.uuid4, a.calls),
        "uuid.uuid1()": lambda: per_call(uuid.uuid1, a.calls),
        "pure-Python snowflake": lambda: per_call(pysf.next, a.calls),
        "pure-Python snowflake, twitter": lambda: per_call(pysf_tw.next, a.calls),
    }
    rows: List[Tuple[str, List[str]]] = [
        ("idmint.uuid7()", ["uuid.uuid4()", "uuid.uuid1()"]),
        ("idmint.uuid4()", ["uuid.uuid4()", "uuid.uuid1()"]),
        ("idmint.uuid7_n(1000), per ID", ["uuid.uuid4()", "uuid.uuid1()"]),
        ("idmint.ulid()", ["pure-Python snowflake"]),
        ("idmint.Snowflake.next()", ["pure-Python snowflake"]),
        ("idmint.Snowflake.next(), twitter", ["pure-Python snowflake, twitter"]),
    ]

    for f in contenders.values():  # warm-up
        f()
    samples: Dict[str, List[float]] = {k: [] for k in contenders}
    for _ in range(a.rounds):
        for name, f in contenders.items():
            samples[name].append(f())
    med = {k: statistics.median(v) for k, v in samples.items()}
    sf.close()
    sf_tw.close()

    print("Python %s, idmint %s: %d interleaved rounds of %d calls, median ns per ID\n"
          % (sys.version.split()[0], idmint.__version__, a.rounds, a.calls))
    print("| call | ns/ID | fastest peer | peer ns/ID | ratio (peer / idmint) | goal >= 3x |")
    print("|---|---:|---|---:|---:|---|")
    for name, peers in rows:
        peer = min(peers, key=lambda p: med[p])
        ratio = med[peer] / med[name]
        print("| `%s` | %.0f | `%s` | %.0f | %.1fx | %s |"
              % (name, med[name], peer, med[peer], ratio, "met" if ratio >= 3 else "**missed**"))
    print("\nPeers alone: " + ", ".join("`%s` %.0f ns" % (p, med[p])
                                        for p in ("uuid.uuid4()", "uuid.uuid1()",
                                                  "pure-Python snowflake",
                                                  "pure-Python snowflake, twitter")))
    print("Snowflake rows without 'twitter': layout %s for both." % WIDE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
