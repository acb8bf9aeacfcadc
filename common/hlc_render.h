/*
 * hlc_render.h - a hybrid logical clock stamp (idmint/hlc.h) as
 * `idmint hlc inspect` prints it, and as idmintd's GET /v1/hlc answers it
 * with Accept: application/json, so that the two cannot drift apart. Not
 * library API.
 *
 * JSON: {"stamp": "019ad9c297800001", "wall_ms": 1764590000000,
 * "time": "2025-12-01T11:53:20.000Z", "logical": 1} (one line, no newline).
 * Text: "stamp: ...", "wall_ms: ...", "time: ...", "logical: ..." lines,
 * each ending in a newline.
 */
#ifndef IDMX_HLC_RENDER_H
#define IDMX_HLC_RENDER_H

#include "outbuf.h"

#include <stdint.h>

/* Both return 0 or the buffer's sticky error. */
int idmx_hlc_json(idmx_outbuf *b, uint64_t stamp);
int idmx_hlc_text(idmx_outbuf *b, uint64_t stamp);

#endif
