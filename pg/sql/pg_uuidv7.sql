-- pg_uuidv7's five functions (github.com/fboulnois/pg_uuidv7): its names,
-- signatures, defaults and results, so SQL written for it runs unchanged.
-- The behaviours its own test suite checks, then what it leaves unsaid.
SET TimeZone = 'UTC';
\set v7 '018570bb-4a7d-7000-8000-000000000000'
\set at_tz '2023-01-02 04:26:40.637+00'
\set at_ts '2023-01-02 04:26:40.637'

-- Its suite: a new UUID sorts after one from 2023; the time of that one,
-- either type; from the time, a later UUID with random bits and the very
-- same one with zero => true.
SELECT uuid_generate_v7() > :'v7' AS generated_later;
SELECT uuid_v7_to_timestamptz(:'v7') = :'at_tz' AS to_timestamptz;
SELECT uuid_timestamptz_to_v7(:'at_tz') > :'v7' AS from_timestamptz_random,
       uuid_timestamptz_to_v7(:'at_tz', true) = :'v7' AS from_timestamptz_zero;
SELECT uuid_v7_to_timestamp(:'v7') = :'at_ts' AS to_timestamp;
SELECT uuid_timestamp_to_v7(:'at_ts') > :'v7' AS from_timestamp_random,
       uuid_timestamp_to_v7(:'at_ts', true) = :'v7' AS from_timestamp_zero;

-- zero => true zeroes all 74 bits after the time but the version (7) and
-- the variant (10): the least UUIDv7 of the millisecond.
SELECT uuid_timestamptz_to_v7(:'at_tz', zero => true) AS named_zero,
       uuid_timestamptz_to_v7(:'at_tz', false) > :'v7' AS explicit_random;
-- Sub-millisecond digits are dropped (rounded down), as pg_uuidv7 does.
SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637999+00', true) = :'v7' AS floors_the_us;
-- Random bits: version, variant and time as with zero; the rest differs.
SELECT count(DISTINCT u) AS distinct_random, min(uuid_extract_version(u)) AS v,
       max(uuid_extract_version(u)) AS v_max, bool_and(get_byte(uuid_send(u), 8) >> 6 = 2) AS variant_10,
       bool_and(uuid_v7_to_timestamptz(u) = :'at_tz') AS same_ms,
       bool_and(substr(u::text, 1, 13) = substr(:'v7', 1, 13)) AS same_time_bits
FROM (SELECT uuid_timestamptz_to_v7(:'at_tz') AS u FROM generate_series(1, 1000)) s;
-- A timestamp is read as UTC wall time, whatever the session's zone; a
-- timestamptz is an instant.
SET TimeZone = 'America/New_York';
SELECT uuid_timestamp_to_v7(:'at_ts', true) = :'v7' AS timestamp_is_utc,
       uuid_timestamptz_to_v7('2023-01-01 23:26:40.637-05', true) = :'v7' AS timestamptz_is_an_instant,
       uuid_v7_to_timestamp(:'v7') AS ts_in_utc, uuid_v7_to_timestamptz(:'v7') AS tz_shown_in_zone;
SET TimeZone = 'UTC';

-- Round trips at the ends of the range (1970 to 10889-08-02 05:31:50.655).
SELECT uuid_timestamptz_to_v7('1970-01-01 00:00:00+00', true) AS first,
       uuid_timestamptz_to_v7('10889-08-02 05:31:50.655+00', true) AS last,
       uuid_v7_to_timestamptz('ffffffff-ffff-7000-8000-000000000000') AS last_time;
-- Outside it: pg_uuidv7 wraps into another time; here an error (22008).
SELECT uuid_timestamptz_to_v7('1969-12-31 23:59:59.999+00');
SELECT uuid_timestamp_to_v7('10889-08-02 05:31:50.656', true);
SELECT uuid_timestamptz_to_v7('infinity');
SELECT uuid_timestamp_to_v7('-infinity');

-- Its decoders read the first 48 bits of any UUID, as pg_uuidv7's do (a v4
-- gives a time); PostgreSQL 18's uuid_extract_timestamp() gives NULL.
SELECT uuid_v7_to_timestamptz('919108f7-52d1-4320-9bac-f847db4148a8') AS v4_as_pg_uuidv7,
       uuid_extract_timestamp('919108f7-52d1-4320-9bac-f847db4148a8') AS v4_as_pg18;
-- For a v7 both agree.
SELECT count(*) FILTER (WHERE uuid_v7_to_timestamptz(u) IS DISTINCT FROM uuid_extract_timestamp(u)) AS disagree
FROM (SELECT uuid_generate_v7() AS u FROM generate_series(1, 1000)) s;

-- uuid_generate_v7() is uuidv7(): one sequence, strictly increasing within
-- the backend (pg_uuidv7's is random within a millisecond).
WITH s AS (SELECT n, CASE WHEN n % 2 = 0 THEN uuid_generate_v7() ELSE uuidv7() END AS u
           FROM generate_series(1, 20000) AS n)
SELECT count(*) FILTER (WHERE u <= prev) AS out_of_order, count(DISTINCT u) AS distinct_ids
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM s) AS t;
SELECT abs(extract(epoch FROM uuid_v7_to_timestamptz(uuid_generate_v7()) - clock_timestamp())) < 1 AS near_now;

-- The time-range scan zero => true is for: every key of a day, from an
-- index, bounded by the least UUIDv7 of each end.
CREATE TEMP TABLE ev (id uuid PRIMARY KEY);
INSERT INTO ev SELECT uuid_timestamptz_to_v7(t)
FROM generate_series(timestamptz '2023-01-01', '2023-01-03 23:00', interval '1 hour') AS t;
SELECT count(*) AS day_two FROM ev
WHERE id >= uuid_timestamptz_to_v7('2023-01-02', true) AND id < uuid_timestamptz_to_v7('2023-01-03', true);

-- STRICT: NULL in, NULL out (zero too).
SELECT uuid_v7_to_timestamptz(NULL) IS NULL AS n1, uuid_timestamptz_to_v7(NULL) IS NULL AS n2,
       uuid_timestamptz_to_v7(now(), NULL) IS NULL AS n3, uuid_timestamp_to_v7(NULL, true) IS NULL AS n4;

-- Declared as pg_uuidv7 1.6 declares them.
SELECT p.proname, pg_get_function_arguments(p.oid) AS args, p.prorettype::regtype AS result,
       p.provolatile, p.proparallel, p.proisstrict, p.proleakproof
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idmint'
WHERE p.proname IN ('uuid_generate_v7', 'uuid_v7_to_timestamptz', 'uuid_v7_to_timestamp',
                    'uuid_timestamptz_to_v7', 'uuid_timestamp_to_v7')
ORDER BY 1, 2;
