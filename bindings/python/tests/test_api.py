"""The module's surface: real uuid.UUID objects that behave as the
standard library's, signatures and docstrings for help()."""

import copy
import inspect as pyinspect
import pickle
import uuid

import idmint
from conftest import REGISTRY


def test_uuids_behave_as_the_standard_librarys():
    for u in (idmint.uuid7(), idmint.uuid4(), idmint.uuid7_n(1)[0]):
        same = uuid.UUID(str(u))
        assert type(u) is uuid.UUID
        assert u == same and hash(u) == hash(same) and u.bytes == same.bytes
        assert u.is_safe is uuid.SafeUUID.unknown
        assert pickle.loads(pickle.dumps(u)) == u
        assert copy.deepcopy(u) == u
        assert {u: 1}[same] == 1
        assert repr(u) == "UUID('%s')" % same


def test_signatures_and_docstrings():
    assert str(pyinspect.signature(idmint.token)) == "(prefix=None)"
    assert str(pyinspect.signature(idmint.inspect)) == "(text, layout=None, *, kind=None)"
    assert str(pyinspect.signature(idmint.convert)) == "(text, to, prefix=None)"
    assert "max_rewind_ms=10" in str(pyinspect.signature(idmint.Snowflake))
    for f in (idmint.uuid7, idmint.uuid4, idmint.uuid7_n, idmint.ulid, idmint.ksuid,
              idmint.typeid, idmint.token, idmint.traceparent, idmint.inspect, idmint.convert,
              idmint.Snowflake, idmint.Snowflake.next, idmint.Snowflake.next_n):
        assert f.__doc__ and len(f.__doc__) > 40, f
    assert "ClockError" in (idmint.__doc__ or "")
    assert idmint.Error.__module__ == "idmint" and idmint.Snowflake.__module__ == "idmint"


def test_snowflake_repr_and_properties():
    sf = idmint.Snowflake(12, "instagram", registry=REGISTRY)
    assert repr(sf) == "idmint.Snowflake(12, layout='instagram')"
    assert sf.high_water_ms == 0
    sf.next()
    assert sf.high_water_ms > 0
    sf.close()
    assert repr(sf).endswith(", closed)")
