-- tests/sqlite/functions.sql - every function of idmint_sqlite besides
-- sqlean's and uuid.c's (compat.sql): PostgreSQL 18's names, ours, and
-- what NULL and garbage give. Every row must be "NAME|1" (test_sqlite.sh).

-- uuidv4, uuidv7, uuidv7_blob
SELECT 'uuidv4_form', uuidv4() LIKE '________-____-4___-____-____________' AND length(uuidv4()) = 36;
SELECT 'uuidv4_distinct', uuidv4() <> uuidv4();
SELECT 'uuidv7_form', uuidv7() LIKE '________-____-7___-____-____________' AND substr(uuidv7(), 20, 1) IN ('8', '9', 'a', 'b');
SELECT 'uuidv7_now', abs(uuid_extract_timestamp(uuidv7()) - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) < 60000;
SELECT 'uuidv7_blob_type', typeof(uuidv7_blob()) = 'blob' AND length(uuidv7_blob()) = 16;
SELECT 'uuidv7_blob_version', uuid_extract_version(uuidv7_blob()) = 7;
-- one generator per connection: text, blob and sqlean's uuid7() share its order
SELECT 'uuidv7_shared_order', (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
  SELECT count(*) FROM (SELECT i, u, lag(u) OVER (ORDER BY i) p FROM (SELECT i, CASE i % 3 WHEN 0 THEN uuidv7() WHEN 1 THEN uuid_str(uuidv7_blob()) ELSE uuid7() END u FROM c)) WHERE p >= u) = 0;

-- uuid_extract_timestamp: Unix ms of v1 and v7 (RFC 9562 variant), else NULL
SELECT 'extract_ts_v7', uuid_extract_timestamp('018ff38a-a5c9-712d-bc80-0550b3ad41a2') = 1717777901001;
SELECT 'extract_ts_v7_blob', uuid_extract_timestamp(x'018ff38aa5c9712dbc800550b3ad41a2') = 1717777901001;
SELECT 'extract_ts_typeof', typeof(uuid_extract_timestamp('018ff38a-a5c9-712d-bc80-0550b3ad41a2')) = 'integer';
-- RFC 9562 appendix A.1's v1: 2022-02-22 19:22:22 UTC
SELECT 'extract_ts_v1', uuid_extract_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846') = 1645557742000;
SELECT 'extract_ts_v4', uuid_extract_timestamp('b2df66e7-bd9a-45f4-8c0d-b9fd73cc9f18') IS NULL;
SELECT 'extract_ts_v6', uuid_extract_timestamp('1EC9414C-232A-6B00-B3C8-9F6BDECED846') IS NULL;
SELECT 'extract_ts_ncs_v7', uuid_extract_timestamp('00000000-0000-7000-0000-000000000000') IS NULL;
SELECT 'extract_ts_null', uuid_extract_timestamp(NULL) IS NULL;
SELECT 'extract_ts_garbage', uuid_extract_timestamp('not a uuid') IS NULL;
SELECT 'extract_ts_number', uuid_extract_timestamp(42) IS NULL;
SELECT 'extract_ts_datetime', datetime(uuid_extract_timestamp('018ff38a-a5c9-712d-bc80-0550b3ad41a2') / 1000, 'unixepoch') = '2024-06-07 16:31:41';

-- uuid_extract_version: of the RFC 9562 variant only
SELECT 'extract_version_4', uuid_extract_version(uuidv4()) = 4;
SELECT 'extract_version_7', uuid_extract_version(uuidv7()) = 7;
SELECT 'extract_version_1', uuid_extract_version('C232AB00-9414-11EC-B3C8-9F6BDECED846') = 1;
SELECT 'extract_version_typeof', typeof(uuid_extract_version(uuidv4())) = 'integer';
SELECT 'extract_version_ncs', uuid_extract_version('00000000-0000-4000-0000-000000000000') IS NULL;
SELECT 'extract_version_ms', uuid_extract_version('00000000-0000-4000-c000-000000000000') IS NULL;
SELECT 'extract_version_null', uuid_extract_version(NULL) IS NULL;
SELECT 'extract_version_garbage', uuid_extract_version('zz') IS NULL;
SELECT 'extract_version_blob', uuid_extract_version(x'00') IS NULL;

-- ulid, ksuid, typeid
SELECT 'ulid_form', length(ulid()) = 26 AND ulid() GLOB '[0-7]*' AND ulid() NOT GLOB '*[^0-9A-HJKMNP-TV-Z]*';
SELECT 'ulid_order', (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
  SELECT count(*) FROM (SELECT i, u, lag(u) OVER (ORDER BY i) p FROM (SELECT i, ulid() u FROM c)) WHERE p >= u) = 0;
SELECT 'ulid_inspect', json_extract(idmint_inspect(ulid()), '$.kind') = 'ulid';
SELECT 'ksuid_form', length(ksuid()) = 27 AND json_extract(idmint_inspect(ksuid()), '$.kind') = 'ksuid';
SELECT 'ksuid_order', (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
  SELECT count(*) FROM (SELECT i, u, lag(u) OVER (ORDER BY i) p FROM (SELECT i, ksuid() u FROM c)) WHERE p >= u) = 0;
SELECT 'typeid_form', typeid('user') GLOB 'user_01[0-9a-hjkmnp-tv-z]*' AND length(typeid('user')) = 31;
SELECT 'typeid_empty_prefix', length(typeid('')) = 26;
SELECT 'typeid_inspect', json_extract(idmint_inspect(typeid('user')), '$.prefix') = 'user';
SELECT 'typeid_is_v7', uuid_extract_version(json_extract(idmint_inspect(typeid('order_item')), '$.uuid')) = 7;
SELECT 'typeid_null', typeid(NULL) IS NULL;

-- idmint_inspect: the CLI's inspect --json object
SELECT 'inspect_uuid', idmint_inspect('018ff38a-a5c9-712d-bc80-0550b3ad41a2') = '{"input": "018ff38a-a5c9-712d-bc80-0550b3ad41a2", "kind": "uuid", "unix_ms": 1717777901001, "time": "2024-06-07T16:31:41.001Z", "uuid": "018ff38a-a5c9-712d-bc80-0550b3ad41a2", "version": 7, "variant": "rfc9562"}';
SELECT 'inspect_blob', json_extract(idmint_inspect(uuid_blob('018ff38a-a5c9-712d-bc80-0550b3ad41a2')), '$.unix_ms') = 1717777901001;
SELECT 'inspect_valid_json', json_valid(idmint_inspect(uuidv4()));
SELECT 'inspect_snowflake', json_extract(idmint_inspect('1541815603606036480'), '$.kind') = 'snowflake';
SELECT 'inspect_layout', json_extract(idmint_inspect('1541815603606036480', 'discord'), '$.layout') = 'discord';
SELECT 'inspect_null', idmint_inspect(NULL) IS NULL;
SELECT 'inspect_null_layout', json_extract(idmint_inspect('1541815603606036480', NULL), '$.layout') = 'twitter';

-- flags: pure functions are accepted where SQLite demands determinism
-- (errors.txt checks that the generators are refused there)
CREATE TABLE flags_t(u TEXT CHECK (uuid_str(u) IS NOT NULL), b BLOB AS (uuid_blob(u)),
                     v INTEGER AS (uuid_extract_version(u)) STORED);
CREATE INDEX flags_ts ON flags_t(uuid7_timestamp_ms(u));
CREATE INDEX flags_pg ON flags_t(uuid_extract_timestamp(u)) WHERE uuid_extract_version(u) = 7;
CREATE INDEX flags_inspect ON flags_t(idmint_inspect(u));
INSERT INTO flags_t(u) VALUES (uuidv7()), (uuidv7()), (uuid4());
SELECT 'pure_in_index', (SELECT count(*) FROM flags_t INDEXED BY flags_ts WHERE uuid7_timestamp_ms(u) > 0) = 2;
SELECT 'pure_generated', (SELECT count(*) FROM flags_t WHERE uuid_str(b) = u AND v IN (4, 7)) = 3;
-- innocuous generators work in views, triggers and defaults of an untrusted schema
PRAGMA trusted_schema = OFF;
CREATE TABLE inno_t(id TEXT PRIMARY KEY DEFAULT (uuidv7()), k TEXT DEFAULT (ulid()), n INTEGER);
CREATE VIEW inno_v AS SELECT uuid4() a, uuidv7() b, ksuid() c, typeid('v') d, uuid_blob(uuid()) e;
INSERT INTO inno_t(n) VALUES (1), (2);
SELECT 'innocuous_default', (SELECT count(DISTINCT id) FROM inno_t WHERE uuid_extract_version(id) = 7) = 2;
SELECT 'innocuous_view', (SELECT count(*) FROM inno_v WHERE length(a) = 36 AND d GLOB 'v_*') = 1;
PRAGMA trusted_schema = ON;
