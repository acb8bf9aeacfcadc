/*
 * Timing harness for the C peers; see harness.h.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile uint64_t peer_sink;

typedef struct worker {
    pthread_t tid;
    peer_body body;
    uint64_t n;
    uint64_t fold;
    pthread_barrier_t *start;
} worker;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    w->fold = w->body(w->n);
    return NULL;
}

/* Wall ns for n IDs on `threads` threads (each does n / threads). */
static double timed(int threads, uint64_t n, peer_body body)
{
    if (threads == 1) {
        double t0 = now_ns();
        peer_sink ^= body(n);
        return now_ns() - t0;
    }
    worker w[2];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        w[i].body = body;
        w[i].n = n / (uint64_t)threads;
        w[i].start = &start;
        if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "peer: pthread_create failed\n");
            exit(1);
        }
    }
    /* The threads are parked at the barrier: time from their release. */
    double t0 = now_ns();
    pthread_barrier_wait(&start);
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].tid, NULL);
        peer_sink ^= w[i].fold;
    }
    double t1 = now_ns();
    pthread_barrier_destroy(&start);
    return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

double peer_measure(const peer_cfg *cfg, int threads, peer_body body)
{
    double target = cfg->run_ms * 1e6;
    uint64_t n = 64;
    for (;;) {
        double ns = timed(threads, n, body);
        if (ns >= target / 4 || n >= (1ULL << 34)) {
            double scaled = (double)n * target / (ns < 1 ? 1 : ns);
            n = scaled < 16.0 * threads ? 16u * (uint64_t)threads : (uint64_t)scaled;
            break;
        }
        n *= 2;
    }
    uint64_t per = n / (uint64_t)threads;
    double v[64];
    int runs = cfg->runs > 64 ? 64 : cfg->runs;
    for (int i = 0; i < runs; i++) {
        v[i] = timed(threads, n, body) / (double)(per * (uint64_t)threads);
    }
    qsort(v, (size_t)runs, sizeof v[0], cmp_double);
    return v[runs / 2];
}

void peer_report(const char *impl, const char *format, const char *mode, int threads,
                 double ns_per_id)
{
    printf("RESULT\t%s\t%s\t%s\t%d\t%.2f\n", impl, format, mode, threads, ns_per_id);
    fflush(stdout);
}

static double parse_pos(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v > 0)) {
        fprintf(stderr, "peer: bad number '%s'\n", s);
        exit(2);
    }
    return v;
}

void peer_parse_args(peer_cfg *cfg, int argc, char **argv, int first)
{
    cfg->run_ms = 250;
    cfg->runs = 5;
    for (int i = first; i < argc; i += 2) {
        if (i + 1 >= argc) {
            fprintf(stderr, "peer: option %s needs a value\n", argv[i]);
            exit(2);
        }
        if (strcmp(argv[i], "--run-ms") == 0) {
            cfg->run_ms = parse_pos(argv[i + 1]);
        } else if (strcmp(argv[i], "--runs") == 0) {
            cfg->runs = (int)parse_pos(argv[i + 1]);
        } else {
            fprintf(stderr, "peer: unknown option %s\n", argv[i]);
            exit(2);
        }
    }
}
