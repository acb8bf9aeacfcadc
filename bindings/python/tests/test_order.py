"""Order and uniqueness: a million IDs strictly increasing per format, and
eight threads minting 100,000 each without a repeat, through the shared
module-level generator and a shared Snowflake."""

import threading

import idmint
from conftest import REGISTRY

MILLION = 1_000_000


def strictly_increasing(xs) -> bool:
    return all(a < b for a, b in zip(xs, xs[1:]))


def test_uuid7_million_strictly_increasing():
    ids = [idmint.uuid7().int for _ in range(MILLION)]
    assert strictly_increasing(ids)


def test_uuid7_n_continues_after_single_calls():
    first = idmint.uuid7()
    batch = idmint.uuid7_n(MILLION)
    last = idmint.uuid7()
    ints = [first.int] + [u.int for u in batch] + [last.int]
    assert len(batch) == MILLION
    assert strictly_increasing(ints)
    assert idmint.uuid7_n(0) == []


def test_ulid_million_strictly_increasing():
    ids = [idmint.ulid() for _ in range(MILLION)]
    assert strictly_increasing(ids)


def test_ksuid_million_strictly_increasing():
    ids = [idmint.ksuid() for _ in range(MILLION)]
    assert strictly_increasing(ids)


def test_typeid_strictly_increasing_per_prefix_and_with_uuid7():
    # TypeIDs carry UUIDv7 bits from the same state as uuid7().
    mixed = []
    for _ in range(100_000):
        mixed.append(idmint.uuid7().int)
        mixed.append(int(idmint.inspect(idmint.typeid("user"))["uuid"].replace("-", ""), 16))
    assert strictly_increasing(mixed)


def test_snowflake_million_strictly_increasing():
    with idmint.Snowflake(3, registry=REGISTRY) as sf:
        ids = [sf.next() for _ in range(MILLION // 2)] + sf.next_n(MILLION // 2)
    assert strictly_increasing(ids)


def _threads(n, work):
    results = [None] * n
    barrier = threading.Barrier(n)

    def run(i):
        barrier.wait()
        results[i] = work()

    ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return results


def test_eight_threads_uuid7_no_repeat():
    per = 100_000
    results = _threads(8, lambda: [idmint.uuid7().int for _ in range(per)])
    for r in results:
        assert strictly_increasing(r)
    assert len(set().union(*results)) == 8 * per


def test_eight_threads_bulk_uuid7_no_repeat():
    # uuid7_n releases the GIL: the threads really mint at the same time.
    per = 100_000
    results = _threads(8, lambda: [u.int for _ in range(100) for u in idmint.uuid7_n(per // 100)])
    for r in results:
        assert strictly_increasing(r)
    assert len(set().union(*results)) == 8 * per


def test_eight_threads_text_formats_no_repeat():
    per = 100_000 // 4
    results = _threads(8, lambda: [f() for _ in range(per)
                                   for f in (idmint.ulid, idmint.ksuid, idmint.token,
                                             idmint.traceparent)])
    assert len(set().union(*results)) == 8 * per * 4


def test_eight_threads_shared_snowflake_no_repeat():
    per = 100_000
    with idmint.Snowflake(9, registry=REGISTRY) as sf:
        results = _threads(8, lambda: [sf.next() for _ in range(per // 2)]
                           + sf.next_n(per // 2))
    for r in results:
        assert strictly_increasing(r)
    assert len(set().union(*results)) == 8 * per


def test_uuid4_no_repeat():
    ids = {idmint.uuid4().int for _ in range(200_000)}
    assert len(ids) == 200_000
