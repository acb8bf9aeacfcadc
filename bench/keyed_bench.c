/*
 * keyed_bench.c - nanoseconds per call of the keyed forms (keyed.h):
 * idm_obfuscate, idm_reveal, idm_stoken_next and idm_stoken_verify, on one
 * thread, with and without a prefix.
 *
 * Usage: keyed_bench [ITERATIONS]   (default 1000000)
 */
#include <idmint/idmint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const char *what, const idm_error *err)
{
    fprintf(stderr, "keyed_bench: %s: %s\n", what, err->msg);
    exit(1);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
    if (n <= 0) {
        fprintf(stderr, "usage: keyed_bench [ITERATIONS]\n");
        return 2;
    }
    uint8_t master[IDM_KEY_BYTES];
    idm_key *k = NULL;
    idm_gen *g = NULL;
    idm_error err;
    if (idm_key_generate(master, NULL, &err) != IDM_OK || idm_key_new(&k, master, NULL, &err) ||
        idm_gen_new(&g, NULL, &err) != IDM_OK)
        fail("setup", &err);

    static const char *const prefixes[] = {"", "user"};
    for (size_t p = 0; p < 2; p++) {
        const char *prefix = prefixes[p];
        size_t plen = strlen(prefix);
        char text[IDM_OBF_STRLEN_MAX + 1];
        uint64_t sum = 0;
        double t0 = now_s();
        for (long i = 0; i < n; i++) {
            if (idm_obfuscate(k, (uint64_t)i, prefix, plen, text, sizeof text, &err) != IDM_OK)
                fail("obfuscate", &err);
            sum += (unsigned char)text[plen + 3];
        }
        double t1 = now_s();
        size_t len = strlen(text);
        for (long i = 0; i < n; i++) {
            uint64_t id;
            if (idm_reveal(k, text, len, &id, &err) != IDM_OK)
                fail("reveal", &err);
            sum += id;
        }
        double t2 = now_s();
        char tok[IDM_STOKEN_STRLEN_MAX + 1];
        for (long i = 0; i < n; i++) {
            if (idm_stoken_next(g, k, prefix, plen, 1900000000, tok, sizeof tok, &err) != IDM_OK)
                fail("stoken_next", &err);
            sum += (unsigned char)tok[plen + 3];
        }
        double t3 = now_s();
        size_t tlen = strlen(tok);
        for (long i = 0; i < n; i++) {
            int64_t exp;
            if (idm_stoken_verify(k, tok, tlen, 1800000000, &exp, &err) != IDM_OK)
                fail("stoken_verify", &err);
            sum += (uint64_t)exp;
        }
        double t4 = now_s();
        printf("prefix %-6s obfuscate %6.0f ns  reveal %6.0f ns  stoken_next %6.0f ns  "
               "stoken_verify %6.0f ns  (%ld calls each, checksum %llu)\n",
               plen ? prefix : "none", (t1 - t0) / (double)n * 1e9, (t2 - t1) / (double)n * 1e9,
               (t3 - t2) / (double)n * 1e9, (t4 - t3) / (double)n * 1e9, n,
               (unsigned long long)(sum & 0xffff));
    }
    idm_gen_free(g);
    idm_key_free(k);
    return 0;
}
