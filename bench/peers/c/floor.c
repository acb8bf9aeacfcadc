/*
 * The floor: what any generator must pay at least, measured here.
 *
 *   floor bench [--run-ms MS] [--runs R]
 *
 * impl "floor":
 *   clock   one clock_gettime(CLOCK_REALTIME) (vDSO, no system call);
 *   rand16  OpenSSL RAND_bytes drawn 4 KiB at a time, cost per 16 bytes
 *           (a UUIDv4 or a KSUID payload);
 *   rand10  the same per 10 bytes (UUIDv7 and ULID random parts).
 * impl "floor:getrandom": rand16/rand10 from getrandom(2) 4 KiB at a time,
 *   the floor for a library that asks the kernel in bulk instead of OpenSSL.
 * Each also as local2 (two threads, each its own clock reads / RNG state).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

enum { CHUNK = 4096 };

static uint64_t clock_body(uint64_t n)
{
    uint64_t acc = 0;
    struct timespec ts;
    for (uint64_t i = 0; i < n; i++) {
        clock_gettime(CLOCK_REALTIME, &ts);
        acc ^= (uint64_t)ts.tv_nsec;
    }
    return acc;
}

static void fill_openssl(unsigned char *buf)
{
    if (RAND_bytes(buf, CHUNK) != 1) {
        fprintf(stderr, "floor: RAND_bytes failed: %lu\n", ERR_get_error());
        exit(1);
    }
}

static void fill_getrandom(unsigned char *buf)
{
    size_t got = 0;
    while (got < CHUNK) {
        ssize_t r = getrandom(buf + got, CHUNK - got, 0);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("floor: getrandom");
            exit(1);
        }
        got += (size_t)r;
    }
}

/*
 * n counts IDs of `per` random bytes: the draws cover n * per bytes, 4 KiB
 * at a time (the last draw rounded up), and every byte is read.
 */
static uint64_t rand_body(uint64_t n, size_t per, void (*fill)(unsigned char *))
{
    unsigned char buf[CHUNK];
    uint64_t acc = 0;
    uint64_t bytes = n * per;
    for (uint64_t done = 0; done < bytes; done += CHUNK) {
        fill(buf);
        for (size_t i = 0; i < CHUNK; i += 8) {
            uint64_t w;
            memcpy(&w, buf + i, 8);
            acc ^= w;
        }
    }
    return acc;
}

static uint64_t ossl16(uint64_t n)
{
    return rand_body(n, 16, fill_openssl);
}

static uint64_t ossl10(uint64_t n)
{
    return rand_body(n, 10, fill_openssl);
}

static uint64_t getrandom16(uint64_t n)
{
    return rand_body(n, 16, fill_getrandom);
}

static uint64_t getrandom10(uint64_t n)
{
    return rand_body(n, 10, fill_getrandom);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "bench") != 0) {
        fprintf(stderr, "usage: floor bench [--run-ms MS] [--runs R]\n");
        return 2;
    }
    peer_cfg cfg;
    peer_parse_args(&cfg, argc, argv, 2);
    peer_report("floor", "clock", "binary", 1, peer_measure(&cfg, 1, clock_body));
    peer_report("floor", "clock", "local2", 2, peer_measure(&cfg, 2, clock_body));
    peer_report("floor", "rand16", "binary", 1, peer_measure(&cfg, 1, ossl16));
    peer_report("floor", "rand10", "binary", 1, peer_measure(&cfg, 1, ossl10));
    peer_report("floor", "rand16", "local2", 2, peer_measure(&cfg, 2, ossl16));
    peer_report("floor:getrandom", "rand16", "binary", 1, peer_measure(&cfg, 1, getrandom16));
    peer_report("floor:getrandom", "rand10", "binary", 1, peer_measure(&cfg, 1, getrandom10));
    peer_report("floor:getrandom", "rand16", "local2", 2, peer_measure(&cfg, 2, getrandom16));
    fprintf(stderr, "floor: sink %llx\n", (unsigned long long)peer_sink);
    return 0;
}
