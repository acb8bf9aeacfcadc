/*
 * snowflake_fns.c - 64-bit snowflake IDs.
 *
 *   snowflake() bigint
 *       the next ID of the server-wide generator (sfshared.c) for node
 *       pg_idmint.node in layout pg_idmint.layout: unique across every
 *       backend, increasing within each, never repeated after a crash or a
 *       restart with the clock set back.
 *   snowflake_nextval(seq regclass, shard int) bigint
 *       Instagram's scheme, in the instagram layout (41 bits of ms since
 *       1314220021721, 13 of shard, 10 of sequence): the sequence's next
 *       value modulo 1024 (taken non-negative) as the low field. As unique
 *       as Instagram's: at most 1024 IDs per millisecond and shard.
 *   snowflake_timestamp(id bigint [, layout text]) timestamptz
 *       the time in an ID, by pg_idmint.layout (STABLE: the setting may
 *       change) or by the layout given (IMMUTABLE).
 *
 * A bigint is signed: an ID with the 64th bit set (only layouts that use
 * all 64 bits, far in the future) is stored as a negative number and read
 * back by snowflake_timestamp as the same bits.
 */
#include "pg_idmint.h"

#include "utils/fmgrprotos.h"

PG_FUNCTION_INFO_V1(pg_idmint_snowflake);
Datum pg_idmint_snowflake(PG_FUNCTION_ARGS)
{
    (void)fcinfo;
    PG_RETURN_INT64((int64)pgi_sf_next());
}

static TimestampTz decode_time(const idm_sf_layout *l, int64 id)
{
    idm_sf_parts parts;
    idm_error err = {0};
    if (idm_sf_decode(l, (uint64)id, &parts, &err) != IDM_OK) {
        char spec[IDM_SF_SPEC_CAP];
        if (idm_sf_layout_format(l, spec, sizeof spec) != IDM_OK)
            strlcpy(spec, "?", sizeof spec);
        ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                        errmsg("invalid snowflake for layout %s: %lld", spec, (long long)id),
                        errdetail("%s", err.msg)));
    }
    return pgi_timestamptz_from_unix_ms(parts.unix_ms);
}

PG_FUNCTION_INFO_V1(pg_idmint_snowflake_timestamp);
Datum pg_idmint_snowflake_timestamp(PG_FUNCTION_ARGS)
{
    PG_RETURN_TIMESTAMPTZ(decode_time(pgi_layout(), PG_GETARG_INT64(0)));
}

PG_FUNCTION_INFO_V1(pg_idmint_snowflake_timestamp_layout);
Datum pg_idmint_snowflake_timestamp_layout(PG_FUNCTION_ARGS)
{
    idm_sf_layout l;
    pgi_layout_arg(PG_GETARG_TEXT_PP(1), &l);
    PG_RETURN_TIMESTAMPTZ(decode_time(&l, PG_GETARG_INT64(0)));
}

/* --- Instagram's snowflake_nextval -------------------------------------------- */

PG_FUNCTION_INFO_V1(pg_idmint_snowflake_nextval);
Datum pg_idmint_snowflake_nextval(PG_FUNCTION_ARGS)
{
    Oid seq = PG_GETARG_OID(0);
    int32 shard = PG_GETARG_INT32(1);
    static idm_sf_layout insta;
    static bool have_layout;
    if (!have_layout) {
        idm_error err = {0};
        int rc = idm_sf_layout_preset(&insta, "instagram", 9, &err);
        if (rc != IDM_OK)
            pgi_raise(rc, &err, "snowflake_nextval");
        have_layout = true;
    }
    uint64 max_shard = idm_sf_layout_max_node(&insta);
    if (shard < 0 || (uint64)shard > max_shard)
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake_nextval: shard %d is out of range", shard),
                        errdetail("The instagram layout's shard field holds 0 to %llu.",
                                  (unsigned long long)max_shard)));
    int64 next = DatumGetInt64(DirectFunctionCall1(nextval_oid, ObjectIdGetDatum(seq)));
    uint64 seq_mod = (uint64)1 << insta.bits[IDM_SF_SEQ];
    uint64 low = (uint64)(((next % (int64)seq_mod) + (int64)seq_mod) % (int64)seq_mod);
    int64 now_ms = pgi_now_ns() / 1000000;
    if (now_ms < insta.epoch_ms || now_ms > idm_sf_layout_max_unix_ms(&insta))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake_nextval: the clock is outside the instagram layout's "
                               "time range")));
    uint64 units = (uint64)(now_ms - insta.epoch_ms) / (uint64)insta.unit_ms;
    uint64 id = units << insta.shift[IDM_SF_TIME] | (uint64)shard << insta.shift[IDM_SF_NODE] |
                low << insta.shift[IDM_SF_SEQ];
    PG_RETURN_INT64((int64)id);
}
