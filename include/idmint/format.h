/*
 * idmint/format.h - the table of the ID formats: what each one is, and
 * the calls that mint, parse and observe any of them by its descriptor.
 *
 * Every front end (the idmint command, idmintd, pg_idmint) that offers
 * "a format by name" iterates this table instead of keeping its own list:
 * a format's name, IDM_FORMAT_* number, size in bits, text length (and
 * the longest with a prefix), whether it is time-ordered, its prefix rule,
 * the IDM_KIND_* idm_inspect reports for it, and which handle mints it.
 *
 * The entry points: idm_format_next_text_n mints n IDs as text from an
 * idm_gen (with the prefix, for the formats that take one);
 * idm_format_parse checks that text is one ID of the format and returns
 * its bits; idm_format_observe is causal minting (uuid.h's
 * idm_uuidv7_observe and the others) for a parsed ID. Snowflakes need a
 * layout and a node, so they have their own handle (snowflake.h): their
 * row has IDM_FORMAT_BY_SNOWFLAKE, idm_format_next_text_n and
 * idm_format_observe refuse them with IDM_EUNSUPPORTED, and a front end
 * mints them with idm_snowflake_next_text_n and observes value.number with
 * idm_snowflake_observe. Their parse works (decimal, any layout).
 *
 * ABI: idm_format is owned by the library and handed out only by pointer;
 * members are only ever appended, so never copy one or take its size.
 * idm_format_value is caller-allocated and frozen like the config structs
 * of gen.h. The IDM_FORMAT_* numbers are never renumbered or reused; the
 * table's order (idm_format_at) is the order front ends list formats in.
 */
#ifndef IDMINT_FORMAT_H
#define IDMINT_FORMAT_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

/* A format's prefix rule (idm_format.prefix). */
enum {
    IDM_PREFIX_NONE = 0,     /* takes none */
    IDM_PREFIX_OPTIONAL = 1, /* "PREFIX_" + body when given (token) */
    IDM_PREFIX_REQUIRED = 2  /* a prefix must be passed (typeid); an empty one, which the
                                TypeID rule allows, gives the bare body */
};

/* Which handle mints a format (idm_format.minted_by). */
enum {
    IDM_FORMAT_BY_GEN = 0,      /* an idm_gen (gen.h) */
    IDM_FORMAT_BY_SNOWFLAKE = 1 /* an idm_snowflake (snowflake.h) */
};

/* The longest text of any format, with the longest prefix (a TypeID's 90). */
#define IDM_FORMAT_TEXT_MAX 90

typedef struct idm_format {
    int id;           /* IDM_FORMAT_* (gen.h) */
    const char *name; /* "uuidv7", "ulid", ...: lowercase, as front ends take it */
    unsigned bits;    /* the ID's size in bits (token: its random bits) */
    size_t text_len;  /* the text's length without a prefix (snowflake: its longest, 20) */
    size_t text_max;  /* the longest text, with the longest prefix */
    int time_ordered; /* 1: strictly increasing per generator, a ceiling and observe apply */
    int prefix;       /* IDM_PREFIX_* */
    int kind;         /* the IDM_KIND_* (inspect.h) idm_inspect reports, 0 for none */
    int minted_by;    /* IDM_FORMAT_BY_* */
} idm_format;

/* The number of formats, and the i-th in table order (NULL when i is past
 * the end). Thread-safe: yes (pure functions). */
IDM_API size_t idm_format_count(void);
IDM_API const idm_format *idm_format_at(size_t i);

/* The format numbered id (IDM_FORMAT_*), or NULL. Thread-safe: yes. */
IDM_API const idm_format *idm_format_by_id(int id);

/* The format named by exactly len bytes of name (case-sensitive), or NULL
 * (also for a NULL name). Thread-safe: yes (pure function). */
IDM_API const idm_format *idm_format_by_name(const char *name, size_t len);

/* The exact length of one ID's text with a prefix of prefix_len bytes
 * ("_" included when there is one; snowflake: the longest, 20). 0 when
 * such a prefix cannot be: one given to a format that takes none, or one
 * longer than 63. Thread-safe: yes (pure function). */
IDM_API size_t idm_format_text_len(const idm_format *f, size_t prefix_len);

/* Checks a prefix against the format's rule. prefix NULL (len 0) means
 * none was given; a non-NULL empty prefix is one given empty. Returns
 * IDM_OK, or IDM_EINVAL with err->offset at the offending character (the
 * message names a TypeID's or a token's prefix) for a prefix the format
 * refuses: a non-empty one for a format that takes none, NULL for one that
 * needs one, or one its rule refuses. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_format_check_prefix(const idm_format *f, const char *prefix,
                                                  size_t len, idm_error *err);

/* Mints n IDs of f as text at dst from g, each "PREFIX_" + body when
 * prefix_len > 0 (prefix is checked by idm_format_check_prefix first),
 * followed by '\n' when flags has IDM_TEXT_NEWLINE; no NUL. *len receives
 * the bytes written. The IDs are those n single calls would give, in
 * order; the time-ordered ones are minted in chunks (one clock read and
 * one state reservation each), so the generator's ceiling and ceiling
 * handler apply as in the binary bulk calls. Returns IDM_OK, IDM_EINVAL
 * (a NULL argument, unknown flags, a prefix f refuses), IDM_EUNSUPPORTED
 * (a snowflake: use its own handle), IDM_ENOSPC (before minting anything,
 * when cap is less than n times one ID's length), or the generator's
 * error; on an error after some IDs, *len covers those written whole,
 * which are valid and never minted again. Thread-safe: as the generator. */
IDM_API IDM_NODISCARD int idm_format_next_text_n(const idm_format *f, idm_gen *g,
                                                 const char *prefix, size_t prefix_len, char *dst,
                                                 size_t cap, size_t n, uint32_t flags, size_t *len,
                                                 idm_error *err);

/* One parsed ID of any format (idm_format_parse). Frozen (see above). */
#define IDM_FORMAT_VALUE_BYTES 32
typedef struct idm_format_value {
    int format;                            /* IDM_FORMAT_* */
    size_t len;                            /* bytes used in bytes */
    uint8_t bytes[IDM_FORMAT_VALUE_BYTES]; /* the bits in wire order: a UUID's, ULID's or
                                              TypeID's 16, a KSUID's 20, a snowflake's 8
                                              (big-endian), a traceparent's 26 (version,
                                              trace-id, parent-id, flags); a token's 0 (a
                                              token is checked, never decoded) */
    uint64_t number;                       /* a snowflake: the ID; otherwise 0 */
    size_t prefix_len;
    char prefix[64]; /* typeid, token: the prefix, NUL-terminated, may be "" */
} idm_format_value;

/* Parses exactly len bytes of text as one ID of f: the text forms of its
 * own parser (uuidv4 and uuidv7: every form idm_uuid_parse takes; ulid,
 * ksuid, typeid, traceparent: theirs; snowflake: 1 to 20 decimal digits
 * up to 2^64 - 1, any layout; token: [PREFIX_] and 22 base62 characters
 * of at most 128 bits). Returns IDM_OK, IDM_EPARSE (with the parser's
 * reason and err->offset), IDM_EUNSUPPORTED for well-formed text of a
 * neighbour the format does not take - a UUID, or a TypeID's UUID, of
 * another version than uuidv4's 4 or uuidv7's and typeid's 7 ("its UUID is
 * version 4, not 7"), out then filled - or IDM_EINVAL (NULL arguments).
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_format_parse(const idm_format *f, const char *text, size_t len,
                                           idm_format_value *out, idm_error *err);

/* Causal minting for the time-ordered formats: makes every ID of f that g
 * mints afterwards sort after seen (parsed as f), as idm_uuidv7_observe,
 * idm_ulid_observe and idm_ksuid_observe do, with their max_offset_ms and
 * their return codes. IDM_EUNSUPPORTED for a format that is not
 * time-ordered, or a snowflake (use idm_snowflake_observe with
 * seen->number); IDM_EINVAL for a seen value of another format.
 * Thread-safe: as the generator. */
IDM_API IDM_NODISCARD int idm_format_observe(const idm_format *f, idm_gen *g,
                                             const idm_format_value *seen, int64_t max_offset_ms,
                                             idm_error *err);

IDM_END_DECLS

#endif
