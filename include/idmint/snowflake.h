/*
 * idmint/snowflake.h - 64-bit Snowflake-style IDs with configurable layouts.
 *
 * A layout is three fields - time, node and sequence - in any order, most
 * significant first, that together take at most 64 bits; bits above them
 * are unused and zero in a valid ID. Time counts whole units (unit_ms
 * milliseconds) since epoch_ms. Presets (idmint(1), LAYOUTS):
 *
 *   twitter    epoch 1288834974657, 1 ms:  1 unused, 41 time, 10 node, 12 seq
 *   discord    epoch 1420070400000, 1 ms:  42 time, 10 node, 12 seq
 *   instagram  epoch 1314220021721, 1 ms:  41 time, 13 node, 10 seq
 *   sonyflake  epoch 1409529600000, 10 ms: 1 unused, 39 time, 8 seq, 16 node
 *   sonyflake2 epoch 1735689600000, 10 ms: 1 unused, 39 time, 8 seq, 16 node
 *   baidu      epoch 1463673600000, 1 s:   1 unused, 28 time, 22 node, 13 seq
 *   safe53     epoch 1735689600000, 1 ms:  11 unused, 41 time, 6 node, 6 seq
 *
 * A spec names the fields in order with their widths, then optional unit and
 * epoch: "time=41,node=10,seq=12,unit=1ms,epoch=1735689600000". Units are a
 * whole number of ms or s; epoch is Unix milliseconds or an RFC 3339 time.
 * Without them a spec means unit=1ms and epoch=0 (the Unix epoch).
 *
 * Generation (idm_snowflake_next_n) is strictly increasing per generator.
 * When a unit's sequence is exhausted it waits (through the clock's
 * sleep_ns) for the next unit. When the clock reads earlier than the latest
 * time the generator has seen, by at most max_rewind_ms it waits for the
 * clock to catch up; by more it refuses with IDM_ECLOCK_REWIND and
 * err->rewind_ms set. A time before the epoch or past the last unit the
 * time field can hold is IDM_ETIME_RANGE: it never wraps around.
 */
#ifndef IDMINT_SNOWFLAKE_H
#define IDMINT_SNOWFLAKE_H

#include <stdbool.h>

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

enum { IDM_SF_TIME = 0, IDM_SF_NODE = 1, IDM_SF_SEQ = 2 };

#define IDM_SF_NAME_CAP              16
#define IDM_SF_SPEC_CAP              96 /* enough for any formatted spec + NUL */
#define IDM_SF_DEFAULT_MAX_REWIND_MS 10

/* A parsed layout. A plain value: copy it freely. Fill it with
 * idm_sf_layout_parse or idm_sf_layout_preset; the shifts are derived. */
typedef struct idm_sf_layout {
    char name[IDM_SF_NAME_CAP]; /* preset name; "" when from a spec or changed */
    int64_t epoch_ms;           /* Unix ms of time unit 0 */
    int64_t unit_ms;            /* >= 1 */
    uint8_t order[3];           /* field ids, most significant first */
    uint8_t bits[3];            /* indexed by IDM_SF_TIME/NODE/SEQ */
    uint8_t shift[3];           /* indexed likewise */
} idm_sf_layout;

/* Looks up a preset by exact name (len bytes). IDM_EINVAL if unknown, with
 * a message listing the presets. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_sf_layout_preset(idm_sf_layout *out, const char *name, size_t len,
                                               idm_error *err);

/* Parses a preset name or a spec (see above). Each of time, node and seq
 * must appear exactly once with at least 1 bit (so time has at most 62),
 * their sum at most 64, and the
 * layout's last representable time must fit in a signed 64-bit count of
 * Unix milliseconds. IDM_EPARSE with err->offset, or IDM_EINVAL for an
 * unknown name. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_sf_layout_parse(idm_sf_layout *out, const char *text, size_t len,
                                              idm_error *err);

/* Replaces the epoch (Unix ms). Clears name when the epoch differs from the
 * preset's. IDM_EINVAL when the layout's range would overflow.
 * Thread-safe: no (one thread per object). */
IDM_API IDM_NODISCARD int idm_sf_layout_set_epoch(idm_sf_layout *l, int64_t epoch_ms,
                                                  idm_error *err);

/* Writes the preset name, or the canonical spec
 * ("time=41,node=10,seq=12,unit=1ms,epoch=1288834974657"), and a NUL.
 * IDM_ENOSPC when cap is too small, IDM_EINVAL for a NULL or inconsistent
 * layout. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_sf_layout_format(const idm_sf_layout *l, char *dst, size_t cap);

/* Whether a and b make the same IDs: the same fields in the same order
 * and widths, unit and epoch (a preset and its spec are equal; the name is
 * not compared). For owners that keep a generator while a setting may
 * change (pg_idmint, idmint_sqlite). Thread-safe: yes (pure function). */
IDM_API bool idm_sf_layout_equal(const idm_sf_layout *a, const idm_sf_layout *b);

/* Largest node number (2^node_bits - 1) and largest time in Unix ms that the
 * layout can represent. Thread-safe: yes (pure functions). */
IDM_API uint64_t idm_sf_layout_max_node(const idm_sf_layout *l);
IDM_API int64_t idm_sf_layout_max_unix_ms(const idm_sf_layout *l);

/* The fields of one snowflake. unix_ms = epoch_ms + time_units * unit_ms. */
typedef struct idm_sf_parts {
    uint64_t time_units;
    int64_t unix_ms;
    uint64_t node;
    uint64_t sequence;
} idm_sf_parts;

/* Splits id by the layout. IDM_EPARSE if any bit above the fields is set.
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_sf_decode(const idm_sf_layout *l, uint64_t id, idm_sf_parts *out,
                                        idm_error *err);

/* Parses exactly len bytes of unsigned decimal (no sign, no spaces) that fit
 * in 64 bits. IDM_EPARSE with err->offset. Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_sf_parse_decimal(const char *text, size_t len, uint64_t *out,
                                               idm_error *err);

/* Writes id in decimal and a NUL; returns the length written (1 to 20), or
 * 0 when cap < 21. Thread-safe: yes (pure function). */
IDM_API size_t idm_sf_format_decimal(uint64_t id, char *dst, size_t cap);

enum { IDM_SF_SEQ_START_ZERO = 0, IDM_SF_SEQ_START_RANDOM = 1 };

typedef struct idm_snowflake_config {
    idm_gen_config gen; /* clock, entropy, allocator, state_path (a
                           host-wide generator: every process opening
                           the same path with the same layout and node
                           shares one sequence); flags must be 0 */
    idm_sf_layout layout;
    uint64_t node;          /* 0 .. idm_sf_layout_max_node() */
    int64_t max_rewind_ms;  /* tolerated backwards clock step, >= 0 */
    int seq_start;          /* IDM_SF_SEQ_START_*: RANDOM starts each unit at
                               a random value below 2^w, w = sequence bits -
                               5, at most 7 (0..127 of twitter's 4096, 0..7
                               of sonyflake's 256: id % N spreads at low
                               traffic; at most 1/32 of a unit unused) */
    int64_t resume_unix_ms; /* 0, or a time high-water mark from a previous
                               run: IDs are minted only in later units, and a
                               clock earlier than it counts as a rewind */
} idm_snowflake_config;

/* Sets the defaults: twitter layout, node 0, max_rewind_ms 10, sequence
 * from zero, system clock and randomness. Thread-safe: yes. */
IDM_API void idm_snowflake_config_init(idm_snowflake_config *cfg);

typedef struct idm_snowflake idm_snowflake;

/* Creates a snowflake generator; cfg NULL means idm_snowflake_config_init's
 * defaults. IDM_EINVAL when the node is out of range (the message names the
 * range), max_rewind_ms is negative, gen.flags is not 0, or the layout puts
 * seq above time (such IDs could not increase; decoding them still works);
 * IDM_ENOMEM. Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_snowflake_new(idm_snowflake **out, const idm_snowflake_config *cfg,
                                            idm_error *err);

/* NULL is a no-op. Thread-safe: no (no other call may use g concurrently). */
IDM_API void idm_snowflake_free(idm_snowflake *g);

/* Mints n IDs into out, strictly increasing across calls. Stops at the
 * first failure: *done (may be NULL) says how many IDs were written, all
 * valid. Returns IDM_OK, IDM_ECLOCK, IDM_ECLOCK_REWIND, IDM_ETIME_RANGE,
 * IDM_ENOENTROPY or IDM_EFORKED. Thread-safe: yes (the generator may be
 * shared). */
IDM_API IDM_NODISCARD int idm_snowflake_next_n(idm_snowflake *g, uint64_t *out, size_t n,
                                               size_t *done, idm_error *err);

/* Mints n IDs as decimal text into dst, each followed by '\n' when flags
 * has IDM_TEXT_NEWLINE; no NUL is counted in *len (the bytes written). cap
 * must be at least n * 21 + 1 (n * 20 + 1 without newlines), else
 * IDM_ENOSPC before minting. On a failure *len covers the IDs written so
 * far, all valid. Errors as idm_snowflake_next_n.
 * Thread-safe: yes (the generator may be shared). */
IDM_API IDM_NODISCARD int idm_snowflake_next_text_n(idm_snowflake *g, char *dst, size_t cap,
                                                    size_t n, uint32_t flags, size_t *len,
                                                    idm_error *err);

/* Like idm_snowflake_next_n, but never sleeps: where that call would wait
 * (the unit's sequence is used up, or the clock reads behind the latest
 * time used by at most max_rewind_ms) it stops with IDM_EAGAIN, *done IDs
 * written (all valid, possibly none), and *retry_unix_ns (may be NULL) the
 * clock time in Unix nanoseconds at which to call again. IDM_ECEILING sets
 * *retry_unix_ns to 0: only the owner raising the ceiling helps. Other
 * errors as idm_snowflake_next_n. Thread-safe: yes (the generator may be
 * shared). */
IDM_API IDM_NODISCARD int idm_snowflake_try_next_n(idm_snowflake *g, uint64_t *out, size_t n,
                                                   size_t *done, int64_t *retry_unix_ns,
                                                   idm_error *err);

/* The text form of idm_snowflake_try_next_n, as idm_snowflake_next_text_n
 * writes it (*len covers the IDs minted before a stop).
 * Thread-safe: yes (the generator may be shared). */
IDM_API IDM_NODISCARD int idm_snowflake_try_next_text_n(idm_snowflake *g, char *dst, size_t cap,
                                                        size_t n, uint32_t flags, size_t *len,
                                                        int64_t *retry_unix_ns, idm_error *err);

/* Sets the ceiling: from the moment this returns, IDs are minted only in
 * time units that start at or before ceiling_unix_ms (Unix ms); a call that
 * would need a later unit stops with IDM_ECEILING and the IDs minted so
 * far. INT64_MAX (the default) means no ceiling. It may be raised or
 * lowered at any time; a call already past its check for a unit finishes
 * that unit's reservation under the value it read, so owners that lower it
 * (a lost lease) set it to a time their promise still covers. The ceiling
 * belongs to this generator object, not to a host-wide state file.
 * Thread-safe: yes (the generator may be shared). */
IDM_API void idm_snowflake_set_ceiling(idm_snowflake *g, int64_t ceiling_unix_ms);

/* The ceiling in force (INT64_MAX when none). Thread-safe: yes. */
IDM_API int64_t idm_snowflake_ceiling(const idm_snowflake *g);

/* Installs (fn non-NULL) or removes the ceiling handler (gen.h's
 * idm_ceiling_fn). The blocking calls (next_n, next_text_n) that reach the
 * ceiling call it and go on once it has raised the ceiling, keeping the IDs
 * minted before; the try_ calls never call it (they never wait). Without
 * one, the call stops with IDM_ECEILING. Thread-safe: no (set it before the
 * generator is shared). */
IDM_API void idm_snowflake_set_ceiling_handler(idm_snowflake *g, idm_ceiling_fn fn, void *ctx);

/* The generator's progress, to persist and pass back as resume_unix_ms:
 * the latest clock reading it has used, in Unix ms (0 when a host-wide
 * state file has become unusable). Thread-safe: yes. */
IDM_API int64_t idm_snowflake_high_water_ms(idm_snowflake *g);

/* The layout the generator was made with. Thread-safe: yes. */
IDM_API const idm_sf_layout *idm_snowflake_layout(const idm_snowflake *g);

/* Causal minting: makes every ID the generator mints afterwards sort after
 * seen, a snowflake of the same layout minted elsewhere (another node)
 * that this one has observed. The state moves up to the first position
 * after seen that this node can take: seen's own time unit when this
 * node's IDs sort after seen's there (a greater node where the node field
 * is above the sequence, or a greater sequence number), else the next
 * unit; never down, so a seen ID from the past changes nothing. When that
 * unit lies ahead of the clock, the generator mints in it as if the clock
 * had read its start (no rewind wait, no IDM_ECLOCK_REWIND for that lead)
 * and, once its sequence is used up, waits (or, in the try_ calls, stops
 * with IDM_EAGAIN) for the clock to reach the next unit: it never claims a
 * unit that neither the clock nor an observed ID has reached. The lead
 * counts in idm_snowflake_high_water_ms, and the ceiling applies to it.
 * A seen ID whose unit starts more than max_offset_ms (>= 0; INT64_MAX: no
 * limit) after the local clock's reading is refused with IDM_EOFFSET (the
 * message says how far ahead, and the limit), the state unchanged.
 * Returns IDM_OK, IDM_EOFFSET, IDM_EPARSE (bits above the layout's fields
 * are set), IDM_EINVAL (NULL generator, negative max_offset_ms),
 * IDM_EUNSUPPORTED (the layout puts the node above the time and seen's
 * node is greater than this generator's: none of its IDs can sort after
 * seen), IDM_ETIME_RANGE (seen is in the layout's last unit and no later
 * position is left), IDM_ECLOCK, IDM_EFORKED, IDM_ESTATE.
 * Thread-safe: yes (the generator may be shared). */
IDM_API IDM_NODISCARD int idm_snowflake_observe(idm_snowflake *g, uint64_t seen,
                                                int64_t max_offset_ms, idm_error *err);

IDM_END_DECLS

#endif
