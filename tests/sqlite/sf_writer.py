"""sf_writer.py - one writer of test_snowflake.sh: inserts snowflake() IDs
into the table ids of a WAL database through Python's sqlite3 module.

    python3 sf_writer.py EXTENSION DATABASE WRITER BATCHES ROWS_PER_BATCH

Each batch mints ROWS_PER_BATCH IDs with one SELECT snowflake() outside
any write transaction (so writers mint at the same time: WAL readers do not
wait for each other), then inserts them as rows (id, writer) in one
transaction (BEGIN IMMEDIATE ... COMMIT). "database is locked" (SQLITE_BUSY) is retried and
counted; any other error is printed to stderr and ends the writer with
status 1. At the end prints "busy N" on stdout.
"""
import sqlite3
import sys
import time

ext, path, writer, batches, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
db = sqlite3.connect(path, timeout=0.05, isolation_level=None)
db.enable_load_extension(True)
db.load_extension(ext)
db.enable_load_extension(False)
busy = 0
mint = ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
        "SELECT snowflake() FROM c")


def locked(e):
    return isinstance(e, sqlite3.OperationalError) and "database is locked" in str(e)


for b in range(batches):
    while True:
        try:
            ids = [(row[0], writer) for row in db.execute(mint, (rows,))]
            break
        except sqlite3.Error as e:
            if locked(e):
                busy += 1
                continue
            print("writer %d: SELECT snowflake(): %s" % (writer, e), file=sys.stderr)
            sys.exit(1)
    while True:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            if locked(e):
                busy += 1
                time.sleep(0.001)
                continue
            print("writer %d: BEGIN: %s" % (writer, e), file=sys.stderr)
            sys.exit(1)
        try:
            db.executemany("INSERT INTO ids(id, w) VALUES (?, ?)", ids)
            db.execute("COMMIT")
            break
        except sqlite3.Error as e:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if locked(e):
                busy += 1
                continue
            print("writer %d: %s" % (writer, e), file=sys.stderr)
            sys.exit(1)
print("busy", busy)
