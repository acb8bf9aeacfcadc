/*
 * idmint/ksuid.h - KSUIDs (Segment's K-Sortable Unique IDentifier).
 *
 * 20 bytes: a 32-bit big-endian count of seconds since the KSUID epoch
 * (Unix 1400000000, 2014-05-13T16:53:20Z) and a 128-bit random payload,
 * written as 27 characters of base62 (0-9, A-Z, a-z), zero-padded on the
 * left. The largest KSUID is aWgEPTl1tmebfsQzFP4bxwgy80V.
 *
 * Minting is strictly increasing per generator: within one second (or while
 * the clock stands still or steps back) the payload of the previous KSUID
 * is incremented by one; a payload overflow advances the timestamp by one
 * second with a fresh random payload.
 */
#ifndef IDMINT_KSUID_H
#define IDMINT_KSUID_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

typedef struct idm_ksuid {
    uint8_t bytes[20];
} idm_ksuid;

#define IDM_KSUID_STRLEN  27
#define IDM_KSUID_EPOCH_S 1400000000

/* Parses exactly len bytes (27 base62 characters, case-sensitive); values
 * above the 160-bit maximum are rejected. IDM_EPARSE with err->offset on
 * failure. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_ksuid_parse(const char *text, size_t len, idm_ksuid *out,
                                          idm_error *err);

/* Writes the 27-character form and a NUL (cap >= IDM_KSUID_STRLEN + 1,
 * else IDM_ENOSPC). Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_ksuid_format(const idm_ksuid *k, char *dst, size_t cap);

/* The timestamp in Unix milliseconds (seconds * 1000). Thread-safe: yes. */
IDM_API int64_t idm_ksuid_unix_ms(const idm_ksuid *k);

/* Mints n KSUIDs, each strictly greater than every KSUID this generator
 * returned before. Returns IDM_OK, IDM_ECLOCK, IDM_ENOENTROPY or
 * IDM_ETIME_RANGE (clock before 2014-05-13T16:53:20Z or after 2150).
 *
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_ksuid_next_n(idm_gen *g, idm_ksuid *out, size_t n, idm_error *err);

/*
 * Causal minting: idm_ksuid_observe makes every KSUID the generator mints afterwards
 * sort after seen, an ID minted elsewhere (another process, another host)
 * that this one has observed: the click before the purchase it caused. The
 * generator's state moves up to seen's position (never down: a seen ID
 * from the past changes nothing), so its next IDs continue after it (its first 128 bits + 1 at the
 * least; the time compared with the clock is the start of seen's second). A seen ID whose time is
 * more than max_offset_ms (>= 0; INT64_MAX: no limit) ahead of the local clock is refused with
 * IDM_EOFFSET (the message says how far ahead, and the limit), leaving the state unchanged: one bad
 * peer must not drag the generator into the future. Returns IDM_OK,
 * IDM_EOFFSET, IDM_EINVAL (NULL arguments, a negative max_offset_ms),
 * IDM_ECLOCK, IDM_ETIME_RANGE (seen is the format's last value).
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_ksuid_observe(idm_gen *g, const idm_ksuid *seen,
                                            int64_t max_offset_ms, idm_error *err);

IDM_END_DECLS

#endif
