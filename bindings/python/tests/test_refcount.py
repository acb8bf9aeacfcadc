"""Reference counts: ten million calls over every entry point (error
paths included) leave the resident set size where it was. A leak of one
small object per call of any of them (at least 16 bytes over 400,000
calls or more) would grow it by several MiB."""

import gc

import idmint
from conftest import REGISTRY, rss_kib

BOUND_KIB = 2048


def _bad_inspect():
    try:
        idmint.inspect("01ARZ3NDEKTSV4RRFFQ69G5FAU")
    except ValueError:
        pass


def _bad_typeid():
    try:
        idmint.typeid("User")
    except ValueError:
        pass


def test_ten_million_calls_do_not_grow_the_rss():
    sf = idmint.Snowflake(1, "safe53", registry=REGISTRY)  # 64 IDs per ms: the waits release the GIL
    sf_fast = idmint.Snowflake(2, registry=REGISTRY)
    u = str(idmint.uuid7())
    k = idmint.ksuid()
    cheap = [idmint.uuid7, idmint.uuid4, idmint.ulid, idmint.ksuid, idmint.traceparent,
             lambda: idmint.typeid("user"), lambda: idmint.token("sk"), idmint.token,
             sf_fast.next]
    dear = [lambda: idmint.inspect(u), lambda: idmint.inspect(k),
            lambda: idmint.convert(u, "typeid", "user"), _bad_inspect, _bad_typeid,
            lambda: idmint.uuid7_n(10), lambda: sf_fast.next_n(10)]
    plan = ([(f, 920_000) for f in cheap] + [(f, 250_000) for f in dear]
            + [(sf.next, 50_000)])
    assert sum(n for _, n in plan) >= 10_000_000

    def run(fraction):
        for f, n in plan:
            for _ in range(n // fraction):
                f()

    run(10)  # warm up: caches, free lists, arenas
    gc.collect()
    before = rss_kib()
    run(1)
    gc.collect()
    grown = rss_kib() - before
    assert grown < BOUND_KIB, "RSS grew by %d KiB over ten million calls" % grown
    sf.close()
    sf_fast.close()
