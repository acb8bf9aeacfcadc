"""idmint: distributed ID generation on libidmint (a C library).

Time-ordered IDs, strictly increasing per process across threads:

    >>> import idmint
    >>> u = idmint.uuid7()               # uuid.UUID, version 7
    >>> idmint.ulid()                    # '01J...' (26 characters)
    >>> idmint.ksuid()                   # 27 characters of base62
    >>> idmint.typeid("user")            # 'user_01j...'
    >>> idmint.uuid7_n(1000)             # 1000 UUIDv7, one call

Random IDs: uuid4(), token(prefix=None) (a secret), traceparent().

Snowflakes (64-bit integers) come from a generator for one node:

    >>> with idmint.Snowflake(7, "discord") as sf:
    ...     sf.next(), sf.next_n(3)

Snowflake(node="auto") leases a free node from this host's registry (a
node given is registered there too: no two processes hold one), and
mark=PATH keeps a durable time mark so that a process killed and started
again with its clock set back never repeats an ID.

Decoding: inspect(text) gives the members of `idmint inspect --json`;
convert(text, to) re-encodes a 128-bit ID as uuid, ulid or typeid.

Errors: bad input raises ParseError, a ValueError carrying the library's
reason (which character, at which position); a clock set back further
than a generator tolerates raises ClockError (an idmint.Error) with
rewind_ms; other failures raise idmint.Error.

fork(): the module's generator notices a child process by itself and
reseeds, so parent and child never mint the same ID; a Snowflake made
before fork() refuses to mint in the child (they would share its node).
"""

from ._idmint import (
    ClockError,
    Error,
    ParseError,
    Snowflake,
    convert,
    inspect,
    ksuid,
    token,
    traceparent,
    typeid,
    ulid,
    uuid4,
    uuid7,
    uuid7_n,
)

__version__ = "0.3.0"

__all__ = [
    "ClockError",
    "Error",
    "ParseError",
    "Snowflake",
    "convert",
    "inspect",
    "ksuid",
    "token",
    "traceparent",
    "typeid",
    "ulid",
    "uuid4",
    "uuid7",
    "uuid7_n",
]
