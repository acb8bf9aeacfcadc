/*
 * udf_uuid.c - the UUID and ULID functions of idmint_udf.
 *
 *   uuid_v7()             a UUIDv7 (RFC 9562) as its 36-character text,
 *                         strictly greater than every one this server
 *                         process returned before (MariaDB 11.7's name)
 *   uuid_v4()             a random UUIDv4 as text (MariaDB 11.7's name)
 *   uuid_v7_bin()         a UUIDv7 as its 16 bytes, for BINARY(16) keys
 *                         (MySQL has no UUID type)
 *   ulid()                a ULID, 26 characters of Crockford base32
 *   uuid_v7_timestamp(X)  the Unix milliseconds of a time-based UUID (text
 *                         in any form idm_uuid_parse reads, or 16 bytes);
 *                         NULL for NULL, for what does not parse, and for
 *                         UUIDs without a time (version 4, ...)
 *
 * Formats are libidmint's (uuid.h, ulid.h); nothing is encoded here.
 */
#include "udf.h"

#include <string.h>

/* The process's generator, which _init put in initid->ptr (no lock per
 * row). */
static idm_gen *gen_of(UDF_INIT *initid)
{
    return (idm_gen *)(void *)initid->ptr;
}

/* Fills *u with one UUID of version 4 or 7; 0, or 1 when minting failed
 * (the row gets NULL). */
static int mint_uuid(UDF_INIT *initid, int version, idm_uuid *u)
{
    idm_gen *g = gen_of(initid);
    int rc = version == 4 ? idm_uuidv4_next_n(g, u, 1, NULL) : idm_uuidv7_next_n(g, u, 1, NULL);
    return rc != IDM_OK;
}

/* The text of a minted UUID into result. */
static char *uuid_text(UDF_INIT *initid, int version, char *result, unsigned long *length,
                       char *is_null, char *error)
{
    idm_uuid u;
    if (mint_uuid(initid, version, &u) != 0 ||
        idm_uuid_format(&u, result, IDM_UUID_STRLEN + 1) != IDM_OK) {
        *is_null = 1;
        *error = 1;
        return NULL;
    }
    *length = IDM_UUID_STRLEN;
    return result;
}

/* _init of a generator: the argument check, and the generator made now so
 * that a failure is a clear error of the statement, not NULL rows; the
 * statement keeps it in initid->ptr (the process owns it: no _deinit). */
static my_bool init_minting(UDF_INIT *initid, UDF_ARGS *args, char *message, const char *name,
                            unsigned max_length)
{
    if (udf_init_generator(initid, args, message, name, max_length) != 0) {
        return 1;
    }
    idm_gen *g = udf_gen(message);
    initid->ptr = (char *)(void *)g;
    return g == NULL;
}

my_bool uuid_v7_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
    return init_minting(initid, args, message, "uuid_v7", IDM_UUID_STRLEN);
}

char *uuid_v7(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length,
              char *is_null, char *error)
{
    (void)args;
    return uuid_text(initid, 7, result, length, is_null, error);
}

my_bool uuid_v4_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
    return init_minting(initid, args, message, "uuid_v4", IDM_UUID_STRLEN);
}

char *uuid_v4(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length,
              char *is_null, char *error)
{
    (void)args;
    return uuid_text(initid, 4, result, length, is_null, error);
}

my_bool uuid_v7_bin_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
    return init_minting(initid, args, message, "uuid_v7_bin", sizeof(idm_uuid));
}

char *uuid_v7_bin(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length,
                  char *is_null, char *error)
{
    (void)args;
    idm_uuid u;
    if (mint_uuid(initid, 7, &u) != 0) {
        *is_null = 1;
        *error = 1;
        return NULL;
    }
    memcpy(result, u.bytes, sizeof u.bytes);
    *length = sizeof u.bytes;
    return result;
}

my_bool ulid_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
    return init_minting(initid, args, message, "ulid", IDM_ULID_STRLEN);
}

char *ulid(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length, char *is_null,
           char *error)
{
    (void)args;
    idm_ulid u;
    if (idm_ulid_next_n(gen_of(initid), &u, 1, NULL) != IDM_OK ||
        idm_ulid_format(&u, result, IDM_ULID_STRLEN + 1) != IDM_OK) {
        *is_null = 1;
        *error = 1;
        return NULL;
    }
    *length = IDM_ULID_STRLEN;
    return result;
}

my_bool uuid_v7_timestamp_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
    return udf_init_decoder(initid, args, message, "uuid_v7_timestamp", 20);
}

long long uuid_v7_timestamp(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error)
{
    (void)initid;
    (void)error;
    const char *x = args->args[0];
    unsigned long len = args->lengths[0];
    idm_uuid u;
    if (x == NULL) {
        *is_null = 1;
        return 0;
    }
    /* 16 bytes are the UUID itself (BINARY(16), uuid_v7_bin()); anything
     * else is text. */
    if (len == sizeof u.bytes) {
        memcpy(u.bytes, x, sizeof u.bytes);
    } else if (idm_uuid_parse(x, len, &u, NULL) != IDM_OK) {
        *is_null = 1;
        return 0;
    }
    idm_uuid_fields f;
    idm_uuid_decode(&u, &f);
    if (!f.has_time) {
        *is_null = 1;
        return 0;
    }
    return f.unix_ms;
}
