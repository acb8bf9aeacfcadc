-- pg_idmint 0.2: IDs minted where the rows live (pg/README.md).
\echo Use "CREATE EXTENSION pg_idmint" to load this file. \quit

-- PostgreSQL 18's UUID functions. Always under an idmint_ prefix; also
-- under 18's own names where the server lacks them (13 to 17: uuidv4 and
-- uuidv7; 13 to 16: the extract functions too), so code written for 18
-- runs unchanged. On 18 the core functions keep their names.
CREATE FUNCTION idmint_uuidv4() RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_uuidv4' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION idmint_uuidv7() RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_uuidv7' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION idmint_uuidv7(shift interval) RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_uuidv7_shift' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION idmint_uuid_extract_timestamp(uuid) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_extract_timestamp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION idmint_uuid_extract_version(uuid) RETURNS smallint
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_extract_version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idmint_uuidv4() IS
    'a UUIDv4 (122 random bits from libidmint''s CSPRNG), as gen_random_uuid()';
COMMENT ON FUNCTION idmint_uuidv7() IS
    'a UUIDv7 (RFC 9562), strictly greater than every one this backend made before';
COMMENT ON FUNCTION idmint_uuidv7(interval) IS
    'a UUIDv7 whose timestamp is now + shift (increasing while the shift stays the same)';
COMMENT ON FUNCTION idmint_uuid_extract_timestamp(uuid) IS
    'the timestamp of a version 1 or 7 UUID of the RFC 9562 variant, else NULL';
COMMENT ON FUNCTION idmint_uuid_extract_version(uuid) IS
    'the version of a UUID of the RFC 9562 variant, else NULL';

DO $do$
DECLARE
    f record;
BEGIN
    FOR f IN SELECT * FROM (VALUES
        ('uuidv4', '', 'uuid', 'pg_idmint_uuidv4', 'VOLATILE PARALLEL SAFE'),
        ('uuidv7', '', 'uuid', 'pg_idmint_uuidv7', 'VOLATILE PARALLEL SAFE'),
        ('uuidv7', 'shift interval', 'uuid', 'pg_idmint_uuidv7_shift', 'VOLATILE STRICT PARALLEL SAFE'),
        ('uuid_extract_timestamp', 'uuid', 'timestamptz', 'pg_idmint_uuid_extract_timestamp',
         'IMMUTABLE STRICT PARALLEL SAFE'),
        ('uuid_extract_version', 'uuid', 'smallint', 'pg_idmint_uuid_extract_version',
         'IMMUTABLE STRICT PARALLEL SAFE'))
        AS t(name, args, result, symbol, props)
    LOOP
        IF to_regprocedure(format('pg_catalog.%s(%s)', f.name,
                                  regexp_replace(f.args, '^shift ', ''))) IS NULL THEN
            EXECUTE format('CREATE FUNCTION %I(%s) RETURNS %s AS %L, %L LANGUAGE C %s',
                           f.name, f.args, f.result, 'MODULE_PATHNAME', f.symbol, f.props);
            EXECUTE format('COMMENT ON FUNCTION %I(%s) IS %L', f.name, f.args,
                           format('PostgreSQL 18''s %s, from pg_idmint (as idmint_%s)', f.name, f.name));
        END IF;
    END LOOP;
END
$do$;

-- ULID, TypeID, KSUID.
CREATE FUNCTION ulid() RETURNS text
    AS 'MODULE_PATHNAME', 'pg_idmint_ulid' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION ulid_to_uuid(text) RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_ulid_to_uuid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uuid_to_ulid(uuid) RETURNS text
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_to_ulid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION typeid(prefix text) RETURNS text
    AS 'MODULE_PATHNAME', 'pg_idmint_typeid' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION typeid_to_uuid(text) RETURNS uuid
    AS 'MODULE_PATHNAME', 'pg_idmint_typeid_to_uuid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION uuid_to_typeid(prefix text, id uuid) RETURNS text
    AS 'MODULE_PATHNAME', 'pg_idmint_uuid_to_typeid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION ksuid() RETURNS text
    AS 'MODULE_PATHNAME', 'pg_idmint_ksuid' LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION ulid() IS 'a ULID, strictly greater than every one this backend made before';
COMMENT ON FUNCTION ulid_to_uuid(text) IS 'the 128 bits of a ULID as a uuid';
COMMENT ON FUNCTION uuid_to_ulid(uuid) IS 'the 128 bits of a uuid as a ULID';
COMMENT ON FUNCTION typeid(text) IS 'a TypeID: prefix, "_", and a UUIDv7 from uuidv7()''s sequence';
COMMENT ON FUNCTION typeid_to_uuid(text) IS 'the UUID inside a TypeID';
COMMENT ON FUNCTION uuid_to_typeid(text, uuid) IS 'a TypeID for a prefix and a UUID';
COMMENT ON FUNCTION ksuid() IS 'a KSUID, strictly greater than every one this backend made before';

-- Snowflakes.
CREATE FUNCTION snowflake() RETURNS bigint
    AS 'MODULE_PATHNAME', 'pg_idmint_snowflake' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION snowflake_nextval(seq regclass, shard int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'pg_idmint_snowflake_nextval' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION snowflake_timestamp(id bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'pg_idmint_snowflake_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_timestamp(id bigint, layout text) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'pg_idmint_snowflake_timestamp_layout' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake() IS
    'the next snowflake for pg_idmint.node in pg_idmint.layout: unique across every backend of the server';
COMMENT ON FUNCTION snowflake_nextval(regclass, int) IS
    'Instagram''s ID: ms since 2011-08-24T21:07:01.721Z, the shard, and nextval(seq) mod 1024';
COMMENT ON FUNCTION snowflake_timestamp(bigint) IS 'the time in a snowflake, by pg_idmint.layout';
COMMENT ON FUNCTION snowflake_timestamp(bigint, text) IS 'the time in a snowflake, by the layout given';

-- Decoding.
CREATE FUNCTION idmint_inspect(id text, layout text DEFAULT 'twitter') RETURNS jsonb
    AS 'MODULE_PATHNAME', 'pg_idmint_inspect' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION idmint_inspect(text, text) IS
    'what idmint inspect --json says about an ID: kind, time, and the fields of its kind';
