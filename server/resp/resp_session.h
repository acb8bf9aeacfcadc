/*
 * server/resp/resp_session.h - what a RESP connection remembers between
 * commands (resp_server.c): its CLIENT ID, the protocol chosen with HELLO,
 * the name set with CLIENT SETNAME or HELLO SETNAME, the library named
 * with CLIENT SETINFO, and whether it gave the token (AUTH, HELLO ...
 * AUTH) that --auth-token-file asks for, the command held at the head
 * of the buffer while it waits (idms_resp_held), and the transaction that
 * MULTI opened (idms_resp_multi). It is the adapter's state at the end of
 * the connection (idms_conn_session, conn.h: the proto's session_size),
 * zeroed at accept, its transaction's queue freed at close (the proto's
 * session_free); only resp_server.c reads or writes it. Not installed.
 */
#ifndef IDMS_RESP_SESSION_H
#define IDMS_RESP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define IDMS_RESP_NAME_MAX 64 /* bytes of a client name (CLIENT SETNAME) */
#define IDMS_RESP_LIB_MAX  32 /* bytes of CLIENT SETINFO LIB-NAME or LIB-VER */
#define IDMS_RESP_HELD_TEXT 128 /* bytes of a held prefix or tag (at most 63 or IDMSEG_TAG_MAX) */

/* The most commands a transaction queues (MULTI ... EXEC); its bytes are
 * bounded by the connection's share of --max-buffered (resp_server.c). */
#define IDMS_RESP_MULTI_MAX 4096

/* What a held command is: NEXT, HLC or INCR/INCRBY (on its own or inside
 * EXEC), or EXEC before the command at idms_resp_multi.next (its batch of
 * replies was full, or that command parked without a record of its own
 * and starts again). */
enum {
    IDMS_RESP_HELD_NONE,
    IDMS_RESP_HELD_NEXT,
    IDMS_RESP_HELD_HLC,
    IDMS_RESP_HELD_SEGMENT,
    IDMS_RESP_HELD_EXEC
};

/* A command that parked, or sent a part of its reply, stays unconsumed at
 * the head of the buffer until it completes. What it needs to go on was
 * parsed once, into this record, and the resumed command goes on from it:
 * its bytes are not parsed again, only consumed (len) at the end. */
typedef struct idms_resp_held {
    int kind;   /* IDMS_RESP_HELD_* */
    size_t len; /* the command's bytes at the head of the buffer */
    /* NEXT: the format, count and prefix, and whether the reply is an
     * array (a count was given) */
    int format;
    uint64_t count;
    bool array;
    bool has_prefix; /* text holds the prefix */
    /* INCR, INCRBY: the tag and the reply's style (IDMS_SEG_RESP_*) */
    int style;
    /* HLC stamp: the stamp to merge */
    bool has_remote;
    uint64_t remote;
    size_t text_len; /* the prefix's or the tag's bytes in text */
    char text[IDMS_RESP_HELD_TEXT + 1];
} idms_resp_held;

/* A transaction: MULTI opens it, each command but EXEC, DISCARD, MULTI,
 * WATCH, QUIT and RESET (Redis's list) is checked (known, its number of
 * arguments) and queued, and EXEC runs the queue. The queue holds each
 * command parsed (its arguments' lengths and bytes), so that EXEC runs it
 * without parsing it again. While EXEC runs it is the command held at the
 * head of the buffer: a command of the queue that parks keeps its own
 * record in held, as outside a transaction, and EXEC goes on from next
 * once it completes. */
typedef struct idms_resp_multi {
    idms_buf queue;  /* the queued commands (no allocation while empty) */
    size_t n;        /* commands queued */
    size_t next;     /* EXEC: the next command to run ... */
    size_t at;       /* ... at this offset in queue */
    bool open;       /* after MULTI, until EXEC, DISCARD or RESET */
    bool dirty;      /* a command was refused while queueing: EXEC aborts */
    bool running;    /* EXEC is running the queue */
} idms_resp_multi;

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
    idms_resp_held held; /* kind NONE: no command held */
    idms_resp_multi multi;
} idms_resp_session;

#endif
