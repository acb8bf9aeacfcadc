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
 * PostgreSQL 18 keeps its UUIDv7s in order with 12 bits of sub-millisecond
 * time; libidmint uses RFC 9562's method 1 (a counter seeded at random each
 * millisecond), which keeps the same promise - strictly increasing within
 * a backend - and more random bits. Both extract the millisecond.
 */
#include "pg_idmint.h"

#include "common/int.h"
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

/* --- uuidv7(shift) ---------------------------------------------------------- */

/* One generator per shift: a clock that reads the system clock plus the
 * shift, so UUIDs made with one shift keep their order; another shift
 * starts a new generator (order across shifts is the timestamps'). */
static struct {
    idm_gen *gen;
    Interval shift;
    int64 shift_ns; /* the shift as of the latest call */
} shifted;

static int shifted_now(void *ctx, int64_t *unix_ns)
{
    (void)ctx;
    *unix_ns = pgi_now_ns() + shifted.shift_ns;
    return IDM_OK;
}

static void shifted_sleep(void *ctx, int64_t ns)
{
    (void)ctx;
    idm_clock sys = idm_clock_system();
    sys.sleep_ns(sys.ctx, ns);
}

PG_FUNCTION_INFO_V1(pg_idmint_uuidv7_shift);
Datum pg_idmint_uuidv7_shift(PG_FUNCTION_ARGS)
{
    Interval *shift = PG_GETARG_INTERVAL_P(0);
    int64 now_ns = pgi_now_ns();
    TimestampTz now = pgi_timestamptz_from_unix_us(now_ns / 1000);
    TimestampTz moved = DatumGetTimestampTz(DirectFunctionCall2(
        timestamptz_pl_interval, TimestampTzGetDatum(now), IntervalPGetDatum(shift)));
    /* The library's clock counts Unix nanoseconds in 64 bits: the shifted
     * time must lie between 1970 and 2262 (a UUIDv7 could hold more). */
    int64 delta_us;
    if (pg_sub_s64_overflow(moved, now, &delta_us) || delta_us > (PG_INT64_MAX - now_ns) / 1000 ||
        now_ns / 1000 + delta_us < 0)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("uuidv7: now + shift is outside the range of UUIDv7 timestamps "
                               "this extension makes"),
                        errdetail("The shifted time must lie between 1970-01-01 and "
                                  "2262-04-11.")));
    shifted.shift_ns = delta_us * 1000;

    if (shifted.gen == NULL || memcmp(&shifted.shift, shift, sizeof *shift) != 0) {
        idm_gen_free(shifted.gen);
        shifted.gen = NULL;
        idm_clock clock = {shifted_now, shifted_sleep, NULL};
        shifted.gen = pgi_gen_new(&clock);
        shifted.shift = *shift;
    }
    PG_RETURN_UUID_P(mint_uuid(shifted.gen, 7));
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
