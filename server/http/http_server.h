/*
 * server/http/http_server.h - the HTTP/1.1 adapter (http_server.c): the
 * routes of docs/idmintd.md over the mint, segment, HLC and keyed
 * services. main.c registers it with a listener (conn.h). Not installed.
 */
#ifndef IDMS_HTTP_SERVER_H
#define IDMS_HTTP_SERVER_H

#include "conn.h"

extern const idms_proto idms_http_proto;

#endif
