/*
 * idmint/idmint.h - the umbrella header of libidmint.
 *
 * libidmint mints, decodes and converts distributed identifiers: UUIDv4 and
 * UUIDv7 (RFC 9562), ULID, KSUID, Snowflake-style 64-bit IDs with
 * configurable layouts, TypeID, opaque tokens and W3C traceparent values,
 * and keeps hybrid logical clocks (hlc.h).
 * See docs/design.md for the architecture and the reasons behind it.
 */
#ifndef IDMINT_IDMINT_H
#define IDMINT_IDMINT_H

#include "common.h"
#include "error.h"
#include "format.h"
#include "gen.h"
#include "hlc.h"
#include "inspect.h"
#include "keyed.h"
#include "ksuid.h"
#include "mark.h"
#include "rfc3339.h"
#include "segment.h"
#include "sfhost.h"
#include "snowflake.h"
#include "token.h"
#include "typeid.h"
#include "ulid.h"
#include "uuid.h"

IDM_BEGIN_DECLS

#define IDM_VERSION_STRING "0.3.0"
#define IDM_VERSION_NUMBER 0x000300

/* The library's version string, which may differ from the header's when
 * linked dynamically. Thread-safe: yes. */
IDM_API const char *idm_version(void);

IDM_END_DECLS

#endif
