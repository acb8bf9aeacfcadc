/*
 * prefix.h - the TypeID prefix rule, shared with opaque tokens (token.c).
 * Private to libidmint.
 */
#ifndef IDM_TYPEID_PREFIX_H
#define IDM_TYPEID_PREFIX_H

#include "internal.h"

/* Checks len bytes against the TypeID prefix rule (at most 63 of [a-z_],
 * not starting or ending with '_'; empty is valid). On failure returns code
 * (IDM_EINVAL for options, IDM_EPARSE inside a parsed ID) with err->offset
 * at the offending byte and a message that starts with what ("token
 * prefix"). */
int idm__prefix_check(const char *prefix, size_t len, int code, const char *what, idm_error *err);

#endif
