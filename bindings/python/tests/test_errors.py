"""Errors: ValueError (idmint.ParseError) with the library's reason, and
idmint.ClockError with how far the clock moved back."""

import pytest

import idmint
from conftest import REGISTRY, FAKETIME_LIB, run_python


def test_hierarchy():
    assert issubclass(idmint.ParseError, ValueError)
    assert issubclass(idmint.ParseError, idmint.Error)
    assert issubclass(idmint.ClockError, idmint.Error)
    assert issubclass(idmint.Error, Exception)


def test_bad_ulid_names_character_and_position():
    with pytest.raises(ValueError) as e:
        idmint.inspect("01ARZ3NDEKTSV4RRFFQ69G5FAU")
    assert "'U' at position 26" in str(e.value)
    assert e.value.offset == 25


def test_bad_typeid_prefix_names_the_reason():
    with pytest.raises(ValueError, match=r"TypeID prefix must be lowercase \('U' at position 1\)"):
        idmint.typeid("User")
    with pytest.raises(ValueError, match="prefix"):
        idmint.typeid("a" * 64)
    with pytest.raises(ValueError, match="prefix"):
        idmint.token("_x")


def test_convert_arguments():
    u = str(idmint.uuid7())
    with pytest.raises(ValueError, match="expected uuid, ulid or typeid"):
        idmint.convert(u, "ksuid")
    with pytest.raises(ValueError, match="prefix applies only"):
        idmint.convert(u, "ulid", "user")
    with pytest.raises(ValueError, match="160 bits"):
        idmint.convert(idmint.ksuid(), "uuid")
    with pytest.raises(ValueError):
        idmint.convert("not-an-id", "uuid")


def test_type_errors():
    with pytest.raises(TypeError):
        idmint.typeid(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        idmint.inspect(b"01ARZ3NDEKTSV4RRFFQ69G5FAV")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        idmint.Snowflake(1.5, registry=REGISTRY)  # type: ignore[arg-type]


def test_counts():
    with pytest.raises(ValueError, match="n must be"):
        idmint.uuid7_n(-1)
    with pytest.raises(TypeError):
        idmint.uuid7_n("3")  # type: ignore[arg-type]


def test_snowflake_arguments():
    with pytest.raises(ValueError, match=r"out of range for layout twitter \(0 to 1023\)"):
        idmint.Snowflake(1024, registry=REGISTRY)
    with pytest.raises(ValueError, match="0 to 63"):
        idmint.Snowflake(64, "safe53", registry=REGISTRY)
    with pytest.raises(ValueError):
        idmint.Snowflake(-1)
    with pytest.raises(ValueError, match="presets|preset"):
        idmint.Snowflake(1, "nope", registry=REGISTRY)
    with pytest.raises(ValueError):
        idmint.Snowflake(1, "time=41,node=10", registry=REGISTRY)
    with pytest.raises(ValueError, match="max_rewind_ms"):
        idmint.Snowflake(1, max_rewind_ms=-1, registry=REGISTRY)
    with pytest.raises(ValueError, match="auto"):
        idmint.Snowflake("any")


def test_closed_snowflake():
    sf = idmint.Snowflake(2, registry=REGISTRY)
    sf.close()
    sf.close()
    with pytest.raises(idmint.Error, match="closed"):
        sf.next()


def test_clock_error_carries_the_rewind(tmp_path):
    """A mark written now, then a generator on it with the clock 5 s behind:
    refused with ClockError and rewind_ms; with max_rewind_ms beyond it,
    the same waits and mints."""
    mark = str(tmp_path / "mark")
    with idmint.Snowflake(4, mark=mark, registry=REGISTRY) as sf:
        sf.next_n(1000)
    code = """
import idmint, sys
try:
    idmint.Snowflake(4, mark=sys.argv[1], registry=sys.argv[2]).next()
except idmint.ClockError as e:
    print("ClockError", e.rewind_ms, e.code, isinstance(e, idmint.Error), e)
"""
    p = run_python(code.replace("sys.argv[1]", repr(mark)).replace("sys.argv[2]", repr(REGISTRY)),
                   {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": "-5s",
                    "FAKETIME_DONT_FAKE_MONOTONIC": "1"})
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    words = out.split()
    assert words[0] == "ClockError", out + err
    assert 0 < int(words[1]) and words[2] == "6" and words[3] == "True"
    assert "clock moved back" in out
