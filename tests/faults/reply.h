/*
 * reply.h - the fault harness's reading of idmintd's replies (reply.c):
 * one HTTP/1.1 response with a Content-Length, or one RESP2 reply (an
 * array of bulk strings, a bulk string, an integer, an error), and the
 * /v1/node JSON object's few members the checker needs.
 *
 * Both parsers take the bytes received so far and say "need more input"
 * (FR_MORE) distinctly from "invalid" (FR_BAD); they never allocate and
 * never read past len. Fuzzed by fuzz/fuzz_fault_reply.c.
 */
#ifndef IDM_FAULTS_REPLY_H
#define IDM_FAULTS_REPLY_H

#include <stddef.h>
#include <stdint.h>

#define FR_MORE (-2)
#define FR_BAD  (-1)

/* Named limits: a reply header block, an array's element count. */
#define FR_MAX_HEAD  8192
#define FR_MAX_ITEMS 100000

/* A parsed reply: status 200 (or any HTTP status; RESP: 200 for IDs, 503
 * for an error), and where the IDs are: for HTTP the body (IDs one per
 * line), for RESP the whole reply (read with fr_resp_next_id). */
typedef struct fr_reply {
    int status;
    const char *body;
    size_t body_len;
} fr_reply;

/* One HTTP response at buf. Returns the bytes it takes (> 0), FR_MORE or
 * FR_BAD. Thread-safe: yes (pure function). */
long fr_http(const char *buf, size_t len, fr_reply *out);

/* One RESP2 reply at buf, the same way. */
long fr_resp(const char *buf, size_t len, fr_reply *out);

/* Iterates the decimal IDs of a parsed reply: call with *pos 0 first; 1
 * and *id set while there is one, 0 at the end, FR_BAD for a field that
 * is not a decimal within 64 bits. resp: the reply came from fr_resp. */
int fr_next_id(const fr_reply *r, int resp, size_t *pos, uint64_t *id);

/* /v1/node's members: state ("held", "lost", ...; NUL-terminated, cut to
 * cap), node (-1 for null), generation (0 for null; etcd and ZooKeeper
 * give decimal numbers), lease_ms_left (-1 for null). 0, or FR_BAD when
 * the body has no "state" member. */
typedef struct fr_node {
    char state[16];
    int64_t node;
    uint64_t generation;
    int64_t lease_ms_left;
} fr_node;
int fr_node_json(const char *body, size_t len, fr_node *out);

#endif
