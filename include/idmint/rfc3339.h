/*
 * idmint/rfc3339.h - RFC 3339 UTC times with milliseconds.
 *
 * Formatting follows JavaScript's Date.prototype.toISOString: years 0000 to
 * 9999 as four digits ("2022-02-22T19:22:22.000Z"), other years as a sign
 * and six digits ("+010889-08-02T05:31:50.655Z", "-000001-...").
 */
#ifndef IDMINT_RFC3339_H
#define IDMINT_RFC3339_H

#include "common.h"
#include "error.h"

IDM_BEGIN_DECLS

#define IDM_RFC3339_CAP 32 /* longest form plus NUL */

/* Formats unix_ms (may be negative) and a NUL. IDM_ENOSPC when cap is too
 * small; IDM_ETIME_RANGE when the year would need more than six digits.
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_time_format(int64_t unix_ms, char *dst, size_t cap);

/* Parses exactly len bytes of an RFC 3339 date-time
 * (YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM); 't' and 'z' and a
 * space for 'T' are accepted), or the six-digit signed year form above.
 * Fractions beyond milliseconds are truncated toward the past.
 * IDM_EPARSE with err->offset. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_time_parse(const char *text, size_t len, int64_t *unix_ms,
                                         idm_error *err);

IDM_END_DECLS

#endif
