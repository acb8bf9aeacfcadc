-- pg_idmint 0.2 -> 0.3: pg_uuidv7's names; the UUID extract functions
-- leakproof, as in PostgreSQL 17 and 18 (no input makes them fail, so the
-- planner may push them below a security barrier). uuidv7(interval)'s
-- wider range (to the year 10889) is in the module: its declaration does
-- not change. CREATE EXTENSION pg_idmint runs pg_idmint--0.2.sql and then
-- this; ALTER EXTENSION pg_idmint UPDATE runs this.
\echo Use "CREATE EXTENSION pg_idmint" or "ALTER EXTENSION pg_idmint UPDATE" to load this file. \quit

ALTER FUNCTION idmint_uuid_extract_timestamp(uuid) LEAKPROOF;
ALTER FUNCTION idmint_uuid_extract_version(uuid) LEAKPROOF;
-- PostgreSQL 18's names where pg_idmint made them (13 to 16), never the
-- server's own (17 has them, already leakproof).
DO $do$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idmint'
        WHERE p.proname IN ('uuid_extract_timestamp', 'uuid_extract_version')
    LOOP
        EXECUTE format('ALTER FUNCTION %s LEAKPROOF', f);
    END LOOP;
END
$do$;

-- pg_uuidv7's five functions (github.com/fboulnois/pg_uuidv7, 1.6), with
-- its signatures, defaults, volatility, strictness and parallel safety, so
-- SQL written for it runs unchanged. uuid_generate_v7() is uuidv7() (so it
-- is strictly increasing within a backend, which pg_uuidv7's is not). The
-- two decoders read the first 48 bits of any UUID, as pg_uuidv7's do;
-- uuid_extract_timestamp() gives NULL for a UUID that is not v1 or v7.
CREATE FUNCTION uuid_generate_v7() RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_uuidv7' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION uuid_v7_to_timestamptz(uuid) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_v7_to_timestamptz' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uuid_timestamptz_to_v7(timestamptz, zero bool = false) RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_timestamp_to_v7' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uuid_v7_to_timestamp(uuid) RETURNS timestamp
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_v7_to_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uuid_timestamp_to_v7(timestamp, zero bool = false) RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_timestamp_to_v7' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION uuid_generate_v7() IS
    'pg_uuidv7''s name for uuidv7(): a UUIDv7, strictly greater than every one this backend made before';
COMMENT ON FUNCTION uuid_v7_to_timestamptz(uuid) IS
    'the first 48 bits of a UUID as Unix milliseconds (pg_uuidv7''s decoder: any version)';
COMMENT ON FUNCTION uuid_timestamptz_to_v7(timestamptz, bool) IS
    'a UUIDv7 of the time''s millisecond with 74 random bits, or zeros when zero is true (a range''s lower bound)';
COMMENT ON FUNCTION uuid_v7_to_timestamp(uuid) IS
    'the first 48 bits of a UUID as Unix milliseconds, in UTC (pg_uuidv7''s decoder: any version)';
COMMENT ON FUNCTION uuid_timestamp_to_v7(timestamp, bool) IS
    'a UUIDv7 of the UTC time''s millisecond with 74 random bits, or zeros when zero is true';
