/*
 * idmint/segstore.h - segment stores: the database row per tag from which
 * Leaf-style segments (<idmint/segment.h>) lease ranges of IDs. A
 * component of its own, idmint_segstore (segstore/; libidmint_segstore.a
 * and idmint-segstore.pc, which brings the clients' libraries), beside
 * libidmint, which stays OpenSSL-only: the database clients live here.
 * docs/segments.md has the design.
 *
 * A store URL names the database:
 *
 *   sqlite:PATH              an SQLite file (the embedded default; created
 *                            when missing, with its directory's
 *                            permissions), segstore_sqlite.c; a file
 *                            with no write permission bits (even for
 *                            root), or in a directory this process may
 *                            not write, is opened read-only
 *   postgresql://...         a libpq connection URI (postgres:// too),
 *                            segstore_pg.c
 *
 * Both keep one table, created on first use (CREATE TABLE IF NOT EXISTS):
 *
 *   idmint_segments(tag TEXT PRIMARY KEY, next_id BIGINT, step BIGINT,
 *                   stride BIGINT, "offset" BIGINT, max_step BIGINT,
 *                   leases BIGINT, created_ms BIGINT, updated_ms BIGINT)
 *
 * (every BIGINT NOT NULL). A store reached through a read-only file or a
 * role that may only SELECT opens, shows and lists; creates and leases
 * return IDMSEG_EREADONLY.
 *
 * next_id is the first ID not yet leased (always congruent to offset
 * modulo stride). A lease of count IDs is one atomic statement,
 *
 *   UPDATE idmint_segments SET next_id = next_id + count * stride,
 *          leases = leases + 1, updated_ms = NOW
 *    WHERE tag = $1 AND count <= (2^63 - 1 - next_id) / stride
 *   RETURNING next_id - count * stride, stride
 *
 * (inside BEGIN IMMEDIATE on SQLite, with a busy timeout, so that several
 * processes on one file queue rather than fail), so that two servers on
 * one store never get overlapping ranges, and what was leased but not
 * handed out before a crash is simply never used.
 *
 * Tag names are 1 to IDMSEG_TAG_MAX (128) bytes of A-Z, a-z, 0-9 and
 * _ . - : @ { } | + ~ (idmseg_tag_valid), case-sensitive: Leaf's
 * varchar(128) biz_tag ("Orders") and Redis-style keys ("order:id",
 * "{user}:seq") fit, and nothing that JSON, a Prometheus label or a URL
 * path segment must escape does. The calls below take them as C strings.
 *
 * Calls block on the database (each bounded: a connect timeout, SQLite's
 * busy timeout): callers run them off any event loop. One store handle is
 * used by one thread at a time.
 *
 * Errors (docs/CONTRIBUTING.md, "Errors"): a call returns 0 or a positive
 * IDMSEG_E* code, and, when the caller passes an idmseg_error (NULL is
 * allowed), fills it with the code and a NUL-terminated message saying
 * what happened and which database, written only when the call fails (a
 * successful call leaves it as it was).
 */
#ifndef IDMINT_SEGSTORE_H
#define IDMINT_SEGSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results: 0 or one of these. The list is append-only: a code is never
 * renumbered or reused (the numbers are those the codes had as IDMC_* in
 * idmint_coord; 1 and 3 are the leases' own there). */
enum {
    IDMSEG_OK = 0,
    IDMSEG_EDB = 2,      /* the database could not be reached or failed: try again */
    IDMSEG_EUSAGE = 4,   /* a bad URL, tag or value: trying again will not help */
    IDMSEG_ENOTAG = 5,   /* no such tag in the store */
    IDMSEG_EEXISTS = 6,  /* idmseg_store_create: the tag exists already */
    IDMSEG_EREADONLY = 7 /* the store cannot be written (a read-only file or role) */
};

#define IDMSEG_ERR_CAP 512

/* One failure: its code and what happened (the caller's; see "Errors"). */
typedef struct idmseg_error {
    int code;
    char msg[IDMSEG_ERR_CAP];
} idmseg_error;

/* Fixed text for a code ("unknown error" for others). The string is
 * static. Thread-safe: yes (pure function). */
const char *idmseg_strerror(int code);

#define IDMSEG_TAG_MAX 128

typedef struct idmseg_store idmseg_store;

/* A tag as idmseg_store_create makes it. Every field is taken as given (a
 * zero is not "the default": a step or stride of 0 is refused); start from
 * IDMSEG_TAG_SPEC_DEFAULTS to change a few. Each value is at most 2^63 - 1
 * (the store's BIGINT). */
typedef struct idmseg_tag_spec {
    uint64_t first;    /* the first ID (default 1); rounded up to offset mod stride */
    uint64_t step;     /* the step a server starts with (default 1000) */
    uint64_t max_step; /* the dynamic step's bound (default 1,000,000, at least step) */
    uint64_t stride;   /* default 1 */
    uint64_t offset;   /* < stride (default 0) */
} idmseg_tag_spec;

/* The defaults, as an initializer: idmseg_tag_spec s = IDMSEG_TAG_SPEC_DEFAULTS; */
#define IDMSEG_TAG_SPEC_DEFAULTS                                                                   \
    {                                                                                              \
        .first = 1, .step = 1000, .max_step = 1000000, .stride = 1, .offset = 0                    \
    }

/* A tag as the store holds it. */
typedef struct idmseg_tag_info {
    char tag[IDMSEG_TAG_MAX + 1];
    uint64_t next_id; /* the first ID not yet leased */
    uint64_t step, max_step, stride, offset;
    uint64_t leases; /* ranges leased so far */
    int64_t created_ms, updated_ms; /* Unix ms */
} idmseg_tag_info;

/* Whether the len bytes at tag are a safe tag name, each byte checked (a
 * NUL is a byte like any other, refused: "a\0b" is not "a"); when not, err
 * (NULL allowed) gets IDMSEG_EUSAGE and says why: the first byte outside
 * the rule and its position, e.g. "byte 0x00 at 1 is not allowed (only
 * A-Z, a-z, 0-9 and _ . - : @ { } | + ~)", never the name itself. Every front end (the
 * CLI, the stores, idmintd's RESP and HTTP routes) checks with this one
 * rule. */
bool idmseg_tag_valid(const char *tag, size_t len, idmseg_error *err);

/* Opens the store at url (connecting, and creating the table when it is
 * missing). 0 with *out, IDMSEG_EUSAGE (a URL that is neither), IDMSEG_EDB
 * (cannot connect, cannot create the table), IDMSEG_EREADONLY (the table is
 * missing and cannot be made). */
int idmseg_store_open(const char *url, idmseg_store **out, idmseg_error *err);
/* "sqlite" or "postgresql". */
const char *idmseg_store_kind(const idmseg_store *st);
/* NULL is ignored. */
void idmseg_store_close(idmseg_store *st);

/* Creates tag with spec (NULL: the defaults), its next_id spec->first
 * rounded up to offset modulo stride. IDMSEG_EEXISTS when it exists (the row
 * is left as it was), IDMSEG_EUSAGE for a bad name or values (stride 0,
 * offset >= stride, a step of 0 or above max_step, a value or the rounded
 * first above 2^63 - 1), IDMSEG_EREADONLY, IDMSEG_EDB. */
int idmseg_store_create(idmseg_store *st, const char *tag, const idmseg_tag_spec *spec,
                        idmseg_error *err);

/* Leases count IDs of tag (one atomic statement): *first, *first + *stride,
 * ..., *first + (count - 1) * *stride are the caller's. The tag's step and
 * max_step stay as created (the dynamic step is each server's, in memory:
 * idm_segment_step). 0; IDMSEG_ENOTAG;
 * IDMSEG_EUSAGE (a bad tag name, count 0, or a lease after which next_id
 * would pass 2^63 - 1: the tag is used up: the message says "tag T is used up");
 * IDMSEG_EREADONLY; IDMSEG_EDB. A lease that failed with
 * IDMSEG_EDB may or may not have been applied: its IDs are then lost,
 * never handed out twice. */
int idmseg_store_lease(idmseg_store *st, const char *tag, uint64_t count, uint64_t *first,
                       uint64_t *stride, idmseg_error *err);

/* One tag. 0 with *out, IDMSEG_ENOTAG, IDMSEG_EUSAGE (a bad tag name),
 * IDMSEG_EDB. */
int idmseg_store_show(idmseg_store *st, const char *tag, idmseg_tag_info *out, idmseg_error *err);

/* Every tag in name order: calls fn for each. Returns the number of tags,
 * or -1 with err filled (IDMSEG_EDB). */
int idmseg_store_list(idmseg_store *st, void (*fn)(void *ctx, const idmseg_tag_info *tag),
                      void *ctx, idmseg_error *err);

#ifdef __cplusplus
}
#endif

#endif
