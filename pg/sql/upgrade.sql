-- ALTER EXTENSION pg_idmint UPDATE from 0.2 gives what CREATE EXTENSION
-- of the current version gives: the same functions, declared alike, with
-- the same comments, and tables made under 0.2 keep working.
SELECT extversion FROM pg_extension WHERE extname = 'pg_idmint';
CREATE TEMP VIEW ext_functions AS
SELECT p.proname, pg_get_function_arguments(p.oid) AS args, p.prorettype::regtype AS result,
       p.provolatile, p.proparallel, p.proisstrict, p.proleakproof, p.prosrc, p.probin,
       obj_description(p.oid, 'pg_proc') AS comment
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idmint';
CREATE TEMP TABLE fresh AS SELECT * FROM ext_functions;
SELECT count(*) AS functions_03 FROM fresh;

DROP EXTENSION pg_idmint;
CREATE EXTENSION pg_idmint VERSION '0.2';
SELECT extversion FROM pg_extension WHERE extname = 'pg_idmint';
SELECT count(*) AS functions_02, to_regproc('uuid_generate_v7') IS NULL AS no_pg_uuidv7_names,
       bool_or(proleakproof) AS any_leakproof
FROM ext_functions;
CREATE TEMP TABLE made_under_02 (id uuid PRIMARY KEY DEFAULT uuidv7(), n int);
INSERT INTO made_under_02 (n) VALUES (1);

ALTER EXTENSION pg_idmint UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pg_idmint';
-- No difference either way.
(SELECT 'only fresh' AS side, * FROM fresh EXCEPT SELECT 'only fresh', * FROM ext_functions)
UNION ALL
(SELECT 'only updated', * FROM ext_functions EXCEPT SELECT 'only updated', * FROM fresh)
ORDER BY 2, 3;
INSERT INTO made_under_02 (n) VALUES (2);
SELECT count(*) FILTER (WHERE id <= prev) AS out_of_order, count(*) AS total_rows
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM made_under_02) s;
SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00', true) AS new_function_works;
