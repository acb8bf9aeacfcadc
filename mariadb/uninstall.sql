-- idmint_udf: drops the SQL functions of idmint_udf.so (mariadb/README.md).
--   mariadb -uroot < mariadb/uninstall.sql
-- A function that is not there is skipped (a note, not an error).
DROP FUNCTION IF EXISTS uuid_v7;
DROP FUNCTION IF EXISTS uuid_v4;
DROP FUNCTION IF EXISTS uuid_v7_bin;
DROP FUNCTION IF EXISTS ulid;
DROP FUNCTION IF EXISTS uuid_v7_timestamp;
DROP FUNCTION IF EXISTS snowflake;
