/*
 * json.h - the little JSON the front ends write (RFC 8259). Not library API.
 *
 * Only what inspect output needs: strings with escaping that always yields
 * valid JSON, whatever bytes come in. No parser.
 */
#ifndef IDMX_JSON_H
#define IDMX_JSON_H

#include "outbuf.h"

#include <stddef.h>

/* Appends len bytes of s as a quoted JSON string. Quotes, backslashes and
 * control characters (U+0000-U+001F) are escaped (\n \r \t \b \f, others as
 * \u00XX); well-formed UTF-8 is copied as is; each byte that is not part of
 * well-formed UTF-8 (stray continuation bytes, truncated or overlong
 * sequences, surrogates, code points above U+10FFFF) becomes \ufffd.
 * Returns 0 or the buffer's sticky error. */
int idmx_json_string(idmx_outbuf *b, const char *s, size_t len);

/* The same quoted string into dst[0..cap-1], NUL-terminated. Returns the length written
 * (without the NUL), or (size_t)-1 when cap is too small; dst is then "". */
size_t idmx_json_escape(const char *s, size_t len, char *dst, size_t cap);

#endif
