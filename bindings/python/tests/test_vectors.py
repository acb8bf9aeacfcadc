"""Known vectors: the library's golden files decoded through the binding
(inspect, convert), the CLI's inspect --json members, and round trips of
minted IDs."""

import uuid

import pytest

import idmint
from conftest import REGISTRY, records


# ---- inspect: recognition and decoding (tests/vectors/inspect.txt) ----------

def _detail(d: dict) -> str:
    kind = d["kind"]
    if kind in ("uuid", "ulid", "typeid"):
        return d["uuid"]
    if kind == "ksuid":
        return _ksuid_raw(d)
    return "%d/%d" % (d["node"], d["sequence"])


def _ksuid_raw(d: dict) -> str:
    seconds = d["unix_ms"] // 1000 - 1400000000
    return "%08x%s" % (seconds, d["payload"])


def _ms(field: str):
    return None if field == "-" else int(field)


@pytest.mark.parametrize("rec", records("inspect.txt", "auto"), ids=lambda r: r[0])
def test_inspect_auto(rec):
    text, kind, unix_ms, detail = rec
    d = idmint.inspect(text)
    assert d["input"] == text
    assert d["kind"] == kind
    assert d["unix_ms"] == _ms(unix_ms)
    assert _detail(d) == detail


@pytest.mark.parametrize("rec", records("inspect.txt", "as"), ids=lambda r: r[0] + ":" + r[1])
def test_inspect_forced_kind(rec):
    kind, text, unix_ms, detail = rec
    d = idmint.inspect(text, kind=kind)
    assert d["kind"] == kind
    assert d["unix_ms"] == _ms(unix_ms)
    assert _detail(d) == detail


@pytest.mark.parametrize("rec", records("inspect.txt", "layout"), ids=lambda r: r[0])
def test_inspect_layout(rec):
    layout, text, unix_ms, detail = rec
    d = idmint.inspect(text, layout)
    assert d["layout"] == layout
    assert d["unix_ms"] == int(unix_ms)
    assert _detail(d) == detail


@pytest.mark.parametrize("rec", records("inspect.txt", "error"), ids=lambda r: repr(r[0]))
def test_inspect_error(rec):
    text, offset = rec
    with pytest.raises(ValueError) as e:
        idmint.inspect(text)
    assert isinstance(e.value, idmint.ParseError)
    assert str(e.value)  # the library's reason
    if offset != "-":
        assert e.value.offset == int(offset)


@pytest.mark.parametrize("rec", records("inspect.txt", "error-as"), ids=lambda r: r[0] + ":" + r[1])
def test_inspect_forced_kind_error(rec):
    kind, text, offset = rec
    with pytest.raises(ValueError) as e:
        idmint.inspect(text, kind=kind)
    if offset != "-":
        assert e.value.offset == int(offset)


# The members and values of `idmint inspect --json` (tests/cli/test_inspect.sh).
CLI_JSON = {
    "017F22E2-79B0-7CC3-98C4-DC0C0C07398F": {
        "input": "017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "kind": "uuid",
        "unix_ms": 1645557742000, "time": "2022-02-22T19:22:22.000Z",
        "uuid": "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "version": 7, "variant": "rfc9562"},
    "C232AB00-9414-11EC-B3C8-9F6BDECED846": {
        "input": "C232AB00-9414-11EC-B3C8-9F6BDECED846", "kind": "uuid",
        "unix_ms": 1645557742000, "time": "2022-02-22T19:22:22.000Z",
        "uuid": "c232ab00-9414-11ec-b3c8-9f6bdeced846", "version": 1, "variant": "rfc9562",
        "clock_seq": 13256, "node": "9f6bdeced846"},
    "919108f7-52d1-4320-9bac-f847db4148a8": {
        "input": "919108f7-52d1-4320-9bac-f847db4148a8", "kind": "uuid", "unix_ms": None,
        "time": None, "uuid": "919108f7-52d1-4320-9bac-f847db4148a8", "version": 4,
        "variant": "rfc9562"},
    "01ARZ3NDEKTSV4RRFFQ69G5FAV": {
        "input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", "unix_ms": 1469922850259,
        "time": "2016-07-30T23:54:10.259Z", "uuid": "01563e3a-b5d3-d676-4c61-efb99302bd5b",
        "ulid": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "random": "d6764c61efb99302bd5b"},
    "0ujtsYcgvSTl8PAuAdqWYSMnLOv": {
        "input": "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "kind": "ksuid", "unix_ms": 1507608047000,
        "time": "2017-10-10T04:00:47.000Z", "ksuid": "0ujtsYcgvSTl8PAuAdqWYSMnLOv",
        "payload": "b5a1cd34b5f99d1154fb6853345c9735"},
    "prefix_01h455vb4pex5vsknk084sn02q": {
        "input": "prefix_01h455vb4pex5vsknk084sn02q", "kind": "typeid",
        "unix_ms": 1688096058518, "time": "2023-06-30T03:34:18.518Z",
        "uuid": "01890a5d-ac96-774b-bcce-b302099a8057",
        "typeid": "prefix_01h455vb4pex5vsknk084sn02q", "prefix": "prefix"},
    "1541815603606036480": {
        "input": "1541815603606036480", "kind": "snowflake", "unix_ms": 1656432460105,
        "time": "2022-06-28T16:07:40.105Z", "id": "1541815603606036480", "layout": "twitter",
        "node": 378, "sequence": 0},
}


@pytest.mark.parametrize("text", sorted(CLI_JSON))
def test_inspect_members_are_the_clis(text):
    d = idmint.inspect(text)
    assert d == CLI_JSON[text]
    assert list(d) == list(CLI_JSON[text])  # the same order, too


def test_inspect_snowflake_id_is_a_string_beyond_2_53():
    d = idmint.inspect("9223372036854775807", "time=61,node=1,seq=1")
    assert d["id"] == "9223372036854775807"
    assert d["layout"] == "time=61,node=1,seq=1,unit=1ms,epoch=0"
    assert (d["node"], d["sequence"]) == (1, 1)


# ---- per-format golden files -------------------------------------------------

@pytest.mark.parametrize("rec", records("ulid.txt", "ok"), ids=lambda r: r[0])
def test_ulid_vectors(rec):
    text, canonical, unix_ms, time, uuid_text = rec
    d = idmint.inspect(text, kind="ulid")
    assert (d["ulid"], d["unix_ms"], d["time"], d["uuid"]) == (canonical, int(unix_ms), time,
                                                                uuid_text)
    assert idmint.convert(text, "uuid") == uuid_text
    assert idmint.convert(uuid_text, "ulid") == canonical


@pytest.mark.parametrize("rec", records("ulid.txt", "bad"), ids=lambda r: repr(r[0]))
def test_ulid_bad_vectors(rec):
    text, offset = rec
    with pytest.raises(ValueError) as e:
        idmint.inspect(text, kind="ulid")
    assert e.value.offset == int(offset)


@pytest.mark.parametrize("rec", records("ksuid.txt", "ok"), ids=lambda r: r[0])
def test_ksuid_vectors(rec):
    text, raw, _seconds, unix_ms, time = rec
    d = idmint.inspect(text, kind="ksuid")
    assert (d["ksuid"], d["unix_ms"], d["time"]) == (text, int(unix_ms), time)
    assert _ksuid_raw(d) == raw.lower()


@pytest.mark.parametrize("rec", records("typeid_valid.txt", "ok"), ids=lambda r: r[0])
def test_typeid_vectors(rec):
    _name, text, prefix, uuid_text = rec
    d = idmint.inspect(text, kind="typeid")
    assert (d["prefix"], d["uuid"], d["typeid"]) == (prefix, uuid_text, text)
    assert idmint.convert(uuid_text, "typeid", prefix or None) == text
    assert idmint.convert(text, "uuid") == uuid_text


@pytest.mark.parametrize("rec", records("typeid_invalid.txt", "bad"), ids=lambda r: r[0])
def test_typeid_invalid_vectors(rec):
    _name, text, offset = rec
    with pytest.raises(ValueError) as e:
        idmint.inspect(text, kind="typeid")
    assert e.value.offset == int(offset)


@pytest.mark.parametrize("rec", records("uuid_forms.txt", "ok"), ids=lambda r: r[0])
def test_uuid_forms(rec):
    text, canonical = rec
    assert idmint.convert(text, "uuid") == canonical
    assert idmint.inspect(text)["uuid"] == canonical


@pytest.mark.parametrize("rec", records("inspect.txt", "p128"), ids=lambda r: r[0])
def test_convert_128(rec):
    text, _kind, uuid_text = rec
    assert idmint.convert(text, "uuid") == uuid_text


@pytest.mark.parametrize("rec", records("inspect.txt", "p128-unsupported"), ids=lambda r: r[0])
def test_convert_refuses_other_sizes(rec):
    text, kind = rec
    with pytest.raises(ValueError, match="128-bit"):
        idmint.convert(text, "uuid")


# ---- round trips of minted IDs ---------------------------------------------------

def test_uuid7_round_trip():
    u = idmint.uuid7()
    assert isinstance(u, uuid.UUID)
    assert u.version == 7 and u.variant == uuid.RFC_4122
    assert u == uuid.UUID(str(u)) and hash(u) == hash(uuid.UUID(str(u)))
    d = idmint.inspect(str(u))
    assert d["kind"] == "uuid" and d["version"] == 7 and d["uuid"] == str(u)
    ulid = idmint.convert(str(u), "ulid")
    assert idmint.convert(ulid, "uuid") == str(u)
    tid = idmint.convert(str(u), "typeid", "user")
    assert tid.startswith("user_") and idmint.convert(tid, "uuid") == str(u)
    assert idmint.inspect(ulid)["unix_ms"] == d["unix_ms"]


def test_uuid4_is_version_4():
    u = idmint.uuid4()
    assert isinstance(u, uuid.UUID) and u.version == 4 and u.variant == uuid.RFC_4122
    assert idmint.inspect(str(u))["unix_ms"] is None


def test_text_formats_round_trip():
    ulid = idmint.ulid()
    assert len(ulid) == 26 and ulid == ulid.upper()
    assert idmint.inspect(ulid)["ulid"] == ulid
    k = idmint.ksuid()
    assert len(k) == 27 and idmint.inspect(k)["ksuid"] == k
    t = idmint.typeid("user")
    d = idmint.inspect(t)
    assert d["kind"] == "typeid" and d["prefix"] == "user" and d["typeid"] == t
    assert uuid.UUID(d["uuid"]).version == 7
    bare = idmint.typeid("")
    assert len(bare) == 26 and "_" not in bare
    assert idmint.inspect(bare, kind="typeid")["prefix"] == ""


def test_token_and_traceparent_shapes():
    t = idmint.token()
    assert len(t) == 22 and t.isalnum()
    p = idmint.token("sk")
    assert p.startswith("sk_") and len(p) == 25
    assert idmint.token(prefix="api_key").startswith("api_key_")
    tp = idmint.traceparent()
    parts = tp.split("-")
    assert [len(x) for x in parts] == [2, 32, 16, 2] and parts[0] == "00" and parts[3] == "01"
    assert int(parts[1], 16) != 0 and int(parts[2], 16) != 0


def test_snowflake_round_trip():
    with idmint.Snowflake(5, "discord", registry=REGISTRY) as sf:
        assert sf.layout == "discord" and sf.node == 5
        i = sf.next()
        d = idmint.inspect(str(i), "discord")
        assert d["node"] == 5 and d["layout"] == "discord" and d["id"] == str(i)
    spec = "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000"
    with idmint.Snowflake(1023, spec, registry=REGISTRY) as sf:
        assert sf.layout == spec
        d = idmint.inspect(str(sf.next()), spec)
        assert d["node"] == 1023
