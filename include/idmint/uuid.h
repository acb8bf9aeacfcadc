/*
 * idmint/uuid.h - UUIDs (RFC 9562): text forms, field decoding, and
 * minting of versions 4 and 7.
 *
 * UUIDv7 construction (RFC 9562 section 6.2, Method 1, fixed-length
 * dedicated counter with a rollover guard):
 *
 *   bits   0-47  unix_ts_ms, big-endian
 *   bits  48-51  version 7
 *   bits  52-63  counter bits 15..4   (rand_a)
 *   bits  64-65  variant 10
 *   bits  66-69  counter bits 3..0    (top of rand_b)
 *   bits  70-127 58 random bits, fresh for every UUID
 *
 * The 16-bit counter is seeded with 15 random bits (its top bit starts at
 * zero: the rollover guard) whenever the millisecond advances, and
 * incremented for every further UUID in the same millisecond. When it
 * would overflow, the timestamp is advanced by one millisecond and the
 * counter reseeded, so minting never stalls or fails; the timestamp then
 * runs ahead of the clock only while more than ~32,000 UUIDs per
 * millisecond are minted. A clock that steps back is treated the same way:
 * the generator keeps the last timestamp and counts on. Timestamp and
 * counter pack into one 64-bit word (48 + 16 bits), the monotonic state.
 */
#ifndef IDMINT_UUID_H
#define IDMINT_UUID_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

typedef struct idm_uuid {
    uint8_t bytes[16];
} idm_uuid;

#define IDM_UUID_STRLEN 36 /* 8-4-4-4-12 */
#define IDM_UUID_HEXLEN 32 /* 32 hex digits, no hyphens */

/* Variants (RFC 9562 section 4.1). */
enum {
    IDM_UUID_VARIANT_NCS = 0,       /* 0xxx */
    IDM_UUID_VARIANT_RFC9562 = 1,   /* 10xx */
    IDM_UUID_VARIANT_MICROSOFT = 2, /* 110x */
    IDM_UUID_VARIANT_FUTURE = 3     /* 111x */
};

/* Parses a UUID in any of the forms: canonical 8-4-4-4-12, 32 hex digits,
 * either of those in braces "{...}", or "urn:uuid:" + canonical. Hex digits
 * may be upper or lower case. Exactly len bytes are read; anything else
 * (extra characters, wrong length) is IDM_EPARSE with err->offset at the
 * first offending byte. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_uuid_parse(const char *text, size_t len, idm_uuid *out,
                                         idm_error *err);

/* Writes the canonical lowercase form and a NUL: cap must be at least
 * IDM_UUID_STRLEN + 1, else IDM_ENOSPC. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_uuid_format(const idm_uuid *u, char *dst, size_t cap);

/* The version nibble (0-15) and the variant (IDM_UUID_VARIANT_*).
 * Thread-safe: yes (pure functions). */
IDM_API int idm_uuid_version(const idm_uuid *u);
IDM_API int idm_uuid_variant(const idm_uuid *u);

/* Decoded fields of a UUID. has_time is 1 for RFC 9562 variant versions 1,
 * 6 and 7: unix_ms is then the timestamp in Unix milliseconds, rounded down
 * (versions 1 and 6 carry 100-ns Gregorian time since 1582-10-15, so it may
 * be negative). has_node is 1 for RFC 9562 variant versions 1 and 6:
 * clock_seq (14 bits)
 * and node (48 bits) are then set. */
typedef struct idm_uuid_fields {
    int version;
    int variant;
    int has_time;
    int64_t unix_ms;
    int has_node;
    uint16_t clock_seq;
    uint64_t node;
} idm_uuid_fields;

/* Thread-safe: yes (pure function). Never fails. */
IDM_API void idm_uuid_decode(const idm_uuid *u, idm_uuid_fields *out);

/* Mints n UUIDv4 into out[0..n-1]. Returns IDM_OK or IDM_ENOENTROPY.
 *
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_uuidv4_next_n(idm_gen *g, idm_uuid *out, size_t n, idm_error *err);

/* Mints n UUIDv7 into out[0..n-1], each strictly greater (as bytes, and so
 * as text) than every UUIDv7 this generator returned before. One clock read
 * per call. Returns IDM_OK, IDM_ECLOCK, IDM_ENOENTROPY, or IDM_ETIME_RANGE
 * (the clock reads before 1970 or after the 48-bit millisecond range).
 *
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_uuidv7_next_n(idm_gen *g, idm_uuid *out, size_t n, idm_error *err);

/* A UUIDv7 for the time unix_ms (0 .. 2^48 - 1, to the year 10889), made
 * outside any generator's sequence: bytes 0-5 the millisecond, then the 80
 * bits of rand[0..9] with the version (7) and variant (10) written over
 * their 6 bits, leaving 74 of them. rand NULL means all zero: the least
 * UUIDv7 of that millisecond (00000000-0000-7000-8000-000000000000 for
 * 0), the lower bound of a scan over a time range of v7 keys. With 10
 * random bytes (idm_gen_random) it is what pg_uuidv7's
 * uuid_timestamptz_to_v7 makes; unlike idm_uuidv7_next_n's, such UUIDs
 * keep no order within the millisecond. Returns IDM_OK, IDM_EINVAL (out
 * NULL), IDM_ETIME_RANGE (unix_ms outside the range).
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_uuidv7_at(int64_t unix_ms, const uint8_t *rand, idm_uuid *out,
                                        idm_error *err);

/*
 * Causal minting: idm_uuidv7_observe makes every UUIDv7 (and TypeID built on one) the generator
 * mints afterwards sort after seen, an ID minted elsewhere (another process, another host) that
 * this one has observed: the click before the purchase it caused. The generator's state moves up to
 * seen's position (never down: a seen ID from the past changes nothing), so its next IDs continue
 * after it in the same millisecond with a larger counter (the 16 bits after the version), or later.
 * A seen ID whose time is more than max_offset_ms (>= 0; INT64_MAX: no
 * limit) ahead of the local clock is refused with IDM_EOFFSET (the message
 * says how far ahead, and the limit), leaving the state unchanged: one bad
 * peer must not drag the generator into the future. Returns IDM_OK,
 * IDM_EOFFSET, IDM_EINVAL (NULL arguments, a negative max_offset_ms, a seen UUID that is not
 * version 7), IDM_ECLOCK, IDM_ETIME_RANGE (seen is the format's last value). Thread-safe: yes (the
 * generator may be shared), unless it was made IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_uuidv7_observe(idm_gen *g, const idm_uuid *seen,
                                             int64_t max_offset_ms, idm_error *err);

IDM_END_DECLS

#endif
