/*
 * A tiny timing harness shared by the C peers (libuuid, floor).
 *
 * peer_measure() calibrates a count to about run_ms of work (the calibration
 * is the warm-up), then times `runs` runs with CLOCK_MONOTONIC and returns
 * the median wall-clock ns per ID. With threads == 2 the count is split
 * between two pthreads started together; the wall time covers both.
 */
#ifndef IDM_PEER_HARNESS_H
#define IDM_PEER_HARNESS_H

#include <stdint.h>

/* Mints n IDs and returns a fold of them (XORed into peer_sink). */
typedef uint64_t (*peer_body)(uint64_t n);

typedef struct peer_cfg {
    double run_ms; /* target wall time of one run */
    int runs;      /* runs whose median is reported */
} peer_cfg;

extern volatile uint64_t peer_sink;

/* Parses "[--run-ms MS] [--runs R]" from argv[first..]; exits 2 on error. */
void peer_parse_args(peer_cfg *cfg, int argc, char **argv, int first);

/* Median ns per ID of body over cfg->runs runs on `threads` threads (1..2). */
double peer_measure(const peer_cfg *cfg, int threads, peer_body body);

/* Prints one RESULT line and flushes stdout. */
void peer_report(const char *impl, const char *format, const char *mode, int threads,
                 double ns_per_id);

#endif
