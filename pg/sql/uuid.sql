-- uuidv7(), uuidv7(shift), uuid_extract_timestamp(), uuid_extract_version():
-- PostgreSQL 18's names and meaning.
SET TimeZone = 'UTC';

-- Version 7, the RFC 9562 variant, the time of now.
SELECT uuid_extract_version(uuidv7()) AS v, uuid_extract_version(idmint_uuidv7()) AS prefixed_v,
       get_byte(uuid_send(uuidv7()), 8) >> 6 AS variant_bits;
SELECT abs(extract(epoch FROM uuid_extract_timestamp(uuidv7()) - clock_timestamp())) < 1 AS near_now;

-- uuidv4(): 18's other new name, random.
SELECT uuid_extract_version(uuidv4()) AS v4, uuid_extract_version(idmint_uuidv4()) AS prefixed_v4,
       get_byte(uuid_send(uuidv4()), 8) >> 6 AS v4_variant_bits;
SELECT count(DISTINCT uuidv4()) AS distinct_v4 FROM generate_series(1, 10000);

-- Strictly increasing within a backend: in one statement ...
WITH s AS (SELECT n, uuidv7() AS u FROM generate_series(1, 100000) AS n)
SELECT count(*) FILTER (WHERE u <= prev) AS out_of_order, count(DISTINCT u) AS distinct_ids
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM s) AS t;
-- ... and across statements and the two names.
CREATE TEMP TABLE seen AS SELECT uuidv7() AS u;
SELECT idmint_uuidv7() > (SELECT u FROM seen) AS later_than_before;
SELECT uuidv7() > (SELECT u FROM seen) AS later_still;

-- A shift moves the timestamp as timestamptz + interval would.
SELECT uuid_extract_timestamp(uuidv7('-1 day'))
       BETWEEN clock_timestamp() - interval '1 day 1 second' AND clock_timestamp() - interval '1 day' + interval '1 second'
       AS one_day_back;
SELECT uuid_extract_timestamp(uuidv7('1 month'))
       BETWEEN clock_timestamp() + interval '1 month' - interval '1 second' AND clock_timestamp() + interval '1 month 1 second'
       AS one_month_ahead;
SELECT uuid_extract_version(uuidv7('1 hour')) AS shifted_v;
-- Increasing while the shift stays the same.
WITH s AS (SELECT n, uuidv7('-1 hour') AS u FROM generate_series(1, 20000) AS n)
SELECT count(*) FILTER (WHERE u <= prev) AS out_of_order
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM s) AS t;
SELECT uuidv7('-1 hour') < uuidv7() AS shifted_sorts_earlier;

-- Extraction: RFC 9562's test vectors (appendix A), 2022-02-22 14:22:22 EST.
SELECT uuid_extract_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846') AS v1_time,
       uuid_extract_version('C232AB00-9414-11EC-B3C8-9F6BDECED846') AS v1;
SELECT uuid_extract_timestamp('1EC9414C-232A-6B00-B3C8-9F6BDECED846') AS v6_time,
       uuid_extract_version('1EC9414C-232A-6B00-B3C8-9F6BDECED846') AS v6;
SELECT uuid_extract_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') AS v7_time,
       uuid_extract_version('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') AS v7;
SELECT uuid_extract_timestamp('919108F7-52D1-4320-9BAC-F847DB4148A8') AS v4_time,
       uuid_extract_version('919108F7-52D1-4320-9BAC-F847DB4148A8') AS v4;
-- v1's time to the microsecond (100-ns ticks, divided by ten).
SELECT uuid_extract_timestamp('C232AB0A-9414-11EC-B3C8-9F6BDECED846') AS one_us_later;
-- Other variants have no version or time: NCS (0xxx), Microsoft (110x),
-- the nil UUID.
SELECT uuid_extract_version('017F22E2-79B0-7CC3-18C4-DC0C0C07398F') AS ncs,
       uuid_extract_version('017F22E2-79B0-7CC3-C8C4-DC0C0C07398F') AS microsoft,
       uuid_extract_timestamp('017F22E2-79B0-7CC3-C8C4-DC0C0C07398F') AS microsoft_time,
       uuid_extract_version('00000000-0000-0000-0000-000000000000') AS nil;
SELECT uuid_extract_version(gen_random_uuid()) AS gen_random_uuid_v,
       uuid_extract_timestamp(gen_random_uuid()) IS NULL AS v4_has_no_time;
-- STRICT: NULL in, NULL out.
SELECT uuidv7(NULL) IS NULL AS shift_null, uuid_extract_version(NULL) IS NULL AS version_null;

-- As a column default, in order of insertion.
CREATE TEMP TABLE t (id uuid PRIMARY KEY DEFAULT uuidv7(), n int);
INSERT INTO t (n) SELECT generate_series(1, 1000);
SELECT count(*) FILTER (WHERE id <= prev) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM t) AS s;

-- Declared as PostgreSQL 18 declares them.
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, p.provolatile, p.proparallel, p.proisstrict,
       p.proleakproof
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idmint'
ORDER BY 1, 2;
