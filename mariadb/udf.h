/*
 * udf.h - idmint_udf, libidmint's IDs as MariaDB/MySQL user-defined
 * functions (CREATE FUNCTION ... SONAME 'idmint_udf.so'; mariadb/install.sql).
 *
 * The server calls a function's _init once per statement (and thread), the
 * function once per row, and _deinit at the end of the statement, from many
 * threads at once. Everything per statement lives in UDF_INIT; everything
 * per process (the generator of the random and time-ordered formats, the
 * host-wide snowflake) is made once, under a lock, on the first _init that
 * needs it, and shared by every thread: libidmint's generators are
 * thread-safe. No call allocates: results go into the buffer the server
 * passes (255 bytes or more).
 *
 * The C names are the SQL names (the server looks them up with dlsym), so
 * they are exported; the rest of the module, libidmint included, is hidden.
 */
#ifndef IDMINT_UDF_H
#define IDMINT_UDF_H

#include <mysql.h> /* UDF_ARGS, UDF_INIT, my_bool (libmariadb-dev's mariadb_com.h) */

#include <idmint/idmint.h>

#if defined(__GNUC__)
#define UDF_EXPORT __attribute__((visibility("default")))
#else
#define UDF_EXPORT
#endif

/* The server's message buffer holds MYSQL_ERRMSG_SIZE (512) bytes; the
 * manual asks for short messages, but some name a path. */
#define UDF_MSG_CAP 256

/* The process's generator for UUIDv4, UUIDv7 and ULID (made on the first
 * call, kept until the module is unloaded), or NULL with the reason in
 * message (UDF_MSG_CAP bytes). Thread-safe: yes. */
idm_gen *udf_gen(char *message);

/* The checks every _init shares. Each returns 0, or 1 with the reason in
 * message: a generator takes no argument; a decoder takes one, which must
 * be a string (text or BINARY). Both also set what the server must know
 * of the result (its length, that it may be NULL, and, for generators,
 * that it differs on every row). */
my_bool udf_init_generator(UDF_INIT *initid, UDF_ARGS *args, char *message, const char *name,
                           unsigned max_length);
my_bool udf_init_decoder(UDF_INIT *initid, UDF_ARGS *args, char *message, const char *name,
                         unsigned max_length);

/* The SQL functions (the server's calling convention). */
UDF_EXPORT my_bool uuid_v7_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
UDF_EXPORT char *uuid_v7(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length,
                         char *is_null, char *error);
UDF_EXPORT my_bool uuid_v4_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
UDF_EXPORT char *uuid_v4(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length,
                         char *is_null, char *error);
UDF_EXPORT my_bool uuid_v7_bin_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
UDF_EXPORT char *uuid_v7_bin(UDF_INIT *initid, UDF_ARGS *args, char *result,
                             unsigned long *length, char *is_null, char *error);
UDF_EXPORT my_bool ulid_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
UDF_EXPORT char *ulid(UDF_INIT *initid, UDF_ARGS *args, char *result, unsigned long *length,
                      char *is_null, char *error);
UDF_EXPORT my_bool uuid_v7_timestamp_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
UDF_EXPORT long long uuid_v7_timestamp(UDF_INIT *initid, UDF_ARGS *args, char *is_null,
                                       char *error);
UDF_EXPORT my_bool snowflake_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
UDF_EXPORT long long snowflake(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error);

#endif
