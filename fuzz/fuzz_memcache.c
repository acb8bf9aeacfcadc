/*
 * fuzz/fuzz_memcache.c - idms_mc_parse (server/memcache/memcache_parser.h)
 * on arbitrary bytes, read as text and (when it starts with 0x80) binary.
 *
 * Properties:
 *  - the result is a length in 1..min(len, IDMS_MC_MAX_REQUEST),
 *    INCOMPLETE (only below IDMS_MC_MAX_REQUEST bytes, no keys, no reason)
 *    or INVALID with a reason and no keys;
 *  - keys lie inside the consumed bytes; a text get/gets has 1..100 keys of
 *    1..250 bytes with no control character or space;
 *  - parsing exactly the consumed bytes again gives the same request;
 *  - every prefix gives INCOMPLETE or the whole input's answer;
 *  - a text get's keys, written back as "get K...\r\n", parse to the same
 *    keys;
 *  - the input read as a pipeline holds all of the above for each request.
 */
#include "harness.h"

#include "memcache/memcache_parser.h"

static bool same(const idms_mc_request *a, const idms_mc_request *b)
{
    if (a->cmd != b->cmd || a->nkeys != b->nkeys || a->binary != b->binary ||
        a->opcode != b->opcode || a->opaque != b->opaque)
        return false;
    for (size_t i = 0; i < a->nkeys; i++)
        if (a->keys[i].len != b->keys[i].len ||
            memcmp(a->keys[i].ptr, b->keys[i].ptr, a->keys[i].len) != 0)
            return false;
    return true;
}

static void check_one(const char *buf, size_t len, bool binary, ptrdiff_t *out)
{
    idms_mc_request req;
    const char *reason = NULL;
    ptrdiff_t r = idms_mc_parse(buf, len, binary, &req, &reason);
    *out = r;
    if (r == IDMS_MC_INCOMPLETE) {
        FUZZ_CHECK(len < IDMS_MC_MAX_REQUEST && reason == NULL && req.nkeys == 0);
        return;
    }
    if (r == IDMS_MC_INVALID) {
        FUZZ_CHECK(reason != NULL && reason[0] != '\0' && req.nkeys == 0);
        return;
    }
    FUZZ_CHECK(r > 0 && (size_t)r <= len && (size_t)r <= IDMS_MC_MAX_REQUEST);
    FUZZ_CHECK(reason == NULL && req.binary == binary);
    for (size_t i = 0; i < req.nkeys; i++) {
        FUZZ_CHECK(req.keys[i].ptr >= buf && req.keys[i].ptr + req.keys[i].len <= buf + r);
    }
    if (!binary && (req.cmd == IDMS_MC_GET || req.cmd == IDMS_MC_GETS)) {
        FUZZ_CHECK(req.nkeys >= 1 && req.nkeys <= IDMS_MC_MAX_KEYS);
        char line[IDMS_MC_MAX_LINE + 8];
        size_t n = 0;
        memcpy(line, "get", 3);
        n = 3;
        for (size_t i = 0; i < req.nkeys; i++) {
            FUZZ_CHECK(req.keys[i].len >= 1 && req.keys[i].len <= IDMS_MC_KEY_MAX);
            for (size_t k = 0; k < req.keys[i].len; k++) {
                unsigned char c = (unsigned char)req.keys[i].ptr[k];
                FUZZ_CHECK(c > 32 && c != 127);
            }
            if (n + 1 + req.keys[i].len + 2 > sizeof line)
                return; /* the rewrite would not fit one line: skip it */
            line[n++] = ' ';
            memcpy(line + n, req.keys[i].ptr, req.keys[i].len);
            n += req.keys[i].len;
        }
        memcpy(line + n, "\r\n", 2);
        n += 2;
        idms_mc_request again;
        FUZZ_CHECK(idms_mc_parse(line, n, false, &again, NULL) == (ptrdiff_t)n);
        FUZZ_CHECK(again.nkeys == req.nkeys && again.cmd == IDMS_MC_GET);
        for (size_t i = 0; i < req.nkeys; i++)
            FUZZ_CHECK(again.keys[i].len == req.keys[i].len &&
                       memcmp(again.keys[i].ptr, req.keys[i].ptr, req.keys[i].len) == 0);
    }
    /* The consumed bytes alone: the same request. */
    idms_mc_request exact;
    FUZZ_CHECK(idms_mc_parse(buf, (size_t)r, binary, &exact, NULL) == r);
    FUZZ_CHECK(same(&req, &exact));
}

static void check_prefixes(const char *buf, size_t len, bool binary, ptrdiff_t whole)
{
    /* Every prefix up to 64 bytes, and a few longer ones. */
    for (size_t k = 0; k < len; k += k < 64 ? 1 : 61) {
        idms_mc_request req;
        ptrdiff_t r = idms_mc_parse(buf, k, binary, &req, NULL);
        FUZZ_CHECK(r == IDMS_MC_INCOMPLETE || r == whole);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    bool binary = in.len > 0 && (unsigned char)in.text[0] == IDMS_MC_BIN_REQUEST;
    size_t at = 0;
    for (int n = 0; n < 64 && at < in.len; n++) {
        ptrdiff_t r = 0;
        check_one(in.text + at, in.len - at, binary, &r);
        check_prefixes(in.text + at, in.len - at, binary, r);
        if (r <= 0)
            break;
        at += (size_t)r;
    }
    fuzz_input_free(&in);
    return 0;
}
