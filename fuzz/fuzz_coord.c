/*
 * fuzz/fuzz_coord.c - what idmint_coord parses from outside: coordinator
 * URLs (--coord, coord.c), slot numbers from key names, and the pieces of
 * etcd's JSON answers that etcd.c reads (etcd_gw.c: base64 keys and
 * values, 64-bit numbers as strings or integers). A coordinator is a
 * network peer: nothing it answers may crash or overrun the client.
 *
 * The input is split at its first newline: the first part is a URL (and a
 * slot name and a decimal), the rest a JSON answer.
 * Properties:
 *  - idmc_open returns 0 or IDMC_USAGE (it does no I/O); on 0 the URL is
 *    kept as given and the kind is etcd or zookeeper; on IDMC_USAGE the
 *    message is a NUL-terminated sentence;
 *  - an accepted slot name or decimal prints back to a number that parses
 *    to the same value;
 *  - every member of a JSON object is read as a 64-bit number and as
 *    base64 without a crash; a decoded value encodes and decodes again to
 *    itself.
 */
#include "harness.h"

#include "backend.h"
#include "etcd_gw.h"

#include <inttypes.h>

static void url(const char *text)
{
    idmc_coord *c = NULL;
    idmc_error err;
    memset(&err, 'x', sizeof err);
    int rc = idmc_open(text, 10000, &c, &err);
    FUZZ_CHECK(err.code == rc);
    if (rc != 0) {
        FUZZ_CHECK(rc == IDMC_USAGE);
        FUZZ_CHECK(c == NULL);
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof err.msg) != NULL && err.msg[0] != '\0');
        return;
    }
    FUZZ_CHECK(strcmp(idmc_url(c), text) == 0);
    FUZZ_CHECK(strcmp(idmc_kind(c), "etcd") == 0 || strcmp(idmc_kind(c), "zookeeper") == 0);
    idmc_close(c);
}

static void numbers(const char *text)
{
    uint64_t node = 0;
    if (idmc_parse_node(text, &node) == 0) {
        char back[32];
        snprintf(back, sizeof back, "%" PRIu64, node);
        uint64_t again = 1;
        FUZZ_CHECK(idmc_parse_node(back, &again) == 0 && again == node);
    }
    int64_t v = 0;
    if (idmc_gw_parse_i64(text, &v) == 0) {
        FUZZ_CHECK(v >= 0);
        char back[32];
        snprintf(back, sizeof back, "%" PRId64, v);
        int64_t again = -1;
        FUZZ_CHECK(idmc_gw_parse_i64(back, &again) == 0 && again == v);
    }
}

static void answer(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    if (j == NULL)
        return;
    if (json_is_object(j)) {
        const char *key;
        json_t *member;
        json_object_foreach(j, key, member)
        {
            int64_t v = 0;
            (void)idmc_gw_get_i64(j, key, &v);
            char *text = idmc_gw_unb64(member);
            if (text != NULL) {
                json_t *enc = idmc_gw_b64(text);
                FUZZ_CHECK(enc != NULL);
                char *again = idmc_gw_unb64(enc);
                FUZZ_CHECK(again != NULL && strcmp(again, text) == 0);
                free(again);
                json_decref(enc);
                free(text);
            }
        }
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t first = nl != NULL ? (size_t)(nl - data) : size;
    char *text = malloc(first + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, first);
    text[first] = '\0';
    url(text);
    numbers(text);
    free(text);
    if (nl != NULL)
        answer(nl + 1, size - first - 1);
    return 0;
}
