/*
 * bench.h - what `idmint bench btree` (bench.c) hands its chart (svg.c):
 * one result per format (or per era of --scenario migrate), with the
 * database's figures and the insert rate sampled along the way.
 */
#ifndef IDM_CLI_BENCH_H
#define IDM_CLI_BENCH_H

#include "idmint_dbbench.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The insert rate at one point: rows inserted so far, and the rows per
 * second since the point before. */
typedef struct bench_point {
    int64_t rows;
    double rows_per_s;
} bench_point;

/* About this many points per format. */
#define BENCH_SAMPLES 100

typedef struct bench_result {
    const char *format;        /* "uuidv7", ... */
    int era;                   /* 0, or 1 and 2 with --scenario migrate */
    int64_t rows;              /* inserted (of this era) */
    double seconds;            /* spent in inserts; minting is not counted */
    double rows_per_s;         /* rows / seconds */
    idmb_stats stats;          /* of the primary key once filled (after the era) */
    idmb_counters delta;       /* counters after minus before; -1 unknown */
    int64_t leaf_pages_added;  /* migrate: leaf pages the era added; -1 unknown */
    double era_leaf_density;   /* migrate: see bench.c; < 0 unknown */
    bench_point rate[BENCH_SAMPLES + 2];
    size_t n_rate;
} bench_result;

typedef struct bench_run {
    const char *db;         /* "sqlite", "postgresql", "mysql" */
    const char *db_version; /* "SQLite 3.40.1" */
    const char *url_shown;  /* redacted */
    int64_t rows;           /* per format (per era) */
    int64_t batch;
    uint64_t keys_per_ms;   /* 0: the real clock */
    int migrate;
    const bench_result *results;
    size_t n_results;
} bench_run;

/* Writes the chart of r as an SVG 1.1 document to f: a line chart of
 * rows/s against rows inserted per result, and bars of the final index
 * size and leaf density. Returns 0, or -1 when a write failed (errno). */
int bench_svg_write(FILE *f, const bench_run *r);

#endif
