/*
 * format/format_row.h - a row of the format table (format.h): the public
 * facts and the entry points that format.c dispatches to. Not installed.
 *
 * Each format's folder defines its row (src/uuid/uuid_format.c, ...);
 * format.c lists the rows in table order. The entry points are called
 * only after format.c has checked the arguments: the prefix against the
 * rule, the room for n IDs, flags and NULL pointers.
 */
#ifndef IDM_FORMAT_ROW_H
#define IDM_FORMAT_ROW_H

#include "internal.h"

/* Mints n IDs into dst (room checked: n * stride bytes, stride being one
 * ID's text and the newline when nl); *len: the bytes of whole IDs. */
typedef int (*idm__format_mint_fn)(const idm_format *f, idm_gen *g, const char *prefix,
                                   size_t prefix_len, char *dst, size_t n, bool nl, size_t *len,
                                   idm_error *err);
/* Parses text as f into out (zeroed, its format set, by format.c). */
typedef int (*idm__format_parse_fn)(const idm_format *f, const char *text, size_t len,
                                    idm_format_value *out, idm_error *err);
/* Observes seen (of f) with g. */
typedef int (*idm__format_observe_fn)(idm_gen *g, const idm_format_value *seen,
                                      int64_t max_offset_ms, idm_error *err);

typedef struct idm__format_row {
    idm_format pub; /* first: a row's address is its descriptor's */
    int (*check_prefix)(const char *prefix, size_t len, idm_error *err); /* NULL: takes none */
    idm__format_mint_fn mint; /* NULL: not minted from an idm_gen */
    idm__format_parse_fn parse;
    idm__format_observe_fn observe; /* NULL: not time-ordered, or not from an idm_gen */
} idm__format_row;

/* The rows, each defined in its format's folder. */
extern const idm__format_row idm__format_uuidv7, idm__format_uuidv4, idm__format_ulid,
    idm__format_ksuid, idm__format_snowflake, idm__format_typeid, idm__format_token,
    idm__format_traceparent;

/* Mints n IDs of `one` bytes each (the text without NUL) by calling
 * next(ctx, g, buf, one + 1, err) per ID, which writes it and a NUL at
 * buf: in place in dst, followed by '\n' when nl. For the formats minted
 * one at a time, or a chunk at a time behind next. */
int idm__format_mint_each(size_t n, size_t one, bool nl, char *dst, size_t *len,
                          int (*next)(void *ctx, idm_gen *g, char *buf, size_t cap, idm_error *err),
                          void *ctx, idm_gen *g, idm_error *err);

/* Returns rc, after copying the n bytes of a parsed ID into out when rc
 * is IDM_OK: the tail of every parse entry. */
int idm__format_value_set(idm_format_value *out, int rc, const uint8_t *bytes, size_t n);

/* The mint of the formats idm_gen_next_text_n writes (src/gen/text.c),
 * whose IDM_FORMAT_* numbers are its format codes. */
int idm__format_gen_mint(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len,
                         char *dst, size_t n, bool nl, size_t *len, idm_error *err);

/* The shared entries of the formats whose bits are a UUIDv7's (uuidv7,
 * typeid): its observe, and the version check of a parsed UUID. */
int idm__format_uuidv7_observe(idm_gen *g, const idm_format_value *seen, int64_t max_offset_ms,
                               idm_error *err);
int idm__format_uuid_version_check(const idm_format_value *v, int want, idm_error *err);

#endif
