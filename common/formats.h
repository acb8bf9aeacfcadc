/*
 * formats.h - the front ends' view of the library's format table
 * (idmint/format.h) for `idmint gen` and idmintd's /v1/ids/{format} and
 * NEXT. Not library API.
 *
 * The facts are the library's: idmx_formats[] is built from
 * idm_format_at() on first use, entry i from the table's i-th row, so a
 * format is added in the library (its folder and one row) and appears
 * here. What this layer adds is front-end wording: the lists of names in
 * messages (idmx_format_list). The IDMX_FMT_* names index the table in
 * its order, for idmintd's per-format metrics and routes, and
 * tests/unit/test_formats.c checks that each sits at its name.
 */
#ifndef IDMX_FORMATS_H
#define IDMX_FORMATS_H

#include <idmint/format.h>

#include <stdbool.h>
#include <stddef.h>

/* The formats, in the order of the library's table (and of idmintd's
 * metrics). */
enum {
    IDMX_FMT_UUIDV7,
    IDMX_FMT_UUIDV4,
    IDMX_FMT_ULID,
    IDMX_FMT_KSUID,
    IDMX_FMT_SNOWFLAKE,
    IDMX_FMT_TYPEID,
    IDMX_FMT_TOKEN,
    IDMX_FMT_TRACEPARENT,
    IDMX_FMT_COUNT
};

/* Whether a format takes a prefix (--prefix, ?prefix=, NEXT's third
 * argument): the library's rule (IDM_PREFIX_*). */
enum {
    IDMX_PREFIX_NONE = IDM_PREFIX_NONE,         /* refused */
    IDMX_PREFIX_OPTIONAL = IDM_PREFIX_OPTIONAL, /* token: "PREFIX_" + body when given */
    IDMX_PREFIX_REQUIRED = IDM_PREFIX_REQUIRED  /* typeid */
};

typedef struct idmx_format {
    int id;                /* IDMX_FMT_*: the entry's index in idmx_formats */
    const char *name;      /* as written on the command line and in URLs */
    size_t name_len;       /* strlen(name): the lookups by name compare it first */
    int lib_format;        /* the IDM_FORMAT_* code when idm_gen_next_text_n writes it, or 0 */
    size_t text_len;       /* the text's length without a prefix (snowflake: the longest) */
    size_t text_max;       /* the longest text, with the longest prefix */
    bool time_ordered;     /* strictly increasing in its sort order, so it can resume */
    int prefix;            /* IDMX_PREFIX_* */
    const idm_format *lib; /* the library's row, for its entry points */
} idmx_format;

/* The table, indexed by IDMX_FMT_*: idmx_formats[i]. Built from the
 * library's table on the first call. Thread-safe: yes. */
const idmx_format *idmx_format_table(void);
#define idmx_formats (idmx_format_table())

/* The format named by exactly len bytes of s (case-sensitive), or NULL.
 * Thread-safe: yes. */
const idmx_format *idmx_format_by_name(const char *s, size_t len);

/* Which formats idmx_format_list names. */
enum {
    IDMX_LIST_ALL = 0,
    IDMX_LIST_PREFIXED = 1u << 0,    /* only those that take a prefix */
    IDMX_LIST_TIME_ORDERED = 1u << 1 /* only the time-ordered ones */
};

/* Writes the names of the formats that flags selects, in table order, for
 * messages, with conj ("or", "and") before the last: "uuidv7, uuidv4,
 * ..., token or traceparent"; "typeid and token"; and a NUL. Returns the
 * length, or (size_t)-1 when cap is too small (dst is then "").
 * IDMX_FORMAT_LIST_CAP is always enough. Thread-safe: yes. */
#define IDMX_FORMAT_LIST_CAP 128
size_t idmx_format_list(char *dst, size_t cap, unsigned flags, const char *conj);

/* Writes the names of idm_inspect's kinds (IDM_KIND_*, idm_kind_name),
 * for messages: "uuid, ulid, ksuid, typeid or snowflake" with conj "or",
 * and a NUL. Returns as idmx_format_list; IDMX_FORMAT_LIST_CAP is always
 * enough. Thread-safe: yes. */
size_t idmx_kind_list(char *dst, size_t cap, const char *conj);

#endif
