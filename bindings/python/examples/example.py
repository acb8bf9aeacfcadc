"""A tour of the idmint binding; also the file `mypy --strict` checks
(tests/bindings/test_python.sh), so it uses every typed entry point."""

import os
import tempfile
import uuid
from typing import Any, Dict, List

import idmint


def time_ordered() -> None:
    u: uuid.UUID = idmint.uuid7()
    batch: List[uuid.UUID] = idmint.uuid7_n(3)
    assert u < batch[0] < batch[1] < batch[2]
    print("uuid7      ", u)
    print("uuid4      ", idmint.uuid4())
    print("ulid       ", idmint.ulid())
    print("ksuid      ", idmint.ksuid())
    print("typeid     ", idmint.typeid("user"))


def random_ids() -> None:
    print("token      ", idmint.token("sk"))
    print("traceparent", idmint.traceparent())


def snowflakes() -> None:
    with idmint.Snowflake(7, "discord") as sf:
        first: int = sf.next()
        more: List[int] = sf.next_n(2)
        print("snowflake  ", first, more, "node", sf.node, "layout", sf.layout)
    # Crash-safe: a restart, even with the clock set back, never repeats.
    with tempfile.TemporaryDirectory() as d:
        with idmint.Snowflake(7, mark=os.path.join(d, "ids.mark")) as sf:
            print("marked     ", sf.next(), "high water", sf.high_water_ms)


def decoding() -> None:
    info: Dict[str, Any] = idmint.inspect("01ARZ3NDEKTSV4RRFFQ69G5FAV")
    print("inspect    ", info["kind"], info["time"], info["uuid"])
    print("snowflake  ", idmint.inspect("175928847299117063", "discord")["node"])
    print("convert    ", idmint.convert("01ARZ3NDEKTSV4RRFFQ69G5FAV", "typeid", prefix="user"))


def errors() -> None:
    try:
        idmint.inspect("01ARZ3NDEKTSV4RRFFQ69G5FAU")
    except idmint.ParseError as e:
        offset: int = e.offset
        print("error      ", e, "(offset %d)" % offset)
    try:
        idmint.Snowflake(7).next()
    except idmint.ClockError as e:
        rewind: int = e.rewind_ms
        print("clock back by", rewind, "ms")


if __name__ == "__main__":
    time_ordered()
    random_ids()
    snowflakes()
    decoding()
    errors()
