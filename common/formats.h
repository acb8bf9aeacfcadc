/*
 * formats.h - the one table of the ID formats that the front ends mint
 * (man/idmint.1, "gen"; idmintd's /v1/ids/{format} and NEXT). Not library
 * API.
 *
 * `idmint gen`, idmintd's routes and its per-format metrics all index this
 * table, so a format is added here once: its name, the library's
 * IDM_FORMAT_* code when idm_gen_next_text_n writes it, its text length,
 * whether it is time-ordered and whether it takes a prefix.
 */
#ifndef IDMX_FORMATS_H
#define IDMX_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

/* The formats, in the order of the table (and of idmintd's metrics). */
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
 * argument). */
enum {
    IDMX_PREFIX_NONE = 0,     /* refused */
    IDMX_PREFIX_OPTIONAL = 1, /* token: "PREFIX_" + body when given */
    IDMX_PREFIX_REQUIRED = 2  /* typeid */
};

typedef struct idmx_format {
    int id;            /* IDMX_FMT_*: the entry's index in idmx_formats */
    const char *name;  /* as written on the command line and in URLs */
    int lib_format;    /* IDM_FORMAT_* for idm_gen_next_text_n, or 0 */
    size_t text_len;   /* the text's length without a prefix (snowflake: the
                          longest, 20 digits) */
    size_t text_max;   /* the longest text, with the longest prefix */
    bool time_ordered; /* strictly increasing in its sort order (idmint(1)),
                          so it can resume from a state file */
    int prefix;        /* IDMX_PREFIX_* */
} idmx_format;

/* Indexed by IDMX_FMT_*. */
extern const idmx_format idmx_formats[IDMX_FMT_COUNT];

/* The format named by exactly len bytes of s (case-sensitive), or NULL.
 * Thread-safe: yes (pure function). */
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
 * IDMX_FORMAT_LIST_CAP is always enough. Thread-safe: yes (pure
 * function). */
#define IDMX_FORMAT_LIST_CAP 128
size_t idmx_format_list(char *dst, size_t cap, unsigned flags, const char *conj);

#endif
