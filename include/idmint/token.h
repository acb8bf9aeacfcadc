/*
 * idmint/token.h - opaque public tokens and W3C traceparent values.
 *
 * A token is an optional prefix (the TypeID prefix rule) and "_", then 128
 * bits from the CSPRNG in 22 base62 characters (fixed width, zero-padded):
 * "sk_3ZbQ9x...". It carries no time and no counter; treat it as a secret.
 *
 * A traceparent (W3C Trace Context level 1) is
 * "00-" 32 hex trace-id "-" 16 hex parent-id "-01", with random, never
 * all-zero ids and the sampled flag set.
 */
#ifndef IDMINT_TOKEN_H
#define IDMINT_TOKEN_H

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

#define IDM_TOKEN_BODY_LEN     22
#define IDM_TOKEN_STRLEN_MAX   (63 + 1 + IDM_TOKEN_BODY_LEN)
#define IDM_TRACEPARENT_STRLEN 55

/* Mints one token into dst (NUL-terminated). IDM_EINVAL (bad prefix),
 * IDM_ENOSPC (cap < prefix_len + 24, or 23 without a prefix), IDM_ENOENTROPY. The random bytes are
 * wiped from the stack after use. Thread-safe: yes (the generator may be
 * shared), unless it was made IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_token_next(idm_gen *g, const char *prefix, size_t prefix_len,
                                         char *dst, size_t cap, idm_error *err);

/* Checks a token prefix (the TypeID prefix rule; len 0: none). IDM_EINVAL
 * with err->offset at the offending character, the message naming a token
 * prefix. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_token_check_prefix(const char *prefix, size_t len, idm_error *err);

/* Compares two tokens in time that depends only on the lengths. Returns 1
 * when equal. Thread-safe: yes (pure function). */
IDM_API int idm_token_equal(const char *a, size_t a_len, const char *b, size_t b_len);

typedef struct idm_traceparent {
    uint8_t version;
    uint8_t trace_id[16];
    uint8_t parent_id[8];
    uint8_t flags;
} idm_traceparent;

/* Mints one traceparent value into dst (cap >= 56). IDM_ENOSPC,
 * IDM_ENOENTROPY.
 * Thread-safe: yes (the generator may be shared), unless it was made
 * IDM_GEN_UNSHARED. */
IDM_API IDM_NODISCARD int idm_traceparent_next(idm_gen *g, char *dst, size_t cap, idm_error *err);

/* Parses exactly len bytes of a version-00 traceparent (lowercase hex,
 * non-zero ids). IDM_EPARSE with err->offset. Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_traceparent_parse(const char *text, size_t len, idm_traceparent *out,
                                                idm_error *err);

IDM_END_DECLS

#endif
