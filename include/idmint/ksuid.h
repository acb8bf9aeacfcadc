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

#define IDM_KSUID_STRLEN 27
#define IDM_KSUID_EPOCH_S 1400000000

/* Parses exactly len bytes (27 base62 characters, case-sensitive); values
 * above the 160-bit maximum are rejected. IDM_EPARSE with err->offset on
 * failure. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_ksuid_parse(const char *text, size_t len, idm_ksuid *out, idm_error *err);

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

IDM_END_DECLS

#endif
