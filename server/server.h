/*
 * server.h - the server that main.c puts together: every room's state,
 * side by side, each module's its own (the modules below see only their
 * own and what main.c hands them: none includes this). One libuv loop
 * thread owns it (so the generators are made IDM_GEN_UNSHARED); only the
 * mark's writes, the node's claims and the lease and segment threads run
 * elsewhere, on data of their own. Not installed.
 */
#ifndef IDMS_SERVER_H
#define IDMS_SERVER_H

#include "auth.h"
#include "conn.h"
#include "core/counters.h"
#include "hlc.h"
#include "hwm.h"
#include "hwm_loop.h"
#include "keyed.h"
#include "mint.h"
#include "node.h"
#include "options.h"
#include "segments.h"
#include "services.h"
#include "status.h"
#include "tls.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <uv.h>

typedef struct idms_server {
    uv_loop_t *loop;
    idms_options opt;
    /* The generators: made here (main.c), their ceilings set by the mark's
     * owner (hwm.c, node.c), minted from by the mint service, which holds
     * them too (mint; main.c's make_snowflake hands it each new sf). */
    idm_gen *gen;
    idm_snowflake *sf;
    idms_minter mint;
    idm_sf_layout layout;
    char layout_name[IDM_SF_SPEC_CAP];
    idms_metrics metrics;
    idms_auth auth; /* --auth-token-file (auth.c) */
    idms_keyed keyed; /* --key-file (keyed.h) */
    uv_signal_t sigterm, sigint, sighup;
    idms_hwm hwm;
    idms_hwm_loop hwm_loop; /* hwm's executor on the loop */
    idms_node node;
    idms_segments segments; /* --segments (segments.h) */
    idms_hlc hlc;           /* the hybrid logical clock (hlc.h) */
    idms_status status;     /* what readiness looks at (status.h) */
    idms_net net;           /* the connections and listeners (conn.h) */
    idms_services svc;      /* what the front ends reach below them (services.h) */
    uv_timer_t drain_timer;
} idms_server;

#endif
