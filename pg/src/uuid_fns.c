/*
 * uuid_fns.c - PostgreSQL 18's UUID functions for older servers.
 *
 *   uuidv4()                      a UUIDv4 (18's name for gen_random_uuid)
 *   uuidv7()                      a UUIDv7 (RFC 9562), strictly greater than
 *                                 every one this backend made before
 *   uuidv7(shift interval)        the same with the timestamp moved by shift
 *                                 (added as timestamptz + interval is, in the
 *                                 session's time zone); increasing while the
 *                                 shift stays the same, as in 18
 *   uuid_extract_timestamp(uuid)  timestamptz of a version 1 or 7 UUID of
 *                                 the RFC 9562 variant, else NULL
 *   uuid_extract_version(uuid)    the version of an RFC 9562 variant UUID,
 *                                 else NULL
 *
 * and pg_uuidv7's names: uuid_generate_v7() (uuidv7() under another name),
 * uuid_v7_to_timestamptz(uuid), uuid_v7_to_timestamp(uuid),
 * uuid_timestamptz_to_v7(timestamptz, zero), uuid_timestamp_to_v7(timestamp,
 * zero).
 *
 * PostgreSQL 18 keeps its UUIDv7s in order with 12 bits of sub-millisecond
 * time; libidmint uses RFC 9562's method 1 (a counter seeded at random each
 * millisecond), which keeps the same promise - strictly increasing within
 * a backend - and more random bits. Both extract the millisecond.
 */
#include "pg_idmint.h"

#include "catalog/pg_type.h"
#include "utils/fmgrprotos.h"
#include "utils/uuid.h"

/* One UUID of version 4 or 7 from g, palloc'd in the caller's context. */
static pg_uuid_t *mint_uuid(idm_gen *g, int version)
{
    pg_uuid_t *u = palloc(sizeof *u);
    idm_uuid v;
    idm_error err;
    pgi_error_init(&err);
    int rc = version == 4 ? idm_uuidv4_next_n(g, &v, 1, &err) : idm_uuidv7_next_n(g, &v, 1, &err);
    if (unlikely(rc != IDM_OK))
        pgi_raise(rc, &err, version == 4 ? "could not mint a UUIDv4" : "could not mint a UUIDv7");
    memcpy(u->data, v.bytes, UUID_LEN);
    return u;
}

/* --- uuidv4() --------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(pg_idmint_uuidv4);
Datum pg_idmint_uuidv4(PG_FUNCTION_ARGS)
{
    (void)fcinfo;
    PG_RETURN_UUID_P(mint_uuid(pgi_gen(), 4));
}

/* --- uuidv7() --------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(pg_idmint_uuidv7);
Datum pg_idmint_uuidv7(PG_FUNCTION_ARGS)
{
    (void)fcinfo;
    PG_RETURN_UUID_P(mint_uuid(pgi_gen(), 7));
}

/* --- the range of a UUIDv7's time ------------------------------------------- */

/* A UUIDv7's 48-bit millisecond runs from the Unix epoch to
 * 10889-08-02 05:31:50.655 UTC. */
#define V7_MAX_MS ((INT64CONST(1) << 48) - 1)

/* 22008 for a time a UUIDv7 cannot hold (pg_uuidv7 wraps it into 48
 * bits, a different time; PostgreSQL 18 raises an error too); what names
 * it. */
static void raise_v7_range(const char *fn, const char *what) pg_attribute_noreturn();
static void raise_v7_range(const char *fn, const char *what)
{
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("%s: %s is outside the range of a UUIDv7's time", fn, what),
                    errdetail("A UUIDv7 holds the Unix milliseconds from 1970-01-01 00:00:00 to "
                              "10889-08-02 05:31:50.655 UTC in 48 bits.")));
    pg_unreachable();
}

/* Unix microseconds of a finite timestamp (timestamptz and timestamp
 * count the same microseconds from 2000-01-01). */
static int64 unix_us_of(TimestampTz ts)
{
    return (int64)ts +
           (int64)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC;
}

/* --- uuidv7(shift) ---------------------------------------------------------- */

/* One generator per shift, its time moved by the library
 * (idm_gen_set_clock_shift_us): microseconds, so that the shifted time may
 * reach a UUIDv7's last millisecond in 10889, past 2262 where the clock's
 * 64-bit nanoseconds end. UUIDs made with one shift keep their order;
 * another shift starts a new generator (order across shifts is the
 * timestamps'). */
static struct {
    idm_gen *gen;
    Interval shift;
} shifted;

PG_FUNCTION_INFO_V1(pg_idmint_uuidv7_shift);
Datum pg_idmint_uuidv7_shift(PG_FUNCTION_ARGS)
{
    Interval *shift = PG_GETARG_INTERVAL_P(0);
    /* As PostgreSQL 18: now, to the microsecond, as a timestamptz, plus
     * the interval as timestamptz + interval adds it (months and days in
     * the session's time zone), then the millisecond. */
    TimestampTz now = pgi_timestamptz_from_unix_us(pgi_now_ns() / 1000);
    TimestampTz moved = DatumGetTimestampTz(DirectFunctionCall2(
        timestamptz_pl_interval, TimestampTzGetDatum(now), IntervalPGetDatum(shift)));
    if (TIMESTAMP_NOT_FINITE(moved) || unix_us_of(moved) < 0 ||
        unix_us_of(moved) / 1000 > V7_MAX_MS)
        raise_v7_range("uuidv7", "now + shift");

    if (shifted.gen == NULL || memcmp(&shifted.shift, shift, sizeof *shift) != 0) {
        idm_gen_free(shifted.gen);
        shifted.gen = NULL;
        shifted.gen = pgi_gen_new(NULL);
        shifted.shift = *shift;
    }
    /* Set on every call: a month's length depends on the day it is added
     * to. Both ends are in range, so the difference cannot overflow. */
    idm_gen_set_clock_shift_us(shifted.gen, moved - now);
    PG_RETURN_UUID_P(mint_uuid(shifted.gen, 7));
}

/* --- pg_uuidv7's names -------------------------------------------------------- */

/* pg_uuidv7 (github.com/fboulnois/pg_uuidv7) reads the first 48 bits of
 * any UUID as Unix milliseconds, whatever its version: a v4 gives a time
 * too. Its names keep that (code written for it keeps its results);
 * PostgreSQL 18's uuid_extract_timestamp() gives NULL instead. */
static int64 first_48_bits_ms(const pg_uuid_t *u)
{
    const uint8 *b = u->data;
    return (int64)((uint64)b[0] << 40 | (uint64)b[1] << 32 | (uint64)b[2] << 24 |
                   (uint64)b[3] << 16 | (uint64)b[4] << 8 | (uint64)b[5]);
}

PG_FUNCTION_INFO_V1(pg_idmint_uuid_v7_to_timestamptz);
Datum pg_idmint_uuid_v7_to_timestamptz(PG_FUNCTION_ARGS)
{
    PG_RETURN_TIMESTAMPTZ(pgi_timestamptz_from_unix_ms(first_48_bits_ms(PG_GETARG_UUID_P(0))));
}

/* The same instant as a timestamp without time zone: its UTC wall time. */
PG_FUNCTION_INFO_V1(pg_idmint_uuid_v7_to_timestamp);
Datum pg_idmint_uuid_v7_to_timestamp(PG_FUNCTION_ARGS)
{
    PG_RETURN_TIMESTAMP(
        (Timestamp)pgi_timestamptz_from_unix_ms(first_48_bits_ms(PG_GETARG_UUID_P(0))));
}

/* uuid_timestamptz_to_v7(ts, zero) and uuid_timestamp_to_v7(ts, zero): a
 * UUIDv7 of ts's millisecond (rounded down, a timestamp read as UTC), with
 * 74 random bits, or zeros when zero is true: the least UUIDv7 of that
 * millisecond, a range scan's lower bound. Not from the backend's
 * sequence: such UUIDs keep no order within their millisecond, as in
 * pg_uuidv7. A time before 1970 or after 10889-08-02 is 22008 (pg_uuidv7
 * wraps it into another time). */
PG_FUNCTION_INFO_V1(pg_idmint_uuid_timestamp_to_v7);
Datum pg_idmint_uuid_timestamp_to_v7(PG_FUNCTION_ARGS)
{
    TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    bool zero = PG_GETARG_BOOL(1);
    if (TIMESTAMP_NOT_FINITE(ts) || unix_us_of(ts) < 0 || unix_us_of(ts) / 1000 > V7_MAX_MS) {
        /* One C function for both: the argument's type names it. */
        bool plain = get_fn_expr_argtype(fcinfo->flinfo, 0) == TIMESTAMPOID;
        raise_v7_range(plain ? "uuid_timestamp_to_v7" : "uuid_timestamptz_to_v7",
                       DatumGetCString(DirectFunctionCall1(plain ? timestamp_out : timestamptz_out,
                                                           TimestampTzGetDatum(ts))));
    }
    idm_error err;
    pgi_error_init(&err);
    uint8 rand[10];
    int rc = IDM_OK;
    if (!zero)
        rc = idm_gen_random(pgi_gen(), rand, sizeof rand, &err);
    idm_uuid v;
    if (rc == IDM_OK)
        rc = idm_uuidv7_at(unix_us_of(ts) / 1000, zero ? NULL : rand, &v, &err);
    if (unlikely(rc != IDM_OK))
        pgi_raise(rc, &err, "could not make a UUIDv7");
    pg_uuid_t *u = palloc(sizeof *u);
    memcpy(u->data, v.bytes, UUID_LEN);
    PG_RETURN_UUID_P(u);
}

/* --- extraction -------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(pg_idmint_uuid_extract_version);
Datum pg_idmint_uuid_extract_version(PG_FUNCTION_ARGS)
{
    pg_uuid_t *u = PG_GETARG_UUID_P(0);
    idm_uuid v;
    memcpy(v.bytes, u->data, UUID_LEN);
    if (idm_uuid_variant(&v) != IDM_UUID_VARIANT_RFC9562)
        PG_RETURN_NULL();
    PG_RETURN_INT16((int16)idm_uuid_version(&v));
}

/* 100-ns ticks from the Gregorian epoch (1582-10-15) to the Unix epoch. */
#define GREGORIAN_TO_UNIX_100NS INT64CONST(122192928000000000)

PG_FUNCTION_INFO_V1(pg_idmint_uuid_extract_timestamp);
Datum pg_idmint_uuid_extract_timestamp(PG_FUNCTION_ARGS)
{
    pg_uuid_t *u = PG_GETARG_UUID_P(0);
    idm_uuid v;
    memcpy(v.bytes, u->data, UUID_LEN);
    if (idm_uuid_variant(&v) != IDM_UUID_VARIANT_RFC9562)
        PG_RETURN_NULL();
    int version = idm_uuid_version(&v);
    if (version == 7) {
        idm_uuid_fields f;
        idm_uuid_decode(&v, &f);
        PG_RETURN_TIMESTAMPTZ(pgi_timestamptz_from_unix_ms(f.unix_ms));
    }
    if (version == 1) {
        /* To the microsecond, as 18 does (the library's decoding gives
         * milliseconds): time_low, time_mid, then 12 bits of time_hi. */
        const uint8 *b = v.bytes;
        uint64 ticks = ((uint64)b[0] << 24 | (uint64)b[1] << 16 | (uint64)b[2] << 8 | b[3]) |
                       ((uint64)b[4] << 40 | (uint64)b[5] << 32) |
                       ((uint64)(b[6] & 0x0f) << 56 | (uint64)b[7] << 48);
        int64 unix_us = (int64)(ticks / 10) - GREGORIAN_TO_UNIX_100NS / 10;
        PG_RETURN_TIMESTAMPTZ(pgi_timestamptz_from_unix_us(unix_us));
    }
    PG_RETURN_NULL();
}
