/*
 * idmint/ulid.h - ULIDs (https://github.com/ulid/spec).
 *
 * 48-bit Unix milliseconds + 80 random bits, written as 26 characters of
 * Crockford base32 (0-9, A-Z without I, L, O, U). Monotonic per the spec:
 * within one millisecond (or while the clock stands still or steps back)
 * the 80-bit random part of the previous ULID is incremented by one. Where
 * the spec fails on overflow of the random part, this library advances the
 * timestamp by one millisecond and draws a fresh random part instead.
 */
#ifndef IDMINT_ULID_H
#define IDMINT_ULID_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

typedef struct idm_ulid {
    uint8_t bytes[16]; /* big-endian: 6 bytes time, 10 bytes random */
} idm_ulid;

#define IDM_ULID_STRLEN 26

/* Parses exactly len bytes as a ULID, case-insensitively. Rejects a length
 * other than 26, characters outside Crockford's alphabet (I, L, O and U
 * included: no aliases), and values above 7ZZZZZZZZZZZZZZZZZZZZZZZZZ (the
 * first character above 7 would need 131 bits). IDM_EPARSE with
 * err->offset on failure. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_ulid_parse(const char *text, size_t len, idm_ulid *out,
                                         idm_error *err);

/* Writes the canonical uppercase form and a NUL (cap >= IDM_ULID_STRLEN + 1,
 * else IDM_ENOSPC). Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_ulid_format(const idm_ulid *u, char *dst, size_t cap);

/* The 48-bit timestamp in Unix milliseconds. Thread-safe: yes. */
IDM_API int64_t idm_ulid_unix_ms(const idm_ulid *u);

/* Mints n ULIDs, each strictly greater than every ULID this generator
 * returned before. Returns IDM_OK, IDM_ECLOCK, IDM_ENOENTROPY or
 * IDM_ETIME_RANGE.
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_ulid_next_n(idm_gen *g, idm_ulid *out, size_t n, idm_error *err);

/*
 * Causal minting: idm_ulid_observe makes every ULID the generator mints afterwards
 * sort after seen, an ID minted elsewhere (another process, another host)
 * that this one has observed: the click before the purchase it caused. The
 * generator's state moves up to seen's position (never down: a seen ID
 * from the past changes nothing), so its next IDs continue after it (seen + 1 at the least, as the
 * monotonic mode counts). A seen ID whose time is more than max_offset_ms (>= 0; INT64_MAX: no
 * limit) ahead of the local clock is refused with IDM_EOFFSET (the message
 * says how far ahead, and the limit), leaving the state unchanged: one bad
 * peer must not drag the generator into the future. Returns IDM_OK,
 * IDM_EOFFSET, IDM_EINVAL (NULL arguments, a negative max_offset_ms),
 * IDM_ECLOCK, IDM_ETIME_RANGE (seen is the format's last value).
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_ulid_observe(idm_gen *g, const idm_ulid *seen, int64_t max_offset_ms,
                                           idm_error *err);

IDM_END_DECLS

#endif
