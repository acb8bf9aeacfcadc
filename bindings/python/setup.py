"""Build script of the idmint Python binding (a CPython extension).

The extension compiles libidmint's C sources (src/ of the repository),
the front ends' shared helpers it needs (common/: the inspect renderer)
and the host-local node registry (coord/local.c) into itself, and links
OpenSSL's libcrypto. It needs no network: install it with

    python3 -m pip install --no-build-isolation ./bindings/python

The repository is found from this file's real location (two directories
up); IDMINT_SOURCE_DIR overrides that, for a copy of bindings/python made
elsewhere.
"""

import glob
import os
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.realpath(__file__))


def repository_root():
    """The idmint checkout whose C sources the extension is built from."""
    candidates = []
    if os.environ.get("IDMINT_SOURCE_DIR"):
        candidates.append(os.environ["IDMINT_SOURCE_DIR"])
    candidates.append(os.path.join(HERE, os.pardir, os.pardir))
    for c in candidates:
        root = os.path.realpath(c)
        if os.path.isfile(os.path.join(root, "include", "idmint", "idmint.h")):
            return root
    sys.exit(
        "idmint: cannot find the library's sources (include/idmint/idmint.h) "
        "two directories above %s; set IDMINT_SOURCE_DIR to the repository" % HERE
    )


ROOT = repository_root()


def sources():
    """Absolute paths, so that the objects land under build/ (setuptools
    strips the leading '/'), never beside the sources."""
    lib = []
    for pattern in ("src/*.c", "src/*/*.c", "src/os/linux/*.c"):
        lib += glob.glob(os.path.join(ROOT, pattern))
    lib = sorted(set(lib))
    if not lib:
        sys.exit("idmint: no C sources under %s/src" % ROOT)
    extra = [
        os.path.join(ROOT, "common", name)
        for name in ("inspect_render.c", "json.c", "outbuf.c", "host.c")
    ]
    extra.append(os.path.join(ROOT, "coord", "local.c"))
    return [os.path.join(HERE, "src", "idmint_module.c")] + lib + extra


def headers():
    """The headers the sources include: a change to one rebuilds the
    extension (setuptools compares only these and the sources)."""
    out = []
    for pattern in ("include/idmint/*.h", "src/*.h", "src/*/*.h", "src/os/*.h",
                    "common/*.h", "coord/*.h"):
        out += glob.glob(os.path.join(ROOT, pattern))
    return sorted(set(out))


extension = Extension(
    "idmint._idmint",
    sources=sources(),
    depends=headers(),
    include_dirs=[
        os.path.join(ROOT, "include"),
        os.path.join(ROOT, "src"),
        os.path.join(ROOT, "common"),
        os.path.join(ROOT, "coord"),
    ],
    define_macros=[("_GNU_SOURCE", None)],
    # The library's symbols stay inside the extension (only PyInit__idmint
    # is exported), so another libidmint loaded in the same process cannot
    # clash with them. -mcx16: the ULID and KSUID states' 128-bit
    # compare-and-swap inline, as the CMake build has it.
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-Wall", "-Wextra",
                        "-Wno-missing-field-initializers"]
    + (["-mcx16"] if os.uname().machine in ("x86_64", "amd64") else []),
    libraries=["crypto", "pthread"],
)

setup(
    name="idmint",
    version="0.3.0",
    description="Distributed ID generation (UUIDv7/v4, ULID, KSUID, TypeID, "
    "tokens, traceparent, Snowflake) on libidmint",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    if os.path.exists(os.path.join(HERE, "README.md"))
    else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=["idmint"],
    package_data={"idmint": ["py.typed", "__init__.pyi"]},
    ext_modules=[extension],
    zip_safe=False,
)
