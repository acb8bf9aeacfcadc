"""The durable mark (Snowflake(mark=PATH)): processes killed with SIGKILL
at varying moments, then one started with the clock set back 5 s
(libfaketime), never repeat an ID: each run starts above everything the
runs before it printed."""

import os
import random
import signal

import idmint
from conftest import REGISTRY, FAKETIME_LIB, run_python

FAKE_BACK = {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": "-5s", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}

MINTER = """
import sys, idmint
sf = idmint.Snowflake(7, mark={mark!r}, max_rewind_ms={rewind}, registry={reg!r})
out = sys.stdout
while True:
    out.write("\\n".join(map(str, sf.next_n(50))) + "\\n")
    out.flush()
"""


def killed_run(mark, lines, rewind=10, env=None):
    """Starts a minter on mark, reads until it has printed `lines` IDs,
    kills it with SIGKILL, and returns every whole line it printed."""
    p = run_python(MINTER.format(mark=mark, rewind=rewind, reg=REGISTRY), env)
    ids = []
    assert p.stdout is not None
    while len(ids) < lines:
        line = p.stdout.readline()
        assert line.endswith("\n"), "the minter stopped: " + (p.stderr.read() if p.stderr else "")
        ids.append(int(line))
    os.kill(p.pid, signal.SIGKILL)
    rest = p.stdout.read()
    p.wait()
    ids += [int(x) for x in rest.split("\n")[:-1]]  # the last piece may be cut short
    assert p.returncode == -signal.SIGKILL
    return ids


def test_killed_runs_then_clock_back_never_repeat(tmp_path):
    mark = str(tmp_path / "sf.mark")
    last = 0
    for _ in range(4):
        ids = killed_run(mark, random.randint(1, 20000))
        assert all(a < b for a, b in zip(ids, ids[1:]))
        assert ids[0] > last, "a run restarted below the one before it"
        last = ids[-1]

    # Without the mark (and on a registry of its own: the runs' slot records
    # a mark of its own, which a node registered anew would resume above),
    # the clock 5 s behind mints below the last ID (so the check below can
    # fail).
    fresh = str(tmp_path / "fresh-nodes")
    p = run_python("import idmint; print(idmint.Snowflake(7, registry=%r).next())" % fresh,
                   FAKE_BACK)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert int(out) < last

    # With the mark and the clock 5 s behind: refused by default, with how
    # far the clock moved back...
    p = run_python("import idmint\ntry:\n"
                   "    idmint.Snowflake(7, mark=%r, registry=%r).next()\n"
                   "except idmint.ClockError as e:\n"
                   "    print('ClockError', e.rewind_ms)\n"
                   "else:\n"
                   "    print('minted')\n" % (mark, fresh), FAKE_BACK)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    words = out.split()
    assert words[0] == "ClockError", "minted with the clock 5 s behind the mark"
    assert int(words[1]) > 0
    # ...and with max_rewind_ms beyond 5 s it waits, then mints above all.
    ids = killed_run(mark, 1000, rewind=7000, env=FAKE_BACK)
    assert ids[0] > last
    assert all(a < b for a, b in zip(ids, ids[1:]))
    last = ids[-1]

    # Back on the real clock, the next run goes on above.
    ids = killed_run(mark, 100)
    assert ids[0] > last


def test_close_lowers_the_mark_and_a_second_opener_is_refused(tmp_path):
    mark = str(tmp_path / "m")
    a = idmint.Snowflake(1, mark=mark, registry=REGISTRY)
    first = a.next()
    try:
        idmint.Snowflake(2, mark=mark, registry=REGISTRY)
    except idmint.Error as e:
        assert "in use" in str(e)
    else:
        raise AssertionError("a second opener of the mark file was not refused")
    a.close()
    with idmint.Snowflake(1, mark=mark, registry=REGISTRY) as b:
        assert b.next() > first
    assert os.stat(mark).st_mode & 0o777 == 0o600


def test_minting_goes_on_past_each_reserve(tmp_path, registry):
    # Four IDs per ms: 8,000 take two seconds, past the mark's reserve (one
    # second), so the mark is written again while the call mints; with a
    # leased node too, the slot's mark bounds the ceiling as well.
    spec = "time=41,node=10,seq=2"
    with idmint.Snowflake(3, spec, mark=str(tmp_path / "a"), registry=REGISTRY) as sf:
        ids = sf.next_n(8000)
        assert all(a < b for a, b in zip(ids, ids[1:])) and len(ids) == 8000
    with idmint.Snowflake("auto", spec, mark=str(tmp_path / "b"), registry=registry) as sf:
        ids = [sf.next() for _ in range(4000)] + sf.next_n(4000)
        assert all(a < b for a, b in zip(ids, ids[1:])) and len(ids) == 8000
