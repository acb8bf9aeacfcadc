/*
 * fuzz/fuzz_config.c - idms_config_parse (server/config/config_parser.h) on
 * arbitrary bytes.
 *
 * Properties:
 *  - every entry has a key of [a-z0-9-]+ inside the text, a NUL-terminated
 *    value of at most IDMS_CONFIG_MAX_LINE bytes with no NUL or control
 *    character but HTAB, and a line number that does not go down and is
 *    within the text;
 *  - the result is 0 with *line the number of lines, or -1 with a reason
 *    and the line of the error; the reason is NUL-terminated in every
 *    err_cap, which is never written past (err is an allocation of exactly
 *    err_cap bytes);
 *  - the entries, written back as `key = "value"` lines, parse to the same
 *    entries;
 *  - a callback that stops at entry k stops the parse there, with its value
 *    and the entry's line.
 */
#include "harness.h"

#include "config/config_parser.h"

struct entry {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    unsigned line;
};

struct collected {
    const char *text; /* the parsed text, for the key's position; NULL: do not check */
    size_t len;
    struct entry *e;
    size_t n;
    size_t cap;
    size_t stop_at; /* entry number (from 1) whose callback returns 5; 0: none */
};

static int collect(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len,
                   unsigned line)
{
    struct collected *c = ctx;
    FUZZ_CHECK(key_len > 0);
    if (c->text != NULL) {
        FUZZ_CHECK(key >= c->text && key_len <= c->len - (size_t)(key - c->text));
    }
    for (size_t i = 0; i < key_len; i++) {
        char k = key[i];
        FUZZ_CHECK((k >= 'a' && k <= 'z') || (k >= '0' && k <= '9') || k == '-');
    }
    FUZZ_CHECK(value_len <= IDMS_CONFIG_MAX_LINE && value[value_len] == '\0');
    for (size_t i = 0; i < value_len; i++) {
        unsigned char v = (unsigned char)value[i];
        FUZZ_CHECK(v == '\t' || (v >= 0x20 && v != 0x7F));
    }
    FUZZ_CHECK(line >= 1);
    FUZZ_CHECK(c->n == 0 || line > c->e[c->n - 1].line);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->e = realloc(c->e, c->cap * sizeof *c->e);
        FUZZ_CHECK(c->e != NULL);
    }
    struct entry *e = &c->e[c->n++];
    e->key = malloc(key_len);
    e->value = malloc(value_len + 1);
    FUZZ_CHECK(e->key != NULL && e->value != NULL);
    memcpy(e->key, key, key_len);
    memcpy(e->value, value, value_len + 1);
    e->key_len = key_len;
    e->value_len = value_len;
    e->line = line;
    return c->n == c->stop_at ? 5 : 0;
}

static void collected_free(struct collected *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].key);
        free(c->e[i].value);
    }
    free(c->e);
}

/* Lines in text[0..len) as the parser counts them: after a UTF-8 BOM, one
 * per LF, plus an unterminated last line. */
static unsigned count_lines(const char *text, size_t len)
{
    size_t pos = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    unsigned n = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        n++;
        pos = nl ? (size_t)(nl - text) + 1 : len;
    }
    return n;
}

/* Parses with an err of exactly err_cap bytes (NULL when 0). */
static int parse(const char *text, size_t len, struct collected *c, unsigned *line, size_t err_cap,
                 char *err_copy, size_t copy_cap)
{
    char *err = err_cap > 0 ? malloc(err_cap) : NULL;
    FUZZ_CHECK(err_cap == 0 || err != NULL);
    if (err != NULL) {
        memset(err, 'J', err_cap);
    }
    int rc = idms_config_parse(text, len, collect, c, line, err, err_cap);
    if (err != NULL) {
        FUZZ_CHECK(memchr(err, '\0', err_cap) != NULL);
        if (rc != -1) {
            FUZZ_CHECK(err[0] == '\0');
        }
        if (err_copy != NULL) {
            snprintf(err_copy, copy_cap, "%s", err);
        }
        free(err);
    }
    return rc;
}

/* Writes the entries as `key = "value"` lines and parses them back. */
static void check_rewritten(const struct collected *c)
{
    size_t cap = 1;
    for (size_t i = 0; i < c->n; i++) {
        cap += c->e[i].key_len + 2 * c->e[i].value_len + 8;
    }
    char *text = malloc(cap);
    FUZZ_CHECK(text != NULL);
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t start = n;
        memcpy(text + n, c->e[i].key, c->e[i].key_len);
        n += c->e[i].key_len;
        memcpy(text + n, " = \"", 4);
        n += 4;
        for (size_t k = 0; k < c->e[i].value_len; k++) {
            char v = c->e[i].value[k];
            if (v == '"' || v == '\\') {
                text[n++] = '\\';
            }
            text[n++] = v;
        }
        text[n++] = '"';
        if (n - start > IDMS_CONFIG_MAX_LINE) {
            free(text);
            return; /* escaping made the line too long: nothing to compare */
        }
        text[n++] = '\n';
    }
    fuzz_input in;
    fuzz_input_new(&in, (const uint8_t *)text, n);
    struct collected back = {in.text, in.len, NULL, 0, 0, 0};
    unsigned line = 0;
    FUZZ_CHECK(parse(in.text, in.len, &back, &line, 0, NULL, 0) == 0);
    FUZZ_CHECK(back.n == c->n && line == c->n);
    for (size_t i = 0; i < c->n; i++) {
        FUZZ_CHECK(back.e[i].key_len == c->e[i].key_len);
        FUZZ_CHECK(memcmp(back.e[i].key, c->e[i].key, c->e[i].key_len) == 0);
        FUZZ_CHECK(back.e[i].value_len == c->e[i].value_len);
        FUZZ_CHECK(memcmp(back.e[i].value, c->e[i].value, c->e[i].value_len) == 0);
        FUZZ_CHECK(back.e[i].line == i + 1);
    }
    collected_free(&back);
    fuzz_input_free(&in);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    unsigned lines = count_lines(in.text, in.len);

    struct collected c = {in.text, in.len, NULL, 0, 0, 0};
    unsigned line = 12345;
    char err[256];
    int rc = parse(in.text, in.len, &c, &line, sizeof err, err, sizeof err);
    if (rc == 0) {
        FUZZ_CHECK(line == lines);
        FUZZ_CHECK(in.len <= IDMS_CONFIG_MAX_FILE);
        check_rewritten(&c);
    } else {
        FUZZ_CHECK(rc == -1);
        FUZZ_CHECK(err[0] != '\0');
        if (in.len > IDMS_CONFIG_MAX_FILE) {
            FUZZ_CHECK(line == 0 && c.n == 0);
        } else {
            FUZZ_CHECK(line >= 1 && line <= lines);
            FUZZ_CHECK(c.n == 0 || c.e[c.n - 1].line < line);
        }
    }
    if (c.n > 0) {
        FUZZ_CHECK(c.e[c.n - 1].line <= lines);
    }

    /* Small error buffers, and none; the same answer each time. */
    size_t caps[3] = {0, 1, 1 + size % 40};
    for (int i = 0; i < 3; i++) {
        struct collected again = {in.text, in.len, NULL, 0, 0, 0};
        unsigned again_line = 0;
        FUZZ_CHECK(parse(in.text, in.len, &again, &again_line, caps[i], NULL, 0) == rc);
        FUZZ_CHECK(again_line == line && again.n == c.n);
        collected_free(&again);
    }

    /* A callback that stops half-way. */
    if (c.n > 0) {
        struct collected stop = {in.text, in.len, NULL, 0, 0, (c.n + 1) / 2};
        unsigned stop_line = 0;
        FUZZ_CHECK(parse(in.text, in.len, &stop, &stop_line, sizeof err, NULL, 0) == 5);
        FUZZ_CHECK(stop.n == (c.n + 1) / 2);
        FUZZ_CHECK(stop_line == c.e[stop.n - 1].line);
        collected_free(&stop);
    }

    collected_free(&c);
    fuzz_input_free(&in);
    return 0;
}
