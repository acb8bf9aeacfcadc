# shellcheck shell=bash
# dbservers.sh - what the CLI's database tests (test_bench_btree_db.sh,
# test_audit_db.sh) share, sourced after lib.sh: the starters of a real
# PostgreSQL and MariaDB (tests/coord/), and the rule for a machine without
# them - a failure with IDM_COORD_REQUIRED=ON (the test command installs
# them), else exit 77 (skipped).
COORD_DIR=$(dirname "${BASH_SOURCE[0]}")/../coord
# shellcheck source=tests/coord/services.sh
. "$COORD_DIR/services.sh"
# shellcheck source=tests/coord/pg.sh
. "$COORD_DIR/pg.sh"
# shellcheck source=tests/coord/mariadb.sh
. "$COORD_DIR/mariadb.sh"
if ! pg_installed || ! command -v mariadbd >/dev/null 2>&1; then
    name=$(basename "$0")
    if [ "${IDM_COORD_REQUIRED:-OFF}" = ON ]; then
        echo "$name: PostgreSQL or MariaDB (postgresql, mariadb-server) is missing: FAIL" >&2
        exit 1
    fi
    echo "$name: needs PostgreSQL and MariaDB; skipped"
    exit 77
fi
chmod 0711 "$T_DIR"
