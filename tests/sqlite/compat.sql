-- tests/sqlite/compat.sql - what sqlean's uuid extension (its test/uuid.sql
-- and src/uuid/extension.c) and SQLite's ext/misc/uuid.c promise, checked
-- against idmint_sqlite. Every row must be "NAME|1" (test_sqlite.sh).

-- v4 under sqlean's, SQLite's and PostgreSQL's names
SELECT 'v4_uuid4', uuid4() LIKE '________-____-4___-____-____________';
SELECT 'v4_gen_random_uuid', gen_random_uuid() LIKE '________-____-4___-____-____________';
SELECT 'v4_uuid', uuid() LIKE '________-____-4___-____-____________';
SELECT 'v4_variant', substr(uuid4(), 20, 1) IN ('8', '9', 'a', 'b');
SELECT 'v4_lowercase', (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) SELECT count(*) FROM (SELECT uuid() u FROM c) WHERE u GLOB '*[^0-9a-f-]*' OR u NOT LIKE '________-____-____-____-____________') = 0;
SELECT 'v4_typeof', typeof(uuid4()) = 'text';

-- uuid_str: the accepted text forms
SELECT 'str_canonical', uuid_str('d5a80b20-0d8f-11e5-b8cb-080027b6ec40') = 'd5a80b20-0d8f-11e5-b8cb-080027b6ec40';
SELECT 'str_no_dashes', uuid_str('d5a80b200d8f11e5b8cb080027b6ec40') = 'd5a80b20-0d8f-11e5-b8cb-080027b6ec40';
SELECT 'str_braces', uuid_str('{d5a80b20-0d8f-11e5-b8cb-080027b6ec40}') = 'd5a80b20-0d8f-11e5-b8cb-080027b6ec40';
SELECT 'str_upper', uuid_str('D5A80B20-0D8F-11E5-B8CB-080027B6EC40') = 'd5a80b20-0d8f-11e5-b8cb-080027b6ec40';
SELECT 'str_dash_per_pair', uuid_str('a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11') = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
SELECT 'str_odd_groups', uuid_str('{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}') = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
SELECT 'str_leading_dash', uuid_str('-a0eebc999c0b4ef8bb6d6bb9bd380a11') = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
SELECT 'str_open_brace_only', uuid_str('{a0eebc999c0b4ef8bb6d6bb9bd380a11') = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
SELECT 'str_close_brace_only', uuid_str('a0eebc999c0b4ef8bb6d6bb9bd380a11}') = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
SELECT 'str_blob', uuid_str(x'd5a80b200d8f11e5b8cb080027b6ec40') = 'd5a80b20-0d8f-11e5-b8cb-080027b6ec40';
SELECT 'str_random_blob', uuid_str(randomblob(16)) LIKE '________-____-____-____-____________';
SELECT 'str_of_v4', uuid_str(uuid4()) LIKE '________-____-4___-____-____________';
SELECT 'str_of_v7', uuid_str(uuid7()) LIKE '________-____-7___-____-____________';
-- ... and what gives NULL
SELECT 'str_word', uuid_str('hello') IS NULL;
SELECT 'str_empty', uuid_str('') IS NULL;
SELECT 'str_null', uuid_str(NULL) IS NULL;
SELECT 'str_integer', uuid_str(12345) IS NULL;
SELECT 'str_real', uuid_str(1.5) IS NULL;
SELECT 'str_short', uuid_str('d5a80b20-0d8f-11e5-b8cb-080027b6ec4') IS NULL;
SELECT 'str_long', uuid_str('d5a80b20-0d8f-11e5-b8cb-080027b6ec400') IS NULL;
SELECT 'str_dash_in_pair', uuid_str('d5a80b2-00d8f-11e5-b8cb-080027b6ec40') IS NULL;
SELECT 'str_two_dashes', uuid_str('d5a80b20--0d8f-11e5-b8cb-080027b6ec40') IS NULL;
SELECT 'str_trailing_dash', uuid_str('d5a80b20-0d8f-11e5-b8cb-080027b6ec40-') IS NULL;
SELECT 'str_stray_char', uuid_str('d5a80b20-0d8f-11e5-b8cb-080027b6ec4g') IS NULL;
SELECT 'str_space', uuid_str(' d5a80b20-0d8f-11e5-b8cb-080027b6ec40') IS NULL;
SELECT 'str_urn', uuid_str('urn:uuid:d5a80b20-0d8f-11e5-b8cb-080027b6ec40') IS NULL;
SELECT 'str_blob_15', uuid_str(x'd5a80b200d8f11e5b8cb080027b6ec') IS NULL;
SELECT 'str_blob_17', uuid_str(x'd5a80b200d8f11e5b8cb080027b6ec4000') IS NULL;

-- uuid_blob
SELECT 'blob_text', uuid_blob('d5a80b20-0d8f-11e5-b8cb-080027b6ec40') = x'd5a80b200d8f11e5b8cb080027b6ec40';
SELECT 'blob_typeof', typeof(uuid_blob('d5a80b20-0d8f-11e5-b8cb-080027b6ec40')) = 'blob';
SELECT 'blob_of_v4', typeof(uuid_blob(uuid4())) = 'blob';
SELECT 'blob_of_v7', typeof(uuid_blob(uuid7())) = 'blob';
SELECT 'blob_of_blob', uuid_blob(x'00112233445566778899aabbccddeeff') = x'00112233445566778899aabbccddeeff';
SELECT 'blob_random', typeof(uuid_blob(randomblob(16))) = 'blob';
SELECT 'blob_braces', uuid_blob('{D5A80B20-0D8F-11E5-B8CB-080027B6EC40}') = x'd5a80b200d8f11e5b8cb080027b6ec40';
SELECT 'blob_roundtrip', uuid_str(uuid_blob('d5a80b20-0d8f-11e5-b8cb-080027b6ec40')) = 'd5a80b20-0d8f-11e5-b8cb-080027b6ec40';
SELECT 'blob_word', uuid_blob('hello') IS NULL;
SELECT 'blob_empty', uuid_blob('') IS NULL;
SELECT 'blob_null', uuid_blob(NULL) IS NULL;
SELECT 'blob_integer', uuid_blob(7) IS NULL;
SELECT 'blob_short_blob', uuid_blob(x'00') IS NULL;

-- uuid7 and uuid7(seconds)
SELECT 'v7_form', uuid7() LIKE '________-____-7___-____-____________';
SELECT 'v7_variant', substr(uuid7(), 20, 1) IN ('8', '9', 'a', 'b');
SELECT 'v7_zero', uuid7(0) LIKE '00000000-0000-7___-____-____________';
SELECT 'v7_seconds', uuid7(1733668387) LIKE '0193a6b0-38b8-7___-____-____________';
SELECT 'v7_seconds_variant', substr(uuid7(1733668387), 20, 1) IN ('8', '9', 'a', 'b');
SELECT 'v7_seconds_random', uuid7(1733668387) <> uuid7(1733668387);
SELECT 'v7_seconds_time', uuid7_timestamp_ms(uuid7(1717777901)) = 1717777901000;
-- sqlean keeps S * 1000 to 48 bits: -1 s is 2^48 - 1000 ms
SELECT 'v7_negative', uuid7_timestamp_ms(uuid7(-1)) = 281474976709656;
-- a non-integer argument is ignored: the current time
SELECT 'v7_text_arg', abs(uuid7_timestamp_ms(uuid7('1733668387')) - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) < 60000;
SELECT 'v7_null_arg', abs(uuid7_timestamp_ms(uuid7(NULL)) - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) < 60000;
SELECT 'v7_real_arg', abs(uuid7_timestamp_ms(uuid7(1.5)) - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) < 60000;

-- uuid7_timestamp_ms
SELECT 'ts_text', uuid7_timestamp_ms('018ff38a-a5c9-712d-bc80-0550b3ad41a2') = 1717777901001;
SELECT 'ts_blob', uuid7_timestamp_ms(uuid_blob('018ff38a-a5c9-712d-bc80-0550b3ad41a2')) = 1717777901001;
SELECT 'ts_zero', uuid7_timestamp_ms('00000000-0000-7000-0000-000000000000') = 0;
SELECT 'ts_max', uuid7_timestamp_ms('ffffffff-ffff-7000-0000-000000000000') = 281474976710655;
SELECT 'ts_typeof', typeof(uuid7_timestamp_ms('018ff38a-a5c9-712d-bc80-0550b3ad41a2')) = 'integer';
SELECT 'ts_typeof_new', typeof(uuid7_timestamp_ms(uuid7())) = 'integer';
SELECT 'ts_word', uuid7_timestamp_ms('hello') IS NULL;
SELECT 'ts_empty', uuid7_timestamp_ms('') IS NULL;
SELECT 'ts_null', uuid7_timestamp_ms(NULL) IS NULL;
SELECT 'ts_v4', uuid7_timestamp_ms('b2df66e7-bd9a-45f4-8c0d-b9fd73cc9f18') IS NULL;
SELECT 'ts_new_v4', uuid7_timestamp_ms(uuid4()) IS NULL;
SELECT 'ts_v1', uuid7_timestamp_ms('d5a80b20-0d8f-11e5-b8cb-080027b6ec40') IS NULL;
