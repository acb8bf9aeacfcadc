#!/usr/bin/env python3
"""bench/btree_report.py DIR: the markdown tables of docs/btree.md from the
JSON Lines that bench/btree.sh leaves in DIR (pg, pg-big, pg-kpm-K,
pg-migrate, sqlite, mysql). Figures a database does not report are '-'."""
import glob, json, os, re, sys

d = sys.argv[1] if len(sys.argv) > 1 else "."

def load(name):
    p = os.path.join(d, name + ".jsonl")
    if not os.path.exists(p):
        return []
    return [json.loads(l) for l in open(p) if l.strip()]

def mb(v):
    return "-" if v is None else "%.1f" % (v / 1048576)

def num(v, fmt="%.3f"):
    return "-" if v is None else fmt % v

def table(title, objs, base="uuidv7"):
    if not objs:
        return
    ref = {o["format"]: o for o in objs}.get(base)
    print("### %s\n" % title)
    print("%s, %d rows per format, batches of %d.\n" % (objs[0]["db_version"], objs[0]["rows"], objs[0]["batch"]))
    print("| format | rows/s | index MB | leaf pages | leaf density | fragmentation | WAL MB | written MB | buffer reads | buffer writes | index vs %s |" % base)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for o in objs:
        rel = "-" if not ref else "%.2f×" % (o["index_bytes"] / ref["index_bytes"])
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            o["format"], num(o["rows_per_s"], "%.0f"), mb(o["index_bytes"]), num(o["leaf_pages"], "%d"),
            num(o["leaf_density"]), num(o["leaf_fragmentation"]), mb(o["wal_bytes"]), mb(o["bytes_written"]),
            num(o["buffer_reads"], "%d"), num(o["buffer_writes"], "%d"), rel))
    print()

table("PostgreSQL", load("pg"))
table("PostgreSQL, the large run", load("pg-big"))

kpm = []
for p in glob.glob(os.path.join(d, "pg-kpm-*.jsonl")):
    k = int(re.search(r"pg-kpm-(\d+)", p).group(1))
    objs = {o["format"]: o for o in load(os.path.basename(p)[:-6])}
    kpm.append((k, objs))
if kpm:
    print("### Keys per millisecond (PostgreSQL, `--keys-per-ms K`)\n")
    print("| K | uuidv7 leaf density | uuidv7-unordered leaf density | uuidv7 index MB | unordered index MB | uuidv7 WAL MB | unordered WAL MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for k, o in sorted(kpm):
        a, b = o.get("uuidv7"), o.get("uuidv7-unordered")
        if a and b:
            print("| %d | %s | %s | %s | %s | %s | %s |" % (k, num(a["leaf_density"]), num(b["leaf_density"]),
                  mb(a["index_bytes"]), mb(b["index_bytes"]), mb(a["wal_bytes"]), mb(b["wal_bytes"])))
    print()

mig = load("pg-migrate")
if mig:
    print("### The migration (PostgreSQL, `--scenario migrate`)\n")
    print("| era | format | rows | rows/s | page splits | density of the era's new leaves | whole index's leaf density after | index MB after | WAL MB |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for o in mig:
        print("| %d | %s | %d | %s | %d | %s | %s | %s | %s |" % (o["era"], o["format"], o["rows"], num(o["rows_per_s"], "%.0f"),
              o["page_splits"], num(o["era_leaf_density"]), num(o["leaf_density"]), mb(o["index_bytes"]), mb(o["wal_bytes"])))
    print()

table("SQLite", load("sqlite"))
table("MariaDB (InnoDB)", load("mysql"))
