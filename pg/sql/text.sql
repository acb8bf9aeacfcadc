-- ULID, TypeID and KSUID: minting and conversions.
SET TimeZone = 'UTC';

-- ULID: the spec's example (its time is 1469922850259 ms), both ways; parsing is case-insensitive, the
-- output upper case.
SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAV') AS uuid;
SELECT uuid_to_ulid('01563e3a-b5d3-d676-4c61-efb99302bd5b') AS ulid; -- 0x01563e3ab5d3 = 1469922850259 ms
SELECT uuid_to_ulid(ulid_to_uuid('01arz3ndektsv4rrffq69g5fav')) AS round_trip;
SELECT uuid_to_ulid('00000000-0000-0000-0000-000000000000') AS zero,
       uuid_to_ulid('ffffffff-ffff-ffff-ffff-ffffffffffff') AS max;
SELECT ulid_to_uuid('7ZZZZZZZZZZZZZZZZZZZZZZZZZ') AS max_back;
-- ulid(): 26 characters of Crockford base32, the time of now, increasing
-- within a backend (as text and as bits).
SELECT ulid() ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$' AS well_formed;
SELECT abs((idmint_inspect(ulid())->>'unix_ms')::bigint - (extract(epoch FROM clock_timestamp()) * 1000)::bigint) < 1000
       AS near_now;
WITH s AS (SELECT n, ulid() AS u FROM generate_series(1, 100000) AS n)
SELECT count(*) FILTER (WHERE u COLLATE "C" <= prev COLLATE "C") AS out_of_order,
       count(*) FILTER (WHERE ulid_to_uuid(u) <= ulid_to_uuid(prev)) AS out_of_order_bits,
       count(DISTINCT u) AS distinct_ids
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM s) AS t;

-- TypeID: the spec's vectors (typeid/spec valid.yml).
SELECT typeid_to_uuid('prefix_01h455vb4pex5vsknk084sn02q') AS uuid;
SELECT uuid_to_typeid('prefix', '01890a5d-ac96-774b-bcce-b302099a8057') AS typeid;
SELECT uuid_to_typeid('', '00000000-0000-0000-0000-000000000000') AS nil_no_prefix,
       typeid_to_uuid('00000000000000000000000000') AS nil_back;
SELECT uuid_to_typeid('pre_fix', 'ffffffff-ffff-ffff-ffff-ffffffffffff') AS underscore_prefix,
       typeid_to_uuid('pre_fix_7zzzzzzzzzzzzzzzzzzzzzzzzz') AS max_back;
-- typeid(prefix): a UUIDv7 of uuidv7()'s sequence under the prefix.
SELECT typeid('user') ~ '^user_[0-7][0-9a-hjkmnp-tv-z]{25}$' AS well_formed,
       typeid('') ~ '^[0-7][0-9a-hjkmnp-tv-z]{25}$' AS no_prefix,
       uuid_extract_version(typeid_to_uuid(typeid('user'))) AS v;
SELECT typeid_to_uuid(typeid('a')) < uuidv7() AS sorts_before_next_uuidv7;
WITH s AS (SELECT n, typeid('order') AS t FROM generate_series(1, 20000) AS n)
SELECT count(*) FILTER (WHERE t COLLATE "C" <= prev COLLATE "C") AS out_of_order
FROM (SELECT t, lag(t) OVER (ORDER BY n) AS prev FROM s) AS x;

-- KSUID: the example from Segment's README, and minting.
SELECT idmint_inspect('0ujtsYcgvSTl8PAuAdqWYSMnLOv')->>'time' AS ksuid_time;
SELECT ksuid() ~ '^[0-9A-Za-z]{27}$' AS well_formed;
SELECT abs((idmint_inspect(ksuid())->>'unix_ms')::bigint / 1000 - extract(epoch FROM clock_timestamp())::bigint) <= 1
       AS near_now;
WITH s AS (SELECT n, ksuid() AS k FROM generate_series(1, 100000) AS n)
SELECT count(*) FILTER (WHERE k COLLATE "C" <= prev COLLATE "C") AS out_of_order, count(DISTINCT k) AS distinct_ids
FROM (SELECT k, lag(k) OVER (ORDER BY n) AS prev FROM s) AS t;

-- STRICT: NULL in, NULL out.
SELECT ulid_to_uuid(NULL) IS NULL AS a, uuid_to_ulid(NULL) IS NULL AS b, typeid(NULL) IS NULL AS c,
       typeid_to_uuid(NULL) IS NULL AS d, uuid_to_typeid(NULL, uuidv7()) IS NULL AS e;
