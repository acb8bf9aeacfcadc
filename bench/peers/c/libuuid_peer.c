/*
 * Peer benchmark: util-linux libuuid (Debian's uuid-dev).
 *
 *   libuuid_peer bench [--run-ms MS] [--runs R]   RESULT lines on stdout
 *   libuuid_peer cli uuidv4|uuidv1 N             N UUIDs, one per line
 *
 * uuidv4 is uuid_generate_random (bytes from getrandom per UUID); uuidv1 is
 * uuid_generate_time (asks uuidd over a socket, then falls back to its clock
 * file under a lock: several system calls per UUID when no uuidd runs).
 * Text is uuid_unparse_lower. libuuid has no generator object: its state is
 * process-wide, so the two-thread figure is reported as shared2.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

static const char IMPL[] = "libuuid";

static uint64_t fold(const uuid_t u)
{
    uint64_t a;
    uint64_t b;
    memcpy(&a, u, 8);
    memcpy(&b, u + 8, 8);
    return a ^ b;
}

static uint64_t fold_text(const char *s)
{
    uint64_t a;
    memcpy(&a, s + 28, 8);
    return a;
}

static uint64_t v4_binary(uint64_t n)
{
    uint64_t acc = 0;
    uuid_t u;
    for (uint64_t i = 0; i < n; i++) {
        uuid_generate_random(u);
        acc ^= fold(u);
    }
    return acc;
}

static uint64_t v4_text(uint64_t n)
{
    uint64_t acc = 0;
    uuid_t u;
    char s[37];
    for (uint64_t i = 0; i < n; i++) {
        uuid_generate_random(u);
        uuid_unparse_lower(u, s);
        acc ^= fold_text(s);
    }
    return acc;
}

static uint64_t v1_binary(uint64_t n)
{
    uint64_t acc = 0;
    uuid_t u;
    for (uint64_t i = 0; i < n; i++) {
        uuid_generate_time(u);
        acc ^= fold(u);
    }
    return acc;
}

static uint64_t v1_text(uint64_t n)
{
    uint64_t acc = 0;
    uuid_t u;
    char s[37];
    for (uint64_t i = 0; i < n; i++) {
        uuid_generate_time(u);
        uuid_unparse_lower(u, s);
        acc ^= fold_text(s);
    }
    return acc;
}

static int write_all(const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(STDOUT_FILENO, p, len);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Prints n UUIDs through a 1 MiB buffer flushed with write(2). */
static int cli(int v1, unsigned long long n)
{
    enum { CAP = 1 << 20, LINE = 37 };
    static char buf[CAP];
    size_t len = 0;
    uuid_t u;
    for (unsigned long long i = 0; i < n; i++) {
        if (v1) {
            uuid_generate_time(u);
        } else {
            uuid_generate_random(u);
        }
        char s[37];
        uuid_unparse_lower(u, s);
        memcpy(buf + len, s, 36);
        buf[len + 36] = '\n';
        len += LINE;
        if (CAP - len < LINE) {
            if (write_all(buf, len) != 0) {
                return -1;
            }
            len = 0;
        }
    }
    return write_all(buf, len);
}

static void usage(void)
{
    fprintf(stderr, "usage: libuuid_peer bench [--run-ms MS] [--runs R]\n"
                    "       libuuid_peer cli uuidv4|uuidv1 N\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) {
        peer_cfg cfg;
        peer_parse_args(&cfg, argc, argv, 2);
        peer_report(IMPL, "uuidv4", "binary", 1, peer_measure(&cfg, 1, v4_binary));
        peer_report(IMPL, "uuidv4", "text", 1, peer_measure(&cfg, 1, v4_text));
        peer_report(IMPL, "uuidv4", "shared2", 2, peer_measure(&cfg, 2, v4_binary));
        peer_report(IMPL, "uuidv1", "binary", 1, peer_measure(&cfg, 1, v1_binary));
        peer_report(IMPL, "uuidv1", "text", 1, peer_measure(&cfg, 1, v1_text));
        peer_report(IMPL, "uuidv1", "shared2", 2, peer_measure(&cfg, 2, v1_binary));
        fprintf(stderr, "libuuid_peer: sink %llx\n", (unsigned long long)peer_sink);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "cli") == 0) {
        int v1 = strcmp(argv[2], "uuidv1") == 0;
        if (!v1 && strcmp(argv[2], "uuidv4") != 0) {
            usage();
        }
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(argv[3], &end, 10);
        if (errno != 0 || end == argv[3] || *end != '\0') {
            usage();
        }
        if (cli(v1, n) != 0) {
            perror("libuuid_peer: write");
            return 1;
        }
        return 0;
    }
    usage();
    return 2;
}
