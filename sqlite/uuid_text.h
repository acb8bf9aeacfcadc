/*
 * uuid_text.h - the UUID text grammar of SQLite's ext/misc/uuid.c and
 * sqlean (uuid_str, uuid_blob, uuid7_timestamp_ms, uuid_extract_*): a pure
 * function of the bytes, so that fuzz/fuzz_sqlite_uuid.c can call it
 * without SQLite.
 */
#ifndef IDMINT_SQLITE_UUID_TEXT_H
#define IDMINT_SQLITE_UUID_TEXT_H

#include <stddef.h>

#include <idmint/uuid.h>

/* An optional "{", then 16 pairs of hex digits, each pair optionally
 * preceded by one "-", then an optional "}" and the end of the text (its
 * len bytes, or its first NUL, as uuid.c reads a C string). So
 * "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}", "-a0ee..." and "{a0ee...a11"
 * are UUIDs, "a0e-ebc..." and "a0ee...a11-" are not. 0 with *out, or -1.
 * The digits are decoded by the library's parser. */
int idmsq_uuid_text_read(const char *z, size_t len, idm_uuid *out);

#endif
