/* examples/mint.c - mint a batch of UUIDv7 and a few snowflakes, decode one.
 * Build against an installed idmint: cc mint.c $(pkg-config --cflags --libs idmint) */
#include <idmint/idmint.h>
#include <inttypes.h>
#include <stdio.h>

int main(void)
{
    idm_error err;
    idm_gen *g;
    if (idm_gen_new(&g, NULL, &err) != IDM_OK) {
        fprintf(stderr, "idm_gen_new: %s\n", err.msg);
        return 1;
    }
    idm_uuid ids[4];
    if (idm_uuidv7_next_n(g, ids, 4, &err) != IDM_OK) {
        fprintf(stderr, "uuidv7: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < 4; i++) {
        char text[IDM_UUID_STRLEN + 1];
        if (idm_uuid_format(&ids[i], text, sizeof text) == IDM_OK)
            puts(text);
    }
    idm_gen_free(g);

    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg); /* twitter layout, 10 ms tolerance */
    cfg.node = 42;
    idm_snowflake *sf;
    if (idm_snowflake_new(&sf, &cfg, &err) != IDM_OK) {
        fprintf(stderr, "snowflake: %s\n", err.msg);
        return 1;
    }
    uint64_t flakes[2];
    size_t done;
    if (idm_snowflake_next_n(sf, flakes, 2, &done, &err) != IDM_OK) {
        fprintf(stderr, "snowflake: %s (rewind %" PRId64 " ms)\n", err.msg, err.rewind_ms);
        return 1;
    }
    idm_sf_parts parts;
    if (idm_sf_decode(idm_snowflake_layout(sf), flakes[1], &parts, &err) == IDM_OK)
        printf("%" PRIu64 ": node %" PRIu64 ", sequence %" PRIu64 ", unix_ms %" PRId64 "\n", flakes[1],
               parts.node, parts.sequence, parts.unix_ms);
    idm_snowflake_free(sf);
    return 0;
}
