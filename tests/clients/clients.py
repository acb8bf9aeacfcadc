"""tests/clients/clients.py PORT [PASSWORD] - redis-py (Debian's python3-redis)
against idmintd's RESP port on 127.0.0.1:PORT with default options (only host
and port given, and password when PASSWORD is: idmintd's --auth-token-file
token), checking the replies' types.

Prints one "not ok - ..." line per failed check and nothing else, and exits
1 when any failed (tests/server/test_resp_clients.sh runs it).
"""
import re
import sys

import redis

failures = []


def check(what, ok, got=None):
    if not ok:
        failures.append("not ok - redis-py: %s%s" % (what, "" if got is None else " (got %r)" % (got,)))


SNOWFLAKE = re.compile(rb"^[1-9][0-9]{0,18}$")
UUID7 = re.compile(rb"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def main(port, password):
    r = redis.Redis(host="127.0.0.1", port=port, password=password, socket_timeout=10)
    check("ping() is True", r.ping() is True)
    three = r.execute_command("NEXT", "snowflake", "3")
    check(
        "NEXT snowflake 3 is a list of 3 increasing snowflakes",
        isinstance(three, list)
        and len(three) == 3
        and all(SNOWFLAKE.match(s) for s in three)
        and int(three[0]) < int(three[1]) < int(three[2]),
        three,
    )
    one = r.execute_command("NEXT", "uuidv7")
    check("NEXT uuidv7 is bytes", isinstance(one, bytes) and UUID7.match(one), one)
    arr1 = r.execute_command("NEXT", "uuidv7", "1")
    check("NEXT uuidv7 1 is a list of 1", isinstance(arr1, list) and len(arr1) == 1 and UUID7.match(arr1[0]), arr1)
    try:
        r.execute_command("NEXT", "uuidv9")
        check("NEXT uuidv9 raises ResponseError", False, "no error")
    except redis.exceptions.ResponseError as e:
        check("NEXT uuidv9 raises ResponseError naming the format", str(e).startswith("unknown format 'uuidv9'"), str(e))
    check("the connection stays usable after an error", r.ping() is True)
    cid = r.client_id()
    check("client_id() is an int", isinstance(cid, int) and cid > 0, cid)
    check("client_getname() is None before a name is set", r.client_getname() is None, r.client_getname())
    check("client_setname() is True", r.client_setname("idmint-test") is True)
    check("client_getname() after client_setname()", r.client_getname() in (b"idmint-test", "idmint-test"))
    info = r.client_info()
    check("client_info() parses, with the id", isinstance(info, dict) and int(info.get("id", 0)) == cid, info)
    check("info() parses, with ready 1", r.info().get("ready") == 1, r.info())
    n = r.command_count()
    check("command_count() is a positive int", isinstance(n, int) and n > 0, n)
    transaction(r)
    r.close()


def transaction(r):
    """pipeline() with its default transaction=True: MULTI, the commands,
    EXEC in one write; execute() gives each command's reply in order."""
    p = r.pipeline()
    p.execute_command("NEXT", "snowflake", "2")
    p.incr("orders")
    p.execute_command("NEXT", "uuidv7")
    p.incr("orders")
    p.incrby("orders", 3)
    p.ping()
    res = p.execute()
    ok = isinstance(res, list) and len(res) == 6
    check("pipeline().execute() gives 6 replies", ok, res)
    if not ok:
        return
    ids, a, u, b, c, pong = res
    check("... NEXT snowflake 2: a list of 2 increasing snowflakes",
          isinstance(ids, list) and len(ids) == 2 and all(SNOWFLAKE.match(s) for s in ids)
          and int(ids[0]) < int(ids[1]), ids)
    check("... INCR, INCR, INCRBY 3: ints, consecutive", all(isinstance(x, int) for x in (a, b, c))
          and b == a + 1 and c == b + 3, (a, b, c))
    check("... NEXT uuidv7: bytes", isinstance(u, bytes) and UUID7.match(u), u)
    check("... PING: True", pong is True, pong)
    # A command refused while queueing makes EXEC abort (EXECABORT); redis-py
    # then raises the refused command's error, as it does against Redis,
    # and nothing ran.
    p = r.pipeline()
    p.incr("orders")
    p.execute_command("NOSUCH")
    try:
        p.execute()
        check("a pipeline with an unknown command raises", False, "no error")
    except redis.exceptions.ResponseError as e:
        check("a pipeline with an unknown command raises its error", "Command # 2 (NOSUCH)" in str(e)
              and "unknown command 'NOSUCH'" in str(e), "%s: %s" % (type(e).__name__, e))
    check("... and its INCR did not run", r.incr("orders") == c + 1)
    # An error at run time is an element of the result (raise_on_error=False).
    p = r.pipeline()
    p.execute_command("NEXT", "uuidv9")
    p.ping()
    res = p.execute(raise_on_error=False)
    check("an error at run time is one element of the replies; the rest run",
          isinstance(res, list) and len(res) == 2 and isinstance(res[0], redis.exceptions.ResponseError)
          and res[1] is True, res)


try:
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
except Exception as e:  # noqa: BLE001 - any failure is reported
    failures.append("not ok - redis-py: %s: %s" % (type(e).__name__, e))
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
