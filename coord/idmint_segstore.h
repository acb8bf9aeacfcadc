/*
 * idmint_segstore.h - segment stores: the database row per tag from which
 * Leaf-style segments (<idmint/segment.h>) lease ranges of IDs. Part of
 * idmint_coord, beside the coordinators (the database clients live here,
 * not in libidmint). docs/segments.md has the design.
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
 * return IDMC_READONLY.
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
 * Tag names are safe identifiers: [a-z0-9_.-], 1 to 64 bytes (idmc_tag_valid);
 * the calls below take them as C strings.
 *
 * Calls block on the database (each bounded: a connect timeout, SQLite's
 * busy timeout): callers run them off any event loop. One store handle is
 * used by one thread at a time.
 *
 * Results: 0, or (from idmint_coord.h) IDMC_ERROR (the database could not
 * be reached or failed: msg says how; try again), IDMC_USAGE (a bad URL,
 * tag or value: trying again will not help), or one of these.
 */
#ifndef IDMINT_SEGSTORE_H
#define IDMINT_SEGSTORE_H

#include "idmint_coord.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    IDMC_NOTAG = 5,   /* no such tag in the store */
    IDMC_EXISTS = 6,  /* idmc_store_create: the tag exists already */
    IDMC_READONLY = 7 /* the store cannot be written (a read-only file or role) */
};

#define IDMC_TAG_MAX 64

typedef struct idmc_store idmc_store;

/* A tag as idmc_store_create makes it. Every field is taken as given (a
 * zero is not "the default": a step or stride of 0 is refused); start from
 * IDMC_TAG_SPEC_DEFAULTS to change a few. Each value is at most 2^63 - 1
 * (the store's BIGINT). */
typedef struct idmc_tag_spec {
    uint64_t first;    /* the first ID (default 1); rounded up to offset mod stride */
    uint64_t step;     /* the step a server starts with (default 1000) */
    uint64_t max_step; /* the dynamic step's bound (default 1,000,000, at least step) */
    uint64_t stride;   /* default 1 */
    uint64_t offset;   /* < stride (default 0) */
} idmc_tag_spec;

/* The defaults, as an initializer: idmc_tag_spec s = IDMC_TAG_SPEC_DEFAULTS; */
#define IDMC_TAG_SPEC_DEFAULTS                                                                     \
    {                                                                                              \
        .first = 1, .step = 1000, .max_step = 1000000, .stride = 1, .offset = 0                    \
    }

/* A tag as the store holds it. */
typedef struct idmc_tag_info {
    char tag[IDMC_TAG_MAX + 1];
    uint64_t next_id; /* the first ID not yet leased */
    uint64_t step, max_step, stride, offset;
    uint64_t leases; /* ranges leased so far */
    int64_t created_ms, updated_ms; /* Unix ms */
} idmc_tag_info;

/* Whether the len bytes at tag are a safe tag name, each byte checked (a
 * NUL is a byte like any other, refused: "a\0b" is not "a"); when not, msg
 * says why: the first byte outside the rule and its position, e.g. "byte
 * 0x00 at 1 is not allowed (only a-z, 0-9, '_', '.', '-')", never the name
 * itself. Every front end (the CLI, the stores, idmintd's RESP and HTTP
 * routes) checks with this one rule. */
bool idmc_tag_valid(const char *tag, size_t len, char *msg, size_t cap);

/* Opens the store at url (connecting, and creating the table when it is
 * missing). 0 with *out, IDMC_USAGE (a URL that is neither), IDMC_ERROR
 * (cannot connect, cannot create the table), IDMC_READONLY (the table is
 * missing and cannot be made). */
int idmc_store_open(const char *url, idmc_store **out, char *msg, size_t cap);
/* "sqlite" or "postgresql". */
const char *idmc_store_kind(const idmc_store *st);
/* NULL is ignored. */
void idmc_store_close(idmc_store *st);

/* Creates tag with spec (NULL: the defaults), its next_id spec->first
 * rounded up to offset modulo stride. IDMC_EXISTS when it exists (the row
 * is left as it was), IDMC_USAGE for a bad name or values (stride 0,
 * offset >= stride, a step of 0 or above max_step, a value or the rounded
 * first above 2^63 - 1), IDMC_READONLY, IDMC_ERROR. */
int idmc_store_create(idmc_store *st, const char *tag, const idmc_tag_spec *spec, char *msg,
                      size_t cap);

/* Leases count IDs of tag (one atomic statement): *first, *first + *stride,
 * ..., *first + (count - 1) * *stride are the caller's. The tag's step and
 * max_step stay as created (the dynamic step is each server's, in memory:
 * idm_segment_step). 0; IDMC_NOTAG;
 * IDMC_USAGE (a bad tag name, count 0, or a lease after which next_id
 * would pass 2^63 - 1: the tag is used up, msg says "tag T is used up");
 * IDMC_READONLY; IDMC_ERROR. A lease that failed with
 * IDMC_ERROR may or may not have been applied: its IDs are then lost,
 * never handed out twice. */
int idmc_store_lease(idmc_store *st, const char *tag, uint64_t count, uint64_t *first,
                     uint64_t *stride, char *msg, size_t cap);

/* One tag. 0 with *out, IDMC_NOTAG, IDMC_USAGE (a bad tag name),
 * IDMC_ERROR. */
int idmc_store_show(idmc_store *st, const char *tag, idmc_tag_info *out, char *msg, size_t cap);

/* Every tag in name order: calls fn for each. Returns the number of tags,
 * or -1 with msg. */
int idmc_store_list(idmc_store *st, void (*fn)(void *ctx, const idmc_tag_info *tag), void *ctx,
                    char *msg, size_t cap);

#endif
