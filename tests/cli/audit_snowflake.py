#!/usr/bin/env python3
"""A snowflake generator as a service would write it without a library
(Twitter's layout: 41 bits of milliseconds since 1288834974657, 10 bits
of machine id, 12 bits of sequence; time.time() * 1000; a lock; a spin to
the next millisecond when the sequence runs out), for `idmint audit`'s
tests (tests/cli/test_audit.sh): run twice at once with the same machine
id, its IDs must be flagged; with different ids, not.

Usage: audit_snowflake.py MACHINE_ID STARTED_FILE OTHER_STARTED_FILE MS
Creates STARTED_FILE when it begins to mint, then prints IDs, one per
line, until OTHER_STARTED_FILE exists (the other run has begun; "-" for
none) and MS more milliseconds have passed on its clock. The test runs it
under libfaketime on a clock that starts at one instant for every run and
moves on by a fixed step at each reading, so that two runs started
together mint in the same milliseconds however busy the machine (on the
real clock a loaded machine may run them by turns, and no millisecond has
both).
"""
import os
import sys
import threading
import time


class Snowflake:
    EPOCH_MS = 1288834974657

    def __init__(self, machine_id):
        if not 0 <= machine_id < 1024:
            raise ValueError("machine id must be 0..1023")
        self.machine_id = machine_id
        self.lock = threading.Lock()
        self.last_ms = -1
        self.sequence = 0

    def next_id(self):
        with self.lock:
            now = int(time.time() * 1000)
            if now == self.last_ms:
                self.sequence = (self.sequence + 1) & 0xFFF
                if self.sequence == 0:
                    while now <= self.last_ms:
                        now = int(time.time() * 1000)
            else:
                self.sequence = 0
            self.last_ms = now
            return ((now - self.EPOCH_MS) << 22) | (self.machine_id << 12) | self.sequence


def main():
    machine_id, started, other, ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    gen = Snowflake(int(machine_id))
    out = []
    open(started, "w").close()
    seen = None
    while True:
        for _ in range(100):
            out.append(gen.next_id())
        now = time.time()
        if seen is None and (other == "-" or os.path.exists(other)):
            seen = now
        if seen is not None and now - seen >= ms / 1000.0:
            break
    sys.stdout.write("".join("%d\n" % i for i in out))


if __name__ == "__main__":
    main()
