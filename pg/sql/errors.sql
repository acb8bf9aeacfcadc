-- Bad input: clear errors, with SQLSTATE 22P02 for text that is not an ID.
SET TimeZone = 'UTC';
CREATE FUNCTION pg_temp.sqlstate(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- The messages in full, once each.
SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAI');
SELECT typeid('User');
SELECT idmint_inspect('not an id');

-- Every function's bad input, with its SQLSTATE.
SELECT q, pg_temp.sqlstate(q) FROM (VALUES
    ($$SELECT ulid_to_uuid('')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FA')$$),
    ($$SELECT ulid_to_uuid('81ARZ3NDEKTSV4RRFFQ69G5FAV')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAU')$$),
    ($$SELECT typeid_to_uuid('prefix_81h455vb4pex5vsknk084sn02q')$$),
    ($$SELECT typeid_to_uuid('PREFIX_01h455vb4pex5vsknk084sn02q')$$),
    ($$SELECT typeid_to_uuid('_01h455vb4pex5vsknk084sn02q')$$),
    ($$SELECT typeid_to_uuid('prefix_01H455VB4PEX5VSKNK084SN02Q')$$),
    ($$SELECT typeid(repeat('a', 64))$$),
    ($$SELECT typeid('_a')$$),
    ($$SELECT uuid_to_typeid('a1', uuidv7())$$),
    ($$SELECT idmint_inspect('')$$),
    ($$SELECT idmint_inspect('123456789012345678901')$$),
    ($$SELECT idmint_inspect('1', 'nonsense')$$),
    ($$SELECT idmint_inspect('1', 'time=41,node=10')$$),
    ($$SELECT snowflake_timestamp(-1)$$),
    ($$SELECT snowflake_timestamp(1, 'bogus')$$),
    ($$SELECT snowflake_nextval('insta_seq_missing', 1)$$),
    ($$SELECT uuidv7('-100 years')$$),
    ($$SELECT uuidv7('10000 years')$$)
) AS t(q);

CREATE SEQUENCE s;
SELECT q, pg_temp.sqlstate(q) FROM (VALUES
    ($$SELECT snowflake_nextval('s', 8192)$$),
    ($$SELECT snowflake_nextval('s', -1)$$)
) AS t(q);

-- The snowflake settings are server-wide: not per session, and checked.
SET pg_idmint.layout = 'discord';
ALTER SYSTEM SET pg_idmint.layout = 'bogus';
ALTER SYSTEM SET pg_idmint.node = -1;
SET pg_idmint.no_such_setting = 1;
