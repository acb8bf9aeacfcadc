/*
 * fuzz/fuzz_form.c - idms_http_form_fields and idms_http_is_form
 * (server/http/http_parser.h): the parameters tinyid's routes read from
 * the query and an application/x-www-form-urlencoded body together.
 *
 * The input: a byte choosing where the query ends and the body starts, a
 * byte choosing the capacity of each value's buffer, then the bytes.
 * Properties:
 *  - no field's value is written past its capacity (each buffer is an
 *    allocation of exactly cap bytes), and it is NUL-terminated;
 *  - a field's count is the number of pairs, in the query and the body,
 *    whose name idms_http_query_check takes for its key;
 *  - a field given is the value idms_http_query_get_bytes finds in the
 *    query when the query names it, else in the body, malformed or too
 *    long alike; a field not given is "" with length 0;
 *  - unknown names change nothing: the same input with a pair of another
 *    name added gives the same fields;
 *  - idms_http_is_form is 0 or 1, and 1 only for an input that starts with
 *    the media type in some case.
 */
#include "harness.h"

#include "http/http_parser.h"

#include <stdbool.h>
#include <strings.h>

#define NKEYS 4
static const char *const keys[NKEYS] = {"bizType", "batchSize", "token", "a"};

/* Pairs of q[0..len) that query_check takes for key: counted one by one by
 * checking ever shorter prefixes (query_check names the first pair that
 * is unknown or repeated). */
static uint32_t ref_count(const char *q, size_t len, const char *key)
{
    const char *names[2] = {key, NULL};
    uint32_t n = 0;
    size_t i = 0;
    while (i <= len) {
        size_t e = i;
        while (e < len && q[e] != '&') {
            e++;
        }
        if (e > i &&
            idms_http_query_check(q + i, e - i, names, &(const char *){NULL}, &(size_t){0}) == 0) {
            n++;
        }
        i = e + 1;
    }
    return n;
}

static void check_fields(const char *q, size_t qlen, const char *b, size_t blen, size_t cap,
                         idms_http_field *out)
{
    char *dst[NKEYS];
    idms_http_field f[NKEYS];
    for (int k = 0; k < NKEYS; k++) {
        dst[k] = malloc(cap > 0 ? cap : 1);
        FUZZ_CHECK(dst[k] != NULL);
        f[k] = (idms_http_field){.key = keys[k], .dst = dst[k], .cap = cap};
    }
    idms_http_form_fields(q, qlen, b, blen, f, NKEYS);
    for (int k = 0; k < NKEYS; k++) {
        uint32_t want = ref_count(q, qlen, keys[k]) + ref_count(b, blen, keys[k]);
        FUZZ_CHECK(f[k].given == want);
        if (f[k].given == 0) {
            FUZZ_CHECK(f[k].len == 0 && !f[k].bad);
            FUZZ_CHECK(cap == 0 || dst[k][0] == '\0');
        } else {
            char *ref = malloc(cap > 0 ? cap : 1);
            FUZZ_CHECK(ref != NULL);
            size_t rlen = 0;
            bool in_query = ref_count(q, qlen, keys[k]) > 0;
            int rc = in_query ? idms_http_query_get_bytes(q, qlen, keys[k], ref, cap, &rlen)
                              : idms_http_query_get_bytes(b, blen, keys[k], ref, cap, &rlen);
            FUZZ_CHECK(rc != 0);
            FUZZ_CHECK((rc < 0) == (f[k].bad != 0));
            if (rc > 0) {
                FUZZ_CHECK(f[k].len == rlen && f[k].len < cap);
                FUZZ_CHECK(memcmp(dst[k], ref, rlen) == 0 && dst[k][rlen] == '\0');
            }
            free(ref);
        }
        if (out != NULL) {
            out[k] = f[k];
            out[k].dst = NULL;
        }
        free(dst[k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    size_t rest = size - 2;
    size_t split = rest == 0 ? 0 : data[0] % (rest + 1);
    size_t cap = data[1] % 40;
    fuzz_input q, b;
    fuzz_input_new(&q, data + 2, split);
    fuzz_input_new(&b, data + 2 + split, rest - split);
    idms_http_field first[NKEYS];
    check_fields(q.text, q.len, b.text, b.len, cap, first);

    /* A pair of a name no key has, added to the body, changes nothing. */
    fuzz_input b2;
    uint8_t *more = malloc(b.len + 6);
    FUZZ_CHECK(more != NULL);
    memcpy(more, b.text, b.len);
    memcpy(more + b.len, "&zz=1", 5);
    fuzz_input_new(&b2, more, b.len + 5);
    idms_http_field second[NKEYS];
    check_fields(q.text, q.len, b2.text, b2.len, cap, second);
    for (int k = 0; k < NKEYS; k++) {
        FUZZ_CHECK(first[k].given == second[k].given && first[k].len == second[k].len &&
                   first[k].bad == second[k].bad);
    }
    free(more);
    fuzz_input_free(&b2);

    static const char type[] = "application/x-www-form-urlencoded";
    int form = idms_http_is_form(q.text, q.len);
    FUZZ_CHECK(form == 0 || form == 1);
    if (form) {
        FUZZ_CHECK(q.len >= sizeof type - 1 && strncasecmp(q.text, type, sizeof type - 1) == 0);
    }
    fuzz_input_free(&q);
    fuzz_input_free(&b);
    return 0;
}
