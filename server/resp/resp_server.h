/*
 * server/resp/resp_server.h - the RESP2/RESP3 adapter (resp_server.c): the
 * commands of docs/idmintd.md over the mint, segment, HLC and keyed
 * services. main.c registers it with a listener (conn.h). Not installed.
 */
#ifndef IDMS_RESP_SERVER_H
#define IDMS_RESP_SERVER_H

#include "conn.h"

extern const idms_proto idms_resp_proto;

#endif
