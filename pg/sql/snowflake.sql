-- snowflake(), snowflake_nextval(), snowflake_timestamp().
SET TimeZone = 'UTC';

-- The settings are server-wide (one node, one layout for every backend).
-- A session knows them once the module is loaded (its first call, LOAD,
-- or shared_preload_libraries).
LOAD 'pg_idmint';
SHOW pg_idmint.layout;
SHOW pg_idmint.node;
SELECT name, context, unit, boot_val FROM pg_settings WHERE name LIKE 'pg\_idmint.%' ORDER BY name;

-- snowflake(): the time of now, this server's node, increasing.
SELECT abs(extract(epoch FROM snowflake_timestamp(snowflake()) - clock_timestamp())) < 1 AS near_now;
SELECT (idmint_inspect(snowflake()::text)->>'node')::int = current_setting('pg_idmint.node')::int AS our_node;
WITH s AS (SELECT n, snowflake() AS id FROM generate_series(1, 100000) AS n)
SELECT count(*) FILTER (WHERE id <= prev) AS out_of_order, count(DISTINCT id) AS distinct_ids
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM s) AS t;
CREATE TEMP TABLE sf (id bigint PRIMARY KEY DEFAULT snowflake(), n int);
INSERT INTO sf (n) SELECT generate_series(1, 5000);
SELECT count(*) AS rows, count(*) FILTER (WHERE id <= prev) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM sf) AS s;
SELECT snowflake() > (SELECT max(id) FROM sf) AS later_than_before;

-- snowflake_timestamp: known IDs (Discord's documentation's example;
-- Twitter's epoch), by the setting or a layout given.
SELECT snowflake_timestamp(175928847299117063, 'discord') AS discord_example;
SELECT snowflake_timestamp(0) AS twitter_epoch, snowflake_timestamp(0, 'twitter') AS same;
SELECT snowflake_timestamp(1 << 22, 'twitter') AS one_ms_later;
SELECT snowflake_timestamp(0, 'instagram') AS instagram_epoch,
       snowflake_timestamp(0, 'time=41,node=10,seq=12,unit=1ms,epoch=1735689600000') AS spec_epoch;

-- snowflake_nextval: Instagram's scheme (41 bits of ms since their epoch,
-- 13 bits of shard, nextval mod 1024).
CREATE SEQUENCE insta_seq;
SELECT (idmint_inspect(snowflake_nextval('insta_seq', 5)::text, 'instagram')->>'node')::int AS shard,
       (idmint_inspect(snowflake_nextval('insta_seq', 5)::text, 'instagram')->>'sequence')::int AS seq;
SELECT setval('insta_seq', 2046);
SELECT (idmint_inspect(snowflake_nextval('insta_seq', 8191)::text, 'instagram')->>'sequence')::int AS seq_2047,
       (idmint_inspect(snowflake_nextval('insta_seq', 8191)::text, 'instagram')->>'sequence')::int AS seq_2048_wraps;
SELECT abs(extract(epoch FROM snowflake_timestamp(snowflake_nextval('insta_seq', 1), 'instagram') - clock_timestamp())) < 1
       AS near_now;
-- A sequence that counts down still gives a field in 0..1023.
CREATE SEQUENCE down_seq INCREMENT -1 MINVALUE -5000 MAXVALUE -1 START -3;
SELECT (idmint_inspect(snowflake_nextval('down_seq', 0)::text, 'instagram')->>'sequence')::int AS seq_of_minus_3;
-- Unique while fewer than 1024 are taken per millisecond and shard.
SELECT count(DISTINCT snowflake_nextval('insta_seq', 7)) AS distinct_ids FROM generate_series(1, 1000);
