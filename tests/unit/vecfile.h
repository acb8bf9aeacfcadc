/*
 * vecfile.h - reads the line-based vector files in tests/vectors/ (format:
 * tests/vectors/README.md). Header-only, for the unit tests here.
 *
 *   struct vec_file v;
 *   if (!vec_open(&v, "ulid.txt"))
 *       TEST_FAIL_("cannot open %s", v.path);
 *   while (vec_next(&v) > 0) {
 *       if (vec_is(&v, 0, "ok")) ... v.fields[1].s, v.fields[1].len ...
 *   }
 *   vec_close(&v);
 *
 * Fields are unescaped in place and NUL-terminated, but may contain NUL
 * bytes themselves (\x00), so use their len.
 */
#ifndef IDM_TEST_VECFILE_H
#define IDM_TEST_VECFILE_H

#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VEC_MAX_FIELDS 10
#define VEC_LINE_CAP   1024

struct vec_field {
    char *s;
    size_t len;
};

struct vec_file {
    FILE *f;
    char path[512];
    int line_no;
    int records;
    char line[VEC_LINE_CAP];
    struct vec_field fields[VEC_MAX_FIELDS];
    int n;
};

/* Opens name in the vectors directory (test_vectors_dir()). 0 on failure,
 * with v->path naming the file. */
static inline int vec_open(struct vec_file *v, const char *name)
{
    memset(v, 0, sizeof *v);
    snprintf(v->path, sizeof v->path, "%s/%s", test_vectors_dir(), name);
    v->f = fopen(v->path, "r");
    return v->f != NULL;
}

static inline void vec_close(struct vec_file *v)
{
    if (v->f != NULL)
        fclose(v->f);
    v->f = NULL;
}

static inline int vec_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescapes [s, s + n) in place; returns the new length, or (size_t)-1 for
 * a malformed escape. */
static inline size_t vec_unescape(char *s, size_t n)
{
    if (n == 2 && s[0] == '"' && s[1] == '"')
        return 0;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            s[out++] = s[i];
            continue;
        }
        if (i + 1 < n && s[i + 1] == '\\') {
            s[out++] = '\\';
            i++;
            continue;
        }
        if (i + 3 < n && s[i + 1] == 'x' && vec_hex_digit(s[i + 2]) >= 0 &&
            vec_hex_digit(s[i + 3]) >= 0) {
            s[out++] = (char)(vec_hex_digit(s[i + 2]) * 16 + vec_hex_digit(s[i + 3]));
            i += 3;
            continue;
        }
        return (size_t)-1;
    }
    return out;
}

/* Reads the next record: returns its field count, 0 at the end of the
 * file, -1 for a malformed line (too long, too many fields, bad escape). */
static inline int vec_next(struct vec_file *v)
{
    while (fgets(v->line, sizeof v->line, v->f) != NULL) {
        v->line_no++;
        size_t len = strlen(v->line);
        if (len > 0 && v->line[len - 1] != '\n' && !feof(v->f))
            return -1;
        char *p = v->line;
        v->n = 0;
        while (*p != '\0') {
            while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
            if (*p == '\0' || (v->n == 0 && *p == '#'))
                break;
            if (v->n == VEC_MAX_FIELDS)
                return -1;
            char *start = p;
            while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                p++;
            char *end = p;
            if (*p != '\0')
                p++;
            size_t n = vec_unescape(start, (size_t)(end - start));
            if (n == (size_t)-1)
                return -1;
            start[n] = '\0';
            v->fields[v->n].s = start;
            v->fields[v->n].len = n;
            v->n++;
        }
        if (v->n > 0) {
            v->records++;
            return v->n;
        }
    }
    return 0;
}

/* Field i equals the text s. */
static inline int vec_is(const struct vec_file *v, int i, const char *s)
{
    return i < v->n && v->fields[i].len == strlen(s) &&
           memcmp(v->fields[i].s, s, v->fields[i].len) == 0;
}

/* Field i as a signed integer ('-' is not a number: check vec_is first). */
static inline long long vec_ll(const struct vec_file *v, int i)
{
    return strtoll(v->fields[i].s, NULL, 10);
}

/* Parses 2n hex digits of field i into out; 0 if the field is malformed. */
static inline int vec_hex(const struct vec_file *v, int i, unsigned char *out, size_t n)
{
    const char *s = v->fields[i].s;
    if (v->fields[i].len != 2 * n)
        return 0;
    for (size_t k = 0; k < n; k++) {
        int hi = vec_hex_digit(s[2 * k]);
        int lo = vec_hex_digit(s[2 * k + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        out[k] = (unsigned char)(hi * 16 + lo);
    }
    return 1;
}

/* Checks every "bad" record of the vector file name: records of the form
 * `bad ... TEXT OFFSET`, with TEXT in field text_field and nothing after
 * OFFSET. parse, given a copy of TEXT of exactly its length
 * (test_exact_copy), must return IDM_EPARSE, set err->code to IDM_EPARSE and
 * err->offset to OFFSET, and leave the out_size bytes at out alone. Records
 * of other kinds are skipped. Returns the number of bad records, or -1
 * after reporting the first failure (TEST_REPORT_); v is left closed, with
 * v->records counting every record. */
static inline int vec_check_bad(struct vec_file *v, const char *name, int text_field,
                                test_parse_fn parse, void *out, size_t out_size)
{
    int bad = 0, n;
    if (!vec_open(v, name)) {
        TEST_REPORT_("cannot open %s", v->path);
        return -1;
    }
    for (n = vec_next(v); n > 0; n = vec_next(v)) {
        if (!vec_is(v, 0, "bad"))
            continue;
        if (n != text_field + 2) {
            TEST_REPORT_("%s:%d: expected %d fields", v->path, v->line_no, text_field + 2);
            break;
        }
        const struct vec_field *text = &v->fields[text_field];
        long long want = vec_ll(v, text_field + 1);
        idm_error err;
        memset(&err, 0, sizeof err);
        /* A failed parse must not write its output. */
        memset(out, 0xa5, out_size);
        char *copy = test_exact_copy(text->s, text->len);
        int rc = parse(copy, text->len, out, &err);
        free(copy);
        if (rc != IDM_EPARSE || err.code != IDM_EPARSE || (long long)err.offset != want) {
            TEST_REPORT_("%s:%d: rc %d, offset %zu (want %lld): %s", v->path, v->line_no, rc,
                         err.offset, want, err.msg);
            break;
        }
        size_t i = 0;
        while (i < out_size && ((const unsigned char *)out)[i] == 0xa5)
            i++;
        if (i < out_size) {
            TEST_REPORT_("%s:%d: the failed parse wrote byte %zu of its output", v->path,
                         v->line_no, i);
            break;
        }
        bad++;
    }
    if (n < 0)
        TEST_REPORT_("%s:%d: malformed line", v->path, v->line_no);
    vec_close(v);
    return n == 0 ? bad : -1;
}

/* Calls check on every record of the vector file name whose first field
 * is kind, each of which must have n_fields fields. Records whose first
 * field is skip (NULL: none; "bad" for the files vec_check_bad also reads)
 * are passed over; any other record is malformed. check uses the ASSERT_
 * macros on v; the walk ends at its first failure, naming the record.
 * Returns the number of records checked, or -1 after reporting a failure;
 * v is left closed. */
static inline int vec_each(struct vec_file *v, const char *name, const char *kind, int n_fields,
                           const char *skip, void (*check)(const struct vec_file *v))
{
    int count = 0, n;
    if (!vec_open(v, name)) {
        TEST_REPORT_("cannot open %s", v->path);
        return -1;
    }
    for (n = vec_next(v); n > 0; n = vec_next(v)) {
        if (skip != NULL && vec_is(v, 0, skip))
            continue;
        if (!vec_is(v, 0, kind) || n != n_fields) {
            TEST_REPORT_("%s:%d: malformed record", v->path, v->line_no);
            break;
        }
        int before = test_failures_;
        check(v);
        if (test_failures_ != before) {
            TEST_REPORT_("%s:%d: this record failed", v->path, v->line_no);
            break;
        }
        count++;
    }
    if (n < 0)
        TEST_REPORT_("%s:%d: malformed line", v->path, v->line_no);
    vec_close(v);
    return n == 0 ? count : -1;
}

#endif
