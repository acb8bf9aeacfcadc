/*
 * idmint/typeid.h - TypeIDs (https://github.com/jetify-com/typeid, spec
 * v0.3) and the prefix rule that tokens share.
 *
 * A TypeID is PREFIX "_" SUFFIX, or a bare SUFFIX when the prefix is empty.
 * The prefix is at most 63 characters of [a-z_] that neither start nor end
 * with "_". The suffix is the 128 bits of a UUID (normally v7) in 26
 * lowercase Crockford base32 characters, the first of which is 0-7.
 * Parsing splits at the last "_".
 */
#ifndef IDMINT_TYPEID_H
#define IDMINT_TYPEID_H

#include "common.h"
#include "error.h"
#include "uuid.h"

IDM_BEGIN_DECLS

#define IDM_TYPEID_PREFIX_MAX 63
#define IDM_TYPEID_SUFFIX_LEN 26
#define IDM_TYPEID_STRLEN_MAX (IDM_TYPEID_PREFIX_MAX + 1 + IDM_TYPEID_SUFFIX_LEN)

typedef struct idm_typeid {
    char prefix[IDM_TYPEID_PREFIX_MAX + 1]; /* NUL-terminated, may be "" */
    size_t prefix_len;
    idm_uuid uuid;
} idm_typeid;

/* Checks a prefix against the rule above (len 0 is valid: no prefix).
 * IDM_EINVAL with err->offset at the offending character.
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_typeid_check_prefix(const char *prefix, size_t len, idm_error *err);

/* Parses exactly len bytes. IDM_EPARSE with err->offset: bad prefix, a
 * separator with an empty prefix, a suffix that is not 26 lowercase base32
 * characters, or a first suffix character above 7.
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_typeid_parse(const char *text, size_t len, idm_typeid *out,
                                           idm_error *err);

/* Writes prefix (checked as above), "_" unless the prefix is empty, the
 * suffix of u, and a NUL. Returns IDM_OK, IDM_EINVAL (bad prefix) or
 * IDM_ENOSPC (cap < prefix_len + 28, or 27 without a prefix). Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_typeid_format(const char *prefix, size_t prefix_len,
                                            const idm_uuid *u, char *dst, size_t cap,
                                            idm_error *err);

/* Causal minting for TypeIDs: parse the seen TypeID (idm_typeid_parse)
 * and pass its UUID to idm_uuidv7_observe (uuid.h); TypeIDs minted from
 * the same generator's UUIDv7 sequence then sort after it (same prefix). */

IDM_END_DECLS

#endif
