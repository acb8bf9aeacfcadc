/*
 * fuzz/fuzz_udf_config.c - idmint_udf's reader of idmint_udf.cnf
 * (mariadb/udf_config.c) on arbitrary bytes.
 *
 * Properties: it returns 0 or 1; on 1 the message is a NUL-terminated
 * text naming the file; on 0 the node was set (a line of digits) and the
 * layout it leaves fits a signed BIGINT (at most 63 bits) and formats;
 * and reading the same bytes again gives the same answer.
 */
#include "harness.h"

#include "../mariadb/udf_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_sfhost_config cfg, again;
    idm_sfhost_config_init(&cfg);
    idm_sfhost_config_init(&again);
    char message[UDF_CONFIG_MSG_CAP], message2[UDF_CONFIG_MSG_CAP];
    memset(message, 'x', sizeof message);
    int rc = udf_config_parse(in.text, in.len, &cfg, message);
    FUZZ_CHECK(rc == 0 || rc == 1);
    if (rc == 1) {
        FUZZ_CHECK(memchr(message, '\0', sizeof message) != NULL);
        FUZZ_CHECK(strstr(message, UDF_CONFIG_FILE) != NULL);
    } else {
        FUZZ_CHECK(cfg.layout.bits[IDM_SF_TIME] + cfg.layout.bits[IDM_SF_NODE] +
                       cfg.layout.bits[IDM_SF_SEQ] <=
                   63);
        char spec[IDM_SF_SPEC_CAP];
        FUZZ_CHECK(idm_sf_layout_format(&cfg.layout, spec, sizeof spec) == IDM_OK);
    }
    FUZZ_CHECK(udf_config_parse(in.text, in.len, &again, message2) == rc);
    if (rc == 0)
        FUZZ_CHECK(again.node == cfg.node);
    fuzz_input_free(&in);
    return 0;
}
