"""Shared helpers of the idmint binding's tests.

The golden files are the library's own (tests/vectors/ of the repository,
found from this file's location), read with the rules of their README:
one record per line, fields split on blanks, \\xHH for a byte, \\\\ for a
backslash, "" for the empty string, '-' for none where a file says so.
"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, List

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VECTORS = REPO / "tests" / "vectors"
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

# A node given to Snowflake is registered in the host's registry, as an
# `auto` one is leased there; the tests use a private one (mode 0700,
# this run's) so that they neither disturb nor depend on the host's
# /run/idmint/nodes (other suites' idmintd use it), and pass it as
# registry= in this process and in the ones they start.
REGISTRY = tempfile.mkdtemp(prefix="idmint-test-nodes-")


def _unescape(field: str) -> str:
    if field == '""':
        return ""
    raw = re.sub(rb"\\x([0-9a-fA-F]{2})|\\\\",
                 lambda m: bytes([int(m.group(1), 16)]) if m.group(1) else b"\\",
                 field.encode())
    return raw.decode("utf-8")


def records(name: str, kind: str) -> List[List[str]]:
    """The records of tests/vectors/NAME whose first field is KIND, each
    as its remaining fields."""
    path = VECTORS / name
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        if fields[0] == kind:
            out.append([_unescape(f) for f in fields[1:]])
    assert out, "no '%s' records in %s" % (kind, path)
    return out


def rss_kib() -> int:
    """The process's resident set size in KiB (/proc/self/statm)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def run_python(code: str, env_extra: "dict[str, str] | None" = None,
               **kw: object) -> "subprocess.Popen[str]":
    """Starts this interpreter on code, stdout piped, in its own process."""
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kw)  # type: ignore[call-overload]


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    """A private node registry (the host's /run/idmint/nodes is left alone)."""
    d = tmp_path / "nodes"
    yield str(d)
