-- PostgreSQL 18's uuid regression test (src/test/regress/sql/uuid.sql),
-- the statements about its new functions that PostgreSQL 15 can run with
-- pg_idmint, and the results 18 gives: uuidv4(), uuidv7(), uuidv7(interval)
-- (with the year sweep from 1970 to 10888), uuid_extract_version() and
-- uuid_extract_timestamp(). (18's test also runs pg_input_is_valid() and
-- pg_input_error_info(), which 15 lacks, and the uuid type's own tests.)
SET TimeZone = 'UTC';
CREATE TEMP TABLE g1 (guid_field uuid);
CREATE TEMP TABLE g3 (id serial, guid_field uuid);

-- Generators: distinct values.
INSERT INTO g1 (guid_field) VALUES (gen_random_uuid()), (gen_random_uuid());
SELECT count(DISTINCT guid_field) FROM g1;
TRUNCATE g1;
INSERT INTO g1 (guid_field) VALUES (uuidv4());
INSERT INTO g1 (guid_field) VALUES (uuidv4());
SELECT count(DISTINCT guid_field) FROM g1;
TRUNCATE g1;
INSERT INTO g1 (guid_field) VALUES (uuidv7());
INSERT INTO g1 (guid_field) VALUES (uuidv7());
INSERT INTO g1 (guid_field) VALUES (uuidv7(INTERVAL '1 day'));
SELECT count(DISTINCT guid_field) FROM g1;

-- uuidv7() sorts in the order it was called.
INSERT INTO g3 (guid_field) SELECT uuidv7() FROM generate_series(1, 10);
SELECT array_agg(id ORDER BY guid_field) FROM g3;

-- The year sweep: a shift to every year from 1970 to 10888, each time
-- later than the year before (no row).
WITH uuidts AS (
    SELECT y, ts, lag(ts) OVER (ORDER BY y) AS prev_ts
    FROM (SELECT y, uuid_extract_timestamp(uuidv7((y || ' years')::interval)) AS ts
          FROM generate_series(1970 - extract(year FROM now())::int,
                               10888 - extract(year FROM now())::int) AS y) AS s
)
SELECT y, ts, prev_ts FROM uuidts WHERE ts < prev_ts;
-- (beyond 18's test: the sweep's ends, and the year 2262 that the clock's
-- nanoseconds cannot reach)
SELECT extract(year FROM uuid_extract_timestamp(uuidv7(((1970 - extract(year FROM now())::int) || ' years')::interval))) AS first_year,
       extract(year FROM uuid_extract_timestamp(uuidv7(((10888 - extract(year FROM now())::int) || ' years')::interval))) AS last_year,
       extract(year FROM uuid_extract_timestamp(uuidv7(((2263 - extract(year FROM now())::int) || ' years')::interval))) AS past_2262,
       uuid_extract_version(uuidv7('236 years')) AS v;

-- Versions.
SELECT uuid_extract_version('11111111-1111-5111-8111-111111111111');
SELECT uuid_extract_version(gen_random_uuid());
SELECT uuid_extract_version('11111111-1111-1111-1111-111111111111');
SELECT uuid_extract_version(uuidv4());
SELECT uuid_extract_version(uuidv7());

-- Timestamps: RFC 9562's v1 and v7 examples; NULL for the others.
SELECT uuid_extract_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846') = 'Tuesday, February 22, 2022 2:22:22.00 PM GMT+05:00';
SELECT uuid_extract_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') = 'Tuesday, February 22, 2022 2:22:22.00 PM GMT+05:00';
SELECT uuid_extract_timestamp(gen_random_uuid());
SELECT uuid_extract_timestamp('11111111-1111-1111-1111-111111111111');

-- Leakproof, as PostgreSQL 17 and 18 declare both.
SELECT p.proname, p.proleakproof FROM pg_proc p
WHERE p.proname IN ('uuid_extract_timestamp', 'uuid_extract_version',
                    'idmint_uuid_extract_timestamp', 'idmint_uuid_extract_version')
ORDER BY 1;
