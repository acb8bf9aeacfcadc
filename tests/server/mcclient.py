"""mcclient.py - memcached clients for tests/server/test_memcache.sh.

  python3 mcclient.py pymemcache ADDR        pymemcache (Debian's python3-pymemcache)
  python3 mcclient.py binary ADDR            the binary protocol, by hand
  python3 mcclient.py many ADDR N            N gets of 100 keys over one connection
  python3 mcclient.py tls ADDR CA            a text get over TLS

ADDR is HOST:PORT or a Unix socket's path. Each prints one line per
fact, "name: value", for the test to compare; a fault raises (exit 1).
"""
import socket
import ssl
import struct
import sys


def connect(addr):
    if addr.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
        return s
    host, port = addr.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def server_of(addr):
    if addr.startswith("/"):
        return addr
    host, port = addr.rsplit(":", 1)
    return (host, int(port))


def with_pymemcache(addr):
    from pymemcache.client.base import Client

    c = Client(server_of(addr), connect_timeout=5, timeout=10)
    one = c.get("orders")
    print("get: %s" % one.decode())
    many = c.get_many(["a", "b", "uuidv7", "typeid:user", "ulid", "ksuid"])
    print("get_many keys: %s" % " ".join(sorted(many)))
    for k in ["a", "b", "uuidv7", "typeid:user", "ulid", "ksuid"]:
        print("get_many %s: %s" % (k, many[k].decode()))
    value, cas = c.gets("x")
    print("gets: %s cas=%s" % (value.decode(), cas.decode()))
    print("version: %s" % c.version().decode())
    stats = c.stats()
    print("stats keys: %s" % " ".join(sorted(k.decode() for k in stats)))
    print("stats cmd_get: %s" % stats[b"cmd_get"])
    print("stats get_hits: %s" % stats[b"get_hits"])
    print("stats curr_connections: %s" % stats[b"curr_connections"])
    try:
        c.get("uuidv7:x")
        print("prefix refusal: none")
    except Exception as e:  # pymemcache raises MemcacheClientError
        print("prefix refusal: %s: %s" % (type(e).__name__, e))
    c.close()


def bin_request(op, key=b"", opaque=0, extras=b""):
    body = extras + key
    return struct.pack(">BBHBBHIIQ", 0x80, op, len(key), len(extras), 0, 0, len(body), opaque, 0) + body


def bin_response(s):
    head = recv_exact(s, 24)
    magic, op, klen, elen, _dt, status, blen, opaque, cas = struct.unpack(">BBHBBHIIQ", head)
    body = recv_exact(s, blen)
    return {
        "magic": magic,
        "op": op,
        "status": status,
        "opaque": opaque,
        "cas": cas,
        "extras": body[:elen],
        "key": body[elen : elen + klen],
        "value": body[elen + klen :],
    }


def recv_exact(s, n):
    d = b""
    while len(d) < n:
        x = s.recv(n - len(d))
        if not x:
            raise EOFError("the server closed after %d of %d bytes" % (len(d), n))
        d += x
    return d


def show(name, r):
    print(
        "%s: magic=0x%02x op=0x%02x status=0x%04x opaque=%d cas=%d extras=%s key=%s value=%s"
        % (name, r["magic"], r["op"], r["status"], r["opaque"], r["cas"], r["extras"].hex(),
           r["key"].decode(), r["value"].decode())
    )


def binary(addr):
    s = connect(addr)
    # Pipelined: GET, GETK, VERSION, NOOP, an unknown opcode (SET), then
    # GET of a format's key.
    s.sendall(
        bin_request(0x00, b"orders", 11)
        + bin_request(0x0C, b"orders", 12)
        + bin_request(0x0B, opaque=13)
        + bin_request(0x0A, opaque=14)
        + bin_request(0x01, b"k", 15, extras=b"\0" * 8)
        + bin_request(0x00, b"uuidv7", 16)
        + bin_request(0x00, b"uuidv7:x", 17)
    )
    for name in ["get", "getk", "version", "noop", "set", "get uuidv7", "get uuidv7:x"]:
        show(name, bin_response(s))
    s.sendall(bin_request(0x07, opaque=18))
    show("quit", bin_response(s))
    print("after quit: %s" % ("closed" if s.recv(1) == b"" else "open"))


def many(addr, n):
    s = connect(addr)
    f = s.makefile("rb")
    keys = " ".join("k%d" % i for i in range(100))
    ids = []
    for _ in range(n):
        s.sendall(b"get " + keys.encode() + b"\r\n")
        for i in range(100):
            head = f.readline().split()
            assert head[0] == b"VALUE" and head[1] == b"k%d" % i, head
            value = f.readline().rstrip(b"\r\n")
            assert len(value) == int(head[3]), (head, value)
            ids.append(int(value))
        end = f.readline()
        assert end == b"END\r\n", end
    print("ids: %d" % len(ids))
    print("distinct: %d" % len(set(ids)))
    print("increasing: %s" % all(a < b for a, b in zip(ids, ids[1:])))


def tls(addr, ca):
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = False
    s = ctx.wrap_socket(connect(addr))
    s.sendall(b"get a\r\nversion\r\n")
    f = s.makefile("rb")
    print(f.readline().decode().rstrip())
    print(f.readline().decode().rstrip())
    print(f.readline().decode().rstrip())
    print(f.readline().decode().rstrip())


def main():
    mode, addr = sys.argv[1], sys.argv[2]
    if mode == "pymemcache":
        with_pymemcache(addr)
    elif mode == "binary":
        binary(addr)
    elif mode == "many":
        many(addr, int(sys.argv[3]))
    elif mode == "tls":
        tls(addr, sys.argv[3])
    else:
        sys.exit("mcclient.py: unknown mode %s" % mode)


if __name__ == "__main__":
    main()
