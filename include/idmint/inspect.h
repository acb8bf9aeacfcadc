/*
 * idmint/inspect.h - recognise an ID's kind from its text and decode it.
 *
 * Recognition (idm_inspect with kind IDM_KIND_AUTO), first match wins:
 *   - containing "_"                                          -> typeid
 *   - a UUID form: 36 characters with hyphens (or "-" at offset 8, so a
 *     short UUID gets a UUID error), 32 hex digits, "{...}",
 *     or "urn:uuid:..."                                       -> uuid
 *   - 26 characters                                           -> ulid
 *   - 27 characters                                           -> ksuid
 *   - 1 to 20 decimal digits                                  -> snowflake
 * A 32-character all-hex input is a UUID even when it is all digits.
 * A forced kind applies only that kind's rules.
 */
#ifndef IDMINT_INSPECT_H
#define IDMINT_INSPECT_H

#include "common.h"
#include "error.h"
#include "ksuid.h"
#include "snowflake.h"
#include "typeid.h"
#include "ulid.h"
#include "uuid.h"

IDM_BEGIN_DECLS

enum {
    IDM_KIND_AUTO = 0,
    IDM_KIND_UUID = 1,
    IDM_KIND_ULID = 2,
    IDM_KIND_KSUID = 3,
    IDM_KIND_TYPEID = 4,
    IDM_KIND_SNOWFLAKE = 5
};

/* The name of a kind ("uuid", "ulid", ...), or NULL (also for
 * IDM_KIND_AUTO). Thread-safe: yes. */
IDM_API const char *idm_kind_name(int kind);

/* The kind named by len bytes of name, or -1. Thread-safe: yes. */
IDM_API int idm_kind_from_name(const char *name, size_t len);

typedef struct idm_inspection {
    int kind;
    int has_time; /* unix_ms is meaningful */
    int64_t unix_ms;
    idm_uuid uuid;          /* uuid, ulid, typeid: the 128 bits */
    idm_uuid_fields fields; /* uuid, typeid: decoded UUID fields */
    idm_ksuid ksuid;        /* ksuid */
    idm_typeid typeid;      /* typeid: prefix (uuid copied above) */
    uint64_t snowflake;     /* snowflake: the ID */
    idm_sf_parts parts;     /* snowflake: its fields */
} idm_inspection;

/* Decodes len bytes of text as kind (IDM_KIND_AUTO to recognise it).
 * layout is needed for snowflakes (NULL means twitter). Returns IDM_OK,
 * IDM_EPARSE (with a reason and err->offset) or IDM_EINVAL (unknown kind).
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_inspect(const char *text, size_t len, int kind,
                                      const idm_sf_layout *layout, idm_inspection *out,
                                      idm_error *err);

/* Parses any 128-bit text form (UUID forms, ULID, TypeID) into its bits;
 * *kind_out (may be NULL) receives the kind. KSUIDs and snowflakes are
 * IDM_EUNSUPPORTED with a message saying they are not 128-bit IDs.
 * Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_parse_128(const char *text, size_t len, idm_uuid *out, int *kind_out,
                                        idm_error *err);

IDM_END_DECLS

#endif
