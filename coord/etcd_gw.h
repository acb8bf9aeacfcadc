/*
 * etcd_gw.h - what etcd.c needs of etcd v3's JSON gateway (etcd_gw.c):
 * POSTs of JSON to the servers of a coordinator URL, with fail-over, and
 * the gateway's encodings (base64 keys and values, 64-bit numbers as
 * strings). Not installed.
 *
 * Thread-safety: no (one thread per idmc_gw), but for the one-time
 * curl_global_init in idmc_gw_new.
 */
#ifndef IDMC_ETCD_GW_H
#define IDMC_ETCD_GW_H

#include "backend.h"

#include <jansson.h>

typedef struct idmc_gw idmc_gw;

/* A client for the servers of t (which must outlive it), each request
 * bounded by timeout_ms. Does no network I/O. 0 or IDMC_ERROR with msg. */
int idmc_gw_new(const idmc_target *t, int64_t timeout_ms, idmc_gw **out, char *msg, size_t cap);
/* NULL is ignored. */
void idmc_gw_free(idmc_gw *g);

/*
 * POSTs req (consumed; NULL stands for an allocation that failed) to path
 * ("/v3/kv/txn"), trying the servers in turn from the one that answered
 * last, and parses the answer into *out (json_decref it). A server that
 * cannot be reached, does not answer in time, or answers 503 gives way to
 * the next. 0, or IDMC_ERROR with msg naming the server(s) and the reason
 * (an HTTP error's is the gateway's "message").
 *
 * A request that timed out may still have been applied by the server that
 * got it, and is then sent again to the next: callers send only requests
 * that are safe to repeat.
 */
int idmc_gw_call(idmc_gw *g, const char *path, json_t *req, json_t **out, char *msg, size_t cap);
/* Whether the last call got an HTTP answer from some server. */
bool idmc_gw_answered(const idmc_gw *g);
/* msg: "etcd at HOST:PORT answered something unexpected: WHAT", naming the
 * server that answered last. */
void idmc_gw_unexpected(const idmc_gw *g, const char *what, char *msg, size_t cap);
/* "etcd at HOST:PORT", the server that answered last. */
void idmc_gw_where(const idmc_gw *g, char *dst, size_t cap);

/* A JSON string holding the base64 of s; NULL when out of memory. */
json_t *idmc_gw_b64(const char *s);
/* A base64 JSON string decoded into a NUL-terminated copy (free it); NULL
 * when j is not a string of valid base64 (or out of memory). */
char *idmc_gw_unb64(const json_t *j);
/* A decimal string of digits only, no sign, fitting int64; 0 or -1. */
int idmc_gw_parse_i64(const char *s, int64_t *v);
/* A 64-bit member of an answer: a JSON string of digits (an optional '-'),
 * or a JSON integer. Absent means 0 (proto3 leaves zeros out). 0 or -1. */
int idmc_gw_get_i64(const json_t *obj, const char *name, int64_t *v);
/* A 64-bit number as the gateway takes it: a JSON string. */
json_t *idmc_gw_i64(int64_t v);

#endif
