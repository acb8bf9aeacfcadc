/*
 * udf_config.h - the reader of idmint_udf.cnf (udf_snowflake.c says what
 * the file is for): a pure function of the file's bytes, so that
 * fuzz/fuzz_udf_config.c can call it without a server.
 */
#ifndef IDMINT_UDF_CONFIG_H
#define IDMINT_UDF_CONFIG_H

#include <stddef.h>

#include <idmint/idmint.h>

#define UDF_CONFIG_FILE     "idmint_udf.cnf"
#define UDF_CONFIG_MSG_CAP  256
#define UDF_CONFIG_LINE_CAP 256

/* Reads the text of the file (len bytes, not NUL-terminated): lines of
 * "key = value" (spaces around either are ignored), blank lines and lines
 * starting with '#'. Keys: snowflake_node (a decimal number, required) and
 * snowflake_layout (a preset or a layout spec of at most 63 bits: the
 * result is a signed BIGINT). Sets cfg->node and cfg->layout; returns 0, or
 * 1 with the reason (the file's name and the line) in message
 * (UDF_CONFIG_MSG_CAP bytes). The node's range is the layout's, checked
 * when the sequence is opened. */
int udf_config_parse(const char *text, size_t len, idm_sfhost_config *cfg, char *message);

#endif
