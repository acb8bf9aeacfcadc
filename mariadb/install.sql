-- idmint_udf: creates the SQL functions of idmint_udf.so (mariadb/README.md).
-- Run as a user with INSERT on mysql.func (root), once per server, after
-- the module is in the plugin directory (SELECT @@plugin_dir):
--   mariadb -uroot < mariadb/install.sql
-- Running it again replaces the functions (after an upgrade of the module).
CREATE OR REPLACE FUNCTION uuid_v7_bin RETURNS STRING SONAME 'idmint_udf.so';
CREATE OR REPLACE FUNCTION ulid RETURNS STRING SONAME 'idmint_udf.so';
CREATE OR REPLACE FUNCTION uuid_v7_timestamp RETURNS INTEGER SONAME 'idmint_udf.so';
CREATE OR REPLACE FUNCTION snowflake RETURNS INTEGER SONAME 'idmint_udf.so';
-- MariaDB 11.7 and later have uuid_v7() and uuid_v4() built in: there these
-- two lines fail with ERROR 1585 (the same name as a native function), after
-- the four above are made (README.md, "Upgrading to MariaDB 11.7").
CREATE OR REPLACE FUNCTION uuid_v7 RETURNS STRING SONAME 'idmint_udf.so';
CREATE OR REPLACE FUNCTION uuid_v4 RETURNS STRING SONAME 'idmint_udf.so';
