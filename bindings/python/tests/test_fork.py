"""fork(): the child and the parent never mint the same ID, and a
Snowflake inherited by the child refuses to mint (they would share its
node) without disturbing the parent's."""

import os

import idmint
from conftest import REGISTRY

N = 50_000


def _mint_all():
    out = []
    for _ in range(N):
        out.append(str(idmint.uuid7()))
        out.append(idmint.ulid())
        out.append(idmint.ksuid())
        out.append(str(idmint.uuid4()))
        out.append(idmint.token())
    return out


def _fork_and_collect(child_work):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: write its IDs, then leave without cleanup
        try:
            os.close(r)
            data = "\n".join(child_work()).encode()
            with os.fdopen(w, "wb") as f:
                f.write(data)
            os._exit(0)
        except BaseException:
            os._exit(1)
    os.close(w)
    return pid, r


def test_parent_and_child_never_share_an_id():
    # Warm the shared generator up first: the child inherits its state.
    before = _mint_all()
    pid, r = _fork_and_collect(_mint_all)
    parent = _mint_all()
    with os.fdopen(r, "rb") as f:
        child = f.read().decode().split("\n")
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert len(child) == 5 * N
    both = set(parent) & set(child)
    assert not both, "shared IDs: %r" % sorted(both)[:5]
    assert not (set(before) & set(child))
    # Each process's own time-ordered IDs still increase.
    assert child[0::5] == sorted(child[0::5]) and len(set(child[0::5])) == N


def test_inherited_snowflake_refuses_in_the_child():
    sf = idmint.Snowflake(11, registry=REGISTRY)
    first = sf.next()

    def child():
        try:
            sf.next()
        except idmint.Error as e:
            return ["refused", str(e)]
        return ["minted"]

    pid, r = _fork_and_collect(child)
    with os.fdopen(r, "rb") as f:
        got = f.read().decode().split("\n")
    os.waitpid(pid, 0)
    assert got[0] == "refused" and "fork" in got[1]
    assert sf.next() > first  # the parent goes on
    sf.close()


def test_fork_while_other_threads_mint():
    # Threads mint in bulk with the GIL released while the main thread
    # forks: whatever state the library's generator was in at that instant,
    # each child mints at once (a lock held by a thread that does not exist
    # in the child would hang here) and never one of the parent's IDs.
    import threading

    stop = threading.Event()
    seen = []

    def mint():
        while not stop.is_set():
            seen.append({u.int for u in idmint.uuid7_n(2000)})

    ts = [threading.Thread(target=mint) for _ in range(3)]
    for t in ts:
        t.start()
    children = []
    try:
        for _ in range(20):
            children.append(_fork_and_collect(
                lambda: [str(u.int) for u in idmint.uuid7_n(500)] + [idmint.ulid()]))
    finally:
        stop.set()
        for t in ts:
            t.join()
    parent = set().union(*seen)
    for pid, r in children:
        with os.fdopen(r, "rb") as f:
            got = f.read().decode().split("\n")
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert len(got) == 501
        assert not ({int(x) for x in got[:-1]} & parent)
