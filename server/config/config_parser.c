/*
 * server/config/config_parser.c - the config file syntax declared in
 * config_parser.h: "key = value" lines, comments, quoted values.
 *
 * Each line is checked as a whole for control characters first, then split
 * into key and value; a quoted value is decoded into a scratch buffer on the
 * stack, which a line's length bounds.
 *
 * Left out: sections, includes, multi-line values, escapes other than \"
 * and \\ (a Windows path in quotes needs its backslashes doubled).
 */
#include "config/config_parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* An entry found on one line. */
struct entry {
    const char *key;
    size_t key_len;
    size_t value_len; /* in the scratch buffer */
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(char *err, size_t err_cap, const char *fmt, ...)
{
    if (err != NULL && err_cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int is_blank(unsigned char ch)
{
    return ch == ' ' || ch == '\t';
}

static int is_key_char(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
}

/* Describes byte ch for a message: "'x'" or "0x1f". */
static void describe(unsigned char ch, char *out, size_t cap)
{
    if (ch > 0x20 && ch < 0x7F) {
        snprintf(out, cap, "'%c'", ch);
    } else {
        snprintf(out, cap, "0x%02x", ch);
    }
}

/* The quoted value at s[i..n), s[i] == '"': decoded into scratch. */
static int quoted_value(const char *s, size_t n, size_t i, char *scratch, size_t *value_len,
                        char *err, size_t err_cap)
{
    size_t col = i + 1;
    size_t out = 0;
    i++;
    for (;;) {
        if (i == n) {
            return fail(err, err_cap, "unterminated quoted value (opened at column %zu)", col);
        }
        char ch = s[i];
        if (ch == '"') {
            break;
        }
        if (ch == '\\') {
            if (i + 1 == n) {
                return fail(err, err_cap, "unterminated quoted value (opened at column %zu)", col);
            }
            char next = s[i + 1];
            if (next != '"' && next != '\\') {
                char what[8];
                describe((unsigned char)next, what, sizeof what);
                return fail(err, err_cap,
                            "unknown escape \\%s at column %zu (only \\\" and \\\\ are escapes)",
                            what, i + 1);
            }
            ch = next;
            i++;
        }
        scratch[out++] = ch;
        i++;
    }
    i++; /* the closing quote */
    while (i < n && is_blank((unsigned char)s[i])) {
        i++;
    }
    if (i < n && s[i] != '#') {
        return fail(err, err_cap, "unexpected text after the closing quote at column %zu", i + 1);
    }
    scratch[out] = '\0';
    *value_len = out;
    return 0;
}

/* Parses one line s[0..n) (without its line end). Returns 1 with *e filled
 * for an entry, 0 for a blank or comment line, -1 for an error. */
static int parse_line(const char *s, size_t n, struct entry *e, char *scratch, char *err,
                      size_t err_cap)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch < 0x20 && ch != '\t') || ch == 0x7F) {
            return fail(err, err_cap, "control character 0x%02x at column %zu", ch, i + 1);
        }
    }
    size_t i = 0;
    while (i < n && is_blank((unsigned char)s[i])) {
        i++;
    }
    if (i == n || s[i] == '#') {
        return 0;
    }
    size_t key_start = i;
    while (i < n && is_key_char((unsigned char)s[i])) {
        i++;
    }
    if (i < n && !is_blank((unsigned char)s[i]) && s[i] != '=') {
        char what[8];
        describe((unsigned char)s[i], what, sizeof what);
        return fail(err, err_cap,
                    "invalid character %s in key at column %zu (keys are lowercase letters, "
                    "digits and '-')",
                    what, i + 1);
    }
    if (i == key_start) {
        return fail(err, err_cap, "missing key before '=' at column %zu", i + 1);
    }
    e->key = s + key_start;
    e->key_len = i - key_start;

    while (i < n && is_blank((unsigned char)s[i])) {
        i++;
    }
    int have_equals = 0;
    if (i < n && s[i] == '=') {
        have_equals = 1;
        i++;
        while (i < n && is_blank((unsigned char)s[i])) {
            i++;
        }
    }
    if (i < n && s[i] == '"') {
        return quoted_value(s, n, i, scratch, &e->value_len, err, err_cap) == 0 ? 1 : -1;
    }
    /* Unquoted: up to a '#' that starts the value or follows a blank. */
    size_t start = i;
    size_t end = i;
    while (i < n) {
        if (s[i] == '#' && (i == start || is_blank((unsigned char)s[i - 1]))) {
            break;
        }
        i++;
        if (!is_blank((unsigned char)s[i - 1])) {
            end = i;
        }
    }
    if (end == start && !have_equals) {
        return fail(err, err_cap, "missing value for '%.*s' (write \"%.*s = value\")",
                    (int)e->key_len, e->key, (int)e->key_len, e->key);
    }
    memcpy(scratch, s + start, end - start);
    scratch[end - start] = '\0';
    e->value_len = end - start;
    return 1;
}

int idms_config_parse(const char *text, size_t len, idms_config_cb cb, void *ctx, unsigned *line,
                      char *err, size_t err_cap)
{
    char scratch[IDMS_CONFIG_MAX_LINE + 1];
    unsigned lineno = 0;
    int rc = 0;
    if (err != NULL && err_cap > 0) {
        err[0] = '\0';
    }
    if (len > IDMS_CONFIG_MAX_FILE) {
        rc = fail(err, err_cap, "config file is larger than %u bytes",
                  (unsigned)IDMS_CONFIG_MAX_FILE);
        goto out;
    }
    size_t pos = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        pos = 3;
    }
    while (pos < len) {
        lineno++; /* at most IDMS_CONFIG_MAX_FILE lines: no wrap */
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t line_end = nl != NULL ? (size_t)(nl - text) : len;
        size_t next = nl != NULL ? line_end + 1 : len;
        size_t content_end = line_end;
        if (content_end > pos && text[content_end - 1] == '\r') {
            content_end--;
        }
        if (content_end - pos > IDMS_CONFIG_MAX_LINE) {
            rc = fail(err, err_cap, "line is longer than %u bytes", (unsigned)IDMS_CONFIG_MAX_LINE);
            goto out;
        }
        struct entry e = {NULL, 0, 0};
        int got = parse_line(text + pos, content_end - pos, &e, scratch, err, err_cap);
        if (got < 0) {
            rc = -1;
            goto out;
        }
        if (got > 0) {
            rc = cb(ctx, e.key, e.key_len, scratch, e.value_len, lineno);
            if (rc != 0) {
                goto out;
            }
        }
        pos = next;
    }
out:
    if (line != NULL) {
        *line = lineno;
    }
    return rc;
}
