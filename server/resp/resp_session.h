/*
 * server/resp/resp_session.h - what a RESP connection remembers between
 * commands (resp_server.c): its CLIENT ID, the protocol chosen with HELLO,
 * the name set with CLIENT SETNAME or HELLO SETNAME, the library named
 * with CLIENT SETINFO, and whether it gave the token (AUTH, HELLO ...
 * AUTH) that --auth-token-file asks for. It is the adapter's state at the
 * end of the connection (idms_conn_session, conn.h: the proto's
 * session_size), zeroed at accept; only resp_server.c reads or writes it.
 * Not installed.
 */
#ifndef IDMS_RESP_SESSION_H
#define IDMS_RESP_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#define IDMS_RESP_NAME_MAX 64 /* bytes of a client name (CLIENT SETNAME) */
#define IDMS_RESP_LIB_MAX  32 /* bytes of CLIENT SETINFO LIB-NAME or LIB-VER */

typedef struct idms_resp_session {
    uint64_t id;                       /* CLIENT ID, from 1; 0 until the first command */
    uint64_t start_ms;                 /* loop time (uv_now) of the first command */
    uint64_t last_ms;                  /* loop time of the latest command */
    const char *last_cmd;              /* its name, static; NULL before the first */
    int protocol;                      /* 2 or 3 (HELLO) */
    bool authed;                       /* gave the token (RESET takes it back) */
    char name[IDMS_RESP_NAME_MAX + 1]; /* NUL-terminated; "" for none */
    char lib_name[IDMS_RESP_LIB_MAX + 1];
    char lib_ver[IDMS_RESP_LIB_MAX + 1];
} idms_resp_session;

#endif
