/*
 * vecfile.h - reads the line-based vector files in this directory (format:
 * README.md here). Header-only, for the unit tests in tests/unit/, which
 * include it as "../vectors/vecfile.h".
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

#endif
