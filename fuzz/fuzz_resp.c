/*
 * fuzz/fuzz_resp.c - idms_resp_parse (server/resp/resp_parser.h) on
 * arbitrary bytes.
 *
 * Properties:
 *  - the result is a length in 1..min(len, IDMS_RESP_MAX_COMMAND),
 *    INCOMPLETE (only below IDMS_RESP_MAX_COMMAND bytes, with argc 0 and no
 *    reason) or INVALID with a "Protocol error: " reason and argc 0;
 *  - a parsed command has at most IDMS_RESP_MAX_ARGS arguments inside the
 *    consumed bytes: in a multibulk each is followed by CRLF and at most
 *    IDMS_RESP_MAX_BULK long; inline ones are non-empty runs of non-blanks
 *    on a line ending with LF;
 *  - parsing exactly the consumed bytes again gives the same command;
 *  - a prefix gives INCOMPLETE or the whole input's answer;
 *  - the arguments, written back as a multibulk, parse to the same ones;
 *  - the input read as a pipeline (commands back to back) holds all of the
 *    above for each command.
 */
#include "harness.h"

#include "resp/resp_parser.h"

struct outcome {
    ptrdiff_t r;
    const char *reason;
    idms_resp_command cmd;
};

static void parse_exact(const char *data, size_t len, struct outcome *o, fuzz_input *in)
{
    fuzz_input_new(in, (const uint8_t *)data, len);
    o->reason = "junk";
    o->cmd.argc = 777;
    o->r = idms_resp_parse(in->text, in->len, &o->cmd, &o->reason);
}

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void check_outcome(const struct outcome *o, const char *base, size_t len)
{
    if (o->r == IDMS_RESP_INVALID) {
        FUZZ_CHECK(o->reason != NULL && strncmp(o->reason, "Protocol error: ", 16) == 0);
        FUZZ_CHECK(o->cmd.argc == 0);
        return;
    }
    if (o->r == IDMS_RESP_INCOMPLETE) {
        FUZZ_CHECK(o->reason == NULL && o->cmd.argc == 0);
        FUZZ_CHECK(len < IDMS_RESP_MAX_COMMAND);
        return;
    }
    FUZZ_CHECK(o->r > 0 && (size_t)o->r <= len && (size_t)o->r <= IDMS_RESP_MAX_COMMAND);
    FUZZ_CHECK(o->reason == NULL);
    size_t r = (size_t)o->r;
    const idms_resp_command *c = &o->cmd;
    FUZZ_CHECK(c->argc <= IDMS_RESP_MAX_ARGS);
    const char *prev_end = base;
    for (size_t i = 0; i < c->argc; i++) {
        const idms_resp_arg *a = &c->argv[i];
        FUZZ_CHECK(a->ptr >= prev_end && (size_t)(a->ptr - base) <= r);
        FUZZ_CHECK(a->len <= r - (size_t)(a->ptr - base));
        prev_end = a->ptr + a->len;
        if (base[0] == '*') {
            FUZZ_CHECK(a->len <= IDMS_RESP_MAX_BULK);
            FUZZ_CHECK((size_t)(prev_end - base) + 2 <= r);
            FUZZ_CHECK(prev_end[0] == '\r' && prev_end[1] == '\n');
        } else {
            FUZZ_CHECK(a->len > 0 && a->len <= IDMS_RESP_MAX_INLINE);
            for (size_t k = 0; k < a->len; k++) {
                FUZZ_CHECK(!is_blank((unsigned char)a->ptr[k]) && a->ptr[k] != '\n');
            }
        }
    }
    if (base[0] == '*') {
        FUZZ_CHECK(base[r - 2] == '\r' && base[r - 1] == '\n');
    } else {
        FUZZ_CHECK(base[r - 1] == '\n' && memchr(base, '\n', r - 1) == NULL);
    }
}

static void check_same(const struct outcome *a, const char *abase, const struct outcome *b,
                       const char *bbase)
{
    FUZZ_CHECK(a->r == b->r && a->reason == b->reason && a->cmd.argc == b->cmd.argc);
    for (size_t i = 0; i < a->cmd.argc; i++) {
        FUZZ_CHECK(a->cmd.argv[i].ptr - abase == b->cmd.argv[i].ptr - bbase);
        FUZZ_CHECK(a->cmd.argv[i].len == b->cmd.argv[i].len);
    }
}

/* Writes the command back as a multibulk and parses that. */
static void check_reencoded(const idms_resp_command *c)
{
    size_t cap = 16;
    for (size_t i = 0; i < c->argc; i++) {
        cap += c->argv[i].len + 16;
    }
    char *buf = malloc(cap);
    FUZZ_CHECK(buf != NULL);
    size_t n = (size_t)snprintf(buf, cap, "*%zu\r\n", c->argc);
    for (size_t i = 0; i < c->argc; i++) {
        n += (size_t)snprintf(buf + n, cap - n, "$%zu\r\n", c->argv[i].len);
        memcpy(buf + n, c->argv[i].ptr, c->argv[i].len);
        n += c->argv[i].len;
        buf[n++] = '\r';
        buf[n++] = '\n';
    }
    fuzz_input in;
    struct outcome o;
    parse_exact(buf, n, &o, &in);
    FUZZ_CHECK(o.r == (ptrdiff_t)n && o.cmd.argc == c->argc);
    for (size_t i = 0; i < c->argc; i++) {
        FUZZ_CHECK(o.cmd.argv[i].len == c->argv[i].len);
        FUZZ_CHECK(memcmp(o.cmd.argv[i].ptr, c->argv[i].ptr, c->argv[i].len) == 0);
    }
    fuzz_input_free(&in);
    free(buf);
}

/* All the properties for the command at text[0..len). Returns its result. */
static ptrdiff_t check_one(const char *text, size_t len)
{
    fuzz_input in;
    struct outcome whole;
    parse_exact(text, len, &whole, &in);
    check_outcome(&whole, in.text, len);
    if (whole.r > 0) {
        fuzz_input again_in;
        struct outcome again;
        parse_exact(in.text, (size_t)whole.r, &again, &again_in);
        check_same(&whole, in.text, &again, again_in.text);
        fuzz_input_free(&again_in);
        check_reencoded(&whole.cmd);
    }
    if (len > 0) {
        size_t ks[6] = {len - 1, len / 2, len / 3, (len * 7) / 8, 0, 0};
        if (whole.r > 0) {
            ks[4] = (size_t)whole.r - 1;
            ks[5] = (size_t)whole.r;
        }
        for (int i = 0; i < 6; i++) {
            fuzz_input pin;
            struct outcome p;
            parse_exact(in.text, ks[i], &p, &pin);
            check_outcome(&p, pin.text, ks[i]);
            if (whole.r > 0 && ks[i] >= (size_t)whole.r) {
                check_same(&whole, in.text, &p, pin.text);
            } else if (p.r != IDMS_RESP_INCOMPLETE) {
                FUZZ_CHECK(whole.r == IDMS_RESP_INVALID);
                FUZZ_CHECK(p.r == whole.r && p.reason == whole.reason);
            }
            fuzz_input_free(&pin);
        }
    }
    fuzz_input_free(&in);
    return whole.r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The input as a pipeline: command after command while they parse. */
    const char *text = (const char *)data;
    size_t pos = 0;
    for (int i = 0; i < 256; i++) {
        ptrdiff_t r = check_one(text + pos, size - pos);
        if (r <= 0) {
            break;
        }
        pos += (size_t)r;
    }
    return 0;
}
