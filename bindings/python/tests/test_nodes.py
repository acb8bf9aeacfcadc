"""Snowflake(node='auto'): nodes leased from a host registry, as idmintd
and `idmint gen --node auto` lease them (a private registry directory
here, not the host's /run/idmint/nodes)."""

import os
import signal

import idmint
from conftest import run_python


def test_two_generators_get_different_nodes(registry):
    with idmint.Snowflake("auto", registry=registry) as a, \
            idmint.Snowflake("auto", registry=registry) as b:
        assert a.node != b.node
        ids = set(a.next_n(10000)) | set(b.next_n(10000))
        assert len(ids) == 20000
        assert {idmint.inspect(str(a.next()))["node"], idmint.inspect(str(b.next()))["node"]} \
            == {a.node, b.node}


def test_layouts_are_separate_namespaces(registry):
    with idmint.Snowflake("auto", registry=registry) as a, \
            idmint.Snowflake("auto", "discord", registry=registry) as b:
        assert a.node == b.node == 0
        assert b.layout == "discord"


def test_a_freed_node_is_taken_again_above_its_last_id(registry):
    a = idmint.Snowflake("auto", "safe53", registry=registry)
    node = a.node
    last = a.next_n(5000)[-1]
    a.close()
    with idmint.Snowflake("auto", "safe53", registry=registry) as b:
        assert b.node == node
        assert b.next() > last


def test_a_killed_holder_frees_its_node_and_the_next_resumes_above(registry):
    code = ("import idmint, sys\n"
            "sf = idmint.Snowflake('auto', registry=%r)\n"
            "print(sf.node, sf.next_n(1000)[-1], flush=True)\n"
            "sys.stdin.read()\n" % registry)
    p = run_python(code, stdin=__import__("subprocess").PIPE)
    assert p.stdout is not None
    node, last = map(int, p.stdout.readline().split())
    with idmint.Snowflake("auto", registry=registry) as other:
        assert other.node != node  # held by the running child
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    with idmint.Snowflake("auto", registry=registry) as again:
        assert again.node == node
        assert again.next() > last


def test_a_given_node_is_registered_and_refused_while_held(registry):
    """Snowflake(N) takes exactly slot N of the registry, as idmintd's
    --node N does: a second holder, in this process or another, is refused
    with the holder's description, and the node is free again once the
    first is closed (then the IDs go on above the first's)."""
    with idmint.Snowflake(3, registry=registry) as a:
        first = a.next()
        try:
            idmint.Snowflake(3, registry=registry)
        except idmint.Error as e:
            assert "node 3 is held" in str(e) and "pid=%d" % os.getpid() in str(e), str(e)
        else:
            raise AssertionError("node 3 was handed out twice")
        p = run_python("import idmint\ntry:\n"
                       "    idmint.Snowflake(3, registry=%r)\n"
                       "except idmint.Error as e:\n"
                       "    print('refused', e)\n"
                       "else:\n"
                       "    print('minted')\n" % registry)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert out.startswith("refused") and "repeat IDs" in out, out
        with idmint.Snowflake(3, "discord", registry=registry) as other:
            assert other.node == 3  # another layout: another namespace
    with idmint.Snowflake(3, registry=registry) as b:
        assert b.node == 3 and b.next() > first


def test_full_registry_is_refused(registry):
    # baidu has 22 node bits; a spec with one leaves two nodes.
    spec = "time=41,node=1,seq=12"
    with idmint.Snowflake("auto", spec, registry=registry), \
            idmint.Snowflake("auto", spec, registry=registry):
        try:
            idmint.Snowflake("auto", spec, registry=registry)
        except idmint.Error as e:
            assert "no free snowflake node" in str(e)
        else:
            raise AssertionError("a third node of two was handed out")


def test_a_leased_node_keeps_minting_past_the_slots_reserve(registry):
    # Four IDs per ms: 16,000 take four seconds, past the second recorded
    # ahead in the slot at a time, so the slot's mark must be raised as
    # minting goes on (at least four times within this one call).
    with idmint.Snowflake("auto", "time=41,node=10,seq=2", registry=registry) as sf:
        ids = sf.next_n(16000)
        assert all(a < b for a, b in zip(ids, ids[1:]))
        assert len(ids) == 16000
