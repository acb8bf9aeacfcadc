/*
 * inspect_render.h - an idm_inspection as text, for `idmint inspect` and
 * idmintd's GET /v1/inspect/{id}. Not library API.
 *
 * Both forms carry the members that man/idmint.1 lists for inspect --json,
 * in its order: input, kind, unix_ms, time, then by kind
 *   uuid       uuid, version, variant [, clock_seq, node for v1 and v6]
 *   ulid       uuid, ulid, random
 *   ksuid      ksuid, payload
 *   typeid     uuid, typeid, prefix
 *   snowflake  id, layout, node, sequence
 *
 * JSON: one object on one line, members separated by ", " and ": ", with
 * no trailing newline (JSON Lines writers add it):
 *   {"input": "...", "kind": "ulid", "unix_ms": 1469918176385, ...}
 * unix_ms and time are null when the ID carries no time; a snowflake's id
 * is a decimal string (it may exceed 2^53); a UUID's node is 12 hex digits,
 * a snowflake's node an integer.
 *
 * Text: one "name: value" line per member, each ending in "\n"; strings
 * unquoted, null written as "none". Callers separate IDs with a blank line.
 */
#ifndef IDMX_INSPECT_RENDER_H
#define IDMX_INSPECT_RENDER_H

#include "outbuf.h"

#include <idmint/inspect.h>

#include <stddef.h>

/* The JSON object for a decoded ID. input[0..len-1] is the text as given;
 * layout is the snowflake layout it was decoded with (NULL: twitter).
 * Returns 0 or the buffer's sticky error. */
int idmx_inspect_json(idmx_outbuf *b, const char *input, size_t len, const idm_inspection *in,
                      const idm_sf_layout *layout);

/* The JSON object for an input that did not decode:
 * {"input": "...", "error": "reason"}. Returns 0 or the sticky error. */
int idmx_inspect_json_error(idmx_outbuf *b, const char *input, size_t len, const char *reason);

/* The readable form of a decoded ID (see above). */
int idmx_inspect_text(idmx_outbuf *b, const char *input, size_t len, const idm_inspection *in,
                      const idm_sf_layout *layout);

/* "rfc9562", "ncs", "microsoft" or "future" for an IDM_UUID_VARIANT_*;
 * "unknown" otherwise. */
const char *idmx_uuid_variant_name(int variant);

#endif
