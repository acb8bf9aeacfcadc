/*
 * zk.c - the ZooKeeper coordinator (idmint_coord.h), over the C client
 * libzookeeper-mt (its own I/O and completion threads; built with THREADED).
 *
 * One session per lease: the session IS the lease. It is opened with the
 * coordinator's TTL as its timeout, and the timeout the server negotiated
 * (bounded by its minSessionTimeout and maxSessionTimeout, 2 and 20 ticks
 * by default) becomes the lease's TTL. The hold PATH/workers/NNNN is an
 * ephemeral node of that session, so it goes when the session ends or
 * expires (the holder died, or was cut off for longer than the timeout);
 * its czxid, which no later node of that name can share, is the
 * generation. Marks are persistent nodes PATH/marks/NNNN holding decimal
 * Unix ms, written by a multi that checks the hold in the same transaction
 * and on the holder's own session (a session that has expired can write
 * nothing at all).
 *
 * The client library pings the server by itself (every third of the
 * timeout) and reconnects to the listed servers in turn (in an order it
 * shuffles); a keepalive only confirms, with a round trip, that the
 * session and the hold are still alive at the server. A server that
 * refuses costs nothing; one that accepts connections but never answers
 * (hung, or cut off silently) holds the library for two thirds of the
 * session timeout before it tries the next one, and the library has no
 * per-server connection timeout. So a new session waits for its first
 * connection long enough to get past as many such servers as the
 * ensemble can lose and keep its quorum ((n-1)/2 of n listed), whatever
 * the library's order (see connect_wait_ms); a session that still has no
 * connection fails with IDMC_ERROR naming the server the library was
 * waiting for. Fixing the order (zoo_deterministic_conn_order) would
 * change the whole process.
 *
 * Every request is sent asynchronously and waited for at most the request
 * timeout (idmc_request_timeout_ms): the library's synchronous calls wait
 * until an answer or until it drops the connection, which takes two
 * thirds of the session timeout. A request the caller stopped waiting for
 * lives on the heap until its completion runs (the library runs every
 * pending completion, with ZCLOSING, before zookeeper_close returns).
 *
 * The coordinator keeps only its configuration; `list` opens a short
 * session of its own. The library's own log (chatty: every connection at
 * INFO) is discarded through a per-handle callback, so nothing global is
 * changed; the reasons that matter reach msg as result codes.
 *
 * Left out: ACLs and authentication (nodes get world:anyone), TLS, SASL,
 * read-only servers, and a lease's remaining time in `list` (ZooKeeper
 * does not expose a session's deadline: ttl_ms_left is always -1).
 */
#include "backend.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zookeeper/zookeeper.h>

/* A slot's node path: the target's path, "/workers/" and up to 20 digits. */
#define ZK_PATH_CAP 560
/* Node data read or written: a holder line or a mark. A longer holder
 * line is refused; longer data read back is cut (a holder line shown in a
 * message or a list) or refused (a mark). */
#define ZK_DATA_CAP  1024
#define ZK_HOSTS_CAP (IDMC_ENDPOINTS_MAX * 264)
/* A mark that keeps changing under a write is retried this often. */
#define ZK_MARK_TRIES 5

/* One session: a lease's, or list's short one. The watcher (on the
 * client's completion thread) records the session state under mu and
 * wakes waiters on cv; completions of requests use the same pair. */
typedef struct zsess {
    zhandle_t *zh;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    int state;         /* the last session state reported; 0 before any */
    int64_t request_ms;
    int64_t end_ms; /* when nonzero, no request waits past it (a release's bound) */
    char hosts[ZK_HOSTS_CAP];
} zsess;

/* A lease's part: the session and the hold it created. */
typedef struct zlease {
    zsess s;
    int64_t czxid;
    char hold[ZK_PATH_CAP];
    char mark[ZK_PATH_CAP];
} zlease;

enum zop { ZOP_EXISTS, ZOP_GET, ZOP_CHILDREN, ZOP_CREATE, ZOP_DELETE, ZOP_MARK };

/* One request and its answer, on the heap, shared by the caller and the
 * completion: refs counts both (under s->mu), whoever drops the last
 * frees it. Everything the library may write when the answer comes (the
 * multi's results too) lives here, never on a caller's stack. */
typedef struct zcall {
    zsess *s;
    int refs;
    bool done;
    int rc;
    enum zop op;
    char path[ZK_PATH_CAP];
    /* ZOP_CREATE: data and mode. ZOP_DELETE: version. ZOP_MARK: a check
     * of path at version, then a set of path2 to data at version2, or a
     * create of path2 when version2 is -1. */
    char path2[ZK_PATH_CAP];
    int mode;
    int version;
    int version2;
    /* In: data to write. Out (ZOP_GET): the data read, NUL-terminated;
     * data_len is the node's full length (-1 for none). */
    char data[ZK_DATA_CAP];
    int data_len;
    struct Stat stat; /* ZOP_EXISTS, ZOP_GET, ZOP_CREATE */
    uint64_t *nodes;  /* ZOP_CHILDREN: the children that are node numbers, sorted */
    size_t n_nodes;
    zoo_op_t ops[2];
    zoo_op_result_t results[2];
} zcall;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits on s->cv (s->mu held) until the monotonic deadline at most. */
static void wait_until(zsess *s, int64_t deadline_ms)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000};
    pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

/* The library's log, discarded (see the file comment). */
static void log_nothing(const char *message)
{
    (void)message;
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)path;
    zsess *s = ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    pthread_mutex_lock(&s->mu);
    s->state = state;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static bool unrecoverable(int state)
{
    return state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE;
}

/* ---- requests ------------------------------------------------------------ */

static zcall *call_new(zsess *s, enum zop op, const char *path)
{
    zcall *z = calloc(1, sizeof *z);
    if (z == NULL)
        return NULL;
    z->s = s;
    z->refs = 1;
    z->op = op;
    z->data_len = -1;
    snprintf(z->path, sizeof z->path, "%s", path);
    return z;
}

/* Drops one reference; s->mu held. */
static void call_drop_locked(zcall *z)
{
    if (--z->refs == 0) {
        free(z->nodes);
        free(z);
    }
}

/* The caller's release of a call it made. */
static void call_free(zcall *z)
{
    if (z == NULL)
        return;
    zsess *s = z->s;
    pthread_mutex_lock(&s->mu);
    call_drop_locked(z);
    pthread_mutex_unlock(&s->mu);
}

/* Ends a completion: s->mu held. */
static void call_finish_locked(zcall *z, int rc)
{
    z->rc = rc;
    z->done = true;
    pthread_cond_broadcast(&z->s->cv);
    call_drop_locked(z);
}

/* The completions run on the client's completion thread (or in
 * zookeeper_close, with ZCLOSING). data is the zcall. */
static void on_stat(int rc, const struct Stat *stat, const void *data)
{
    zcall *z = (zcall *)data;
    zsess *s = z->s; /* z may be freed by the finish */
    pthread_mutex_lock(&s->mu);
    if (rc == ZOK && stat != NULL)
        z->stat = *stat;
    call_finish_locked(z, rc);
    pthread_mutex_unlock(&s->mu);
}

static void on_data(int rc, const char *value, int value_len, const struct Stat *stat,
                    const void *data)
{
    zcall *z = (zcall *)data;
    zsess *s = z->s;
    pthread_mutex_lock(&s->mu);
    if (rc == ZOK) {
        size_t n = value != NULL && value_len > 0 ? (size_t)value_len : 0;
        if (n >= sizeof z->data)
            n = sizeof z->data - 1;
        memcpy(z->data, value, n);
        z->data[n] = '\0';
        z->data_len = value != NULL ? value_len : -1;
        if (stat != NULL)
            z->stat = *stat;
    }
    call_finish_locked(z, rc);
    pthread_mutex_unlock(&s->mu);
}

static void on_string_stat(int rc, const char *value, const struct Stat *stat, const void *data)
{
    (void)value;
    on_stat(rc, stat, data);
}

static void on_void(int rc, const void *data)
{
    on_stat(rc, NULL, data);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void on_strings(int rc, const struct String_vector *strings, const void *data)
{
    zcall *z = (zcall *)data;
    uint64_t *nodes = NULL;
    size_t n = 0;
    if (rc == ZOK && strings != NULL && strings->count > 0) {
        nodes = malloc((size_t)strings->count * sizeof *nodes);
        if (nodes == NULL)
            rc = ZSYSTEMERROR;
        for (int32_t i = 0; nodes != NULL && i < strings->count; i++)
            if (idmc_parse_node(strings->data[i], &nodes[n]) == 0)
                n++;
        if (nodes != NULL)
            qsort(nodes, n, sizeof *nodes, cmp_u64);
    }
    zsess *s = z->s;
    pthread_mutex_lock(&s->mu);
    free(z->nodes);
    z->nodes = nodes;
    z->n_nodes = n;
    call_finish_locked(z, rc);
    pthread_mutex_unlock(&s->mu);
}

static int issue(zhandle_t *zh, zcall *z)
{
    switch (z->op) {
    case ZOP_EXISTS:
        return zoo_aexists(zh, z->path, 0, on_stat, z);
    case ZOP_GET:
        return zoo_aget(zh, z->path, 0, on_data, z);
    case ZOP_CHILDREN:
        return zoo_aget_children(zh, z->path, 0, on_strings, z);
    case ZOP_CREATE:
        return zoo_acreate2(zh, z->path, z->data, z->data_len, &ZOO_OPEN_ACL_UNSAFE, z->mode,
                            on_string_stat, z);
    case ZOP_DELETE:
        return zoo_adelete(zh, z->path, z->version, on_void, z);
    case ZOP_MARK:
        zoo_check_op_init(&z->ops[0], z->path, z->version);
        if (z->version2 < 0)
            zoo_create_op_init(&z->ops[1], z->path2, z->data, z->data_len, &ZOO_OPEN_ACL_UNSAFE,
                               ZOO_PERSISTENT, NULL, 0);
        else
            zoo_set_op_init(&z->ops[1], z->path2, z->data, z->data_len, z->version2, NULL);
        return zoo_amulti(zh, 2, z->ops, z->results, on_void, z);
    }
    return ZBADARGUMENTS;
}

/*
 * Sends z and waits for its answer, at most s->request_ms in all: first
 * for the session to be connected, then for the answer. A connection lost
 * meanwhile (the library then moves on to the next server) sends it again
 * once reconnected, within the same time; every request here may be
 * repeated (the callers recognise their own earlier success). Returns the
 * ZooKeeper result: ZOK or the server's error, ZINVALIDSTATE when the
 * session has expired, ZCONNECTIONLOSS when the time ran out while not
 * connected, ZOPERATIONTIMEOUT when it ran out waiting for the answer
 * (whose fields are then not to be read).
 */
static int run(zsess *s, zcall *z)
{
    int64_t deadline = now_ms() + s->request_ms;
    if (s->end_ms != 0 && s->end_ms < deadline)
        deadline = s->end_ms;
    int rc = ZOPERATIONTIMEOUT;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->state != ZOO_CONNECTED_STATE && !unrecoverable(s->state) && now_ms() < deadline)
            wait_until(s, deadline);
        if (unrecoverable(s->state)) {
            rc = ZINVALIDSTATE;
            break;
        }
        if (s->state != ZOO_CONNECTED_STATE || now_ms() >= deadline) {
            rc = ZCONNECTIONLOSS;
            break;
        }
        z->done = false;
        z->refs++; /* the completion's */
        pthread_mutex_unlock(&s->mu);
        int sent = issue(s->zh, z);
        pthread_mutex_lock(&s->mu);
        if (sent != ZOK) {
            z->refs--; /* no completion will run */
            rc = sent;
            break;
        }
        while (!z->done && now_ms() < deadline)
            wait_until(s, deadline);
        if (!z->done) {
            rc = ZOPERATIONTIMEOUT; /* the completion keeps its reference */
            break;
        }
        rc = z->rc;
        if (rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT)
            break;
        /* The connection went: the library reports the state before it
         * fails the requests, so the wait above holds until it is back.
         * Should the state still read connected, a short pause keeps this
         * from spinning. */
        if (s->state == ZOO_CONNECTED_STATE)
            wait_until(s, now_ms() + 50 < deadline ? now_ms() + 50 : deadline);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Runs a request made on the spot; *out gets it (the caller frees it)
 * when the answer came, NULL otherwise. */
static int run_new(zsess *s, enum zop op, const char *path, zcall **out)
{
    *out = NULL;
    zcall *z = call_new(s, op, path);
    if (z == NULL)
        return ZSYSTEMERROR;
    int rc = run(s, z);
    if (rc == ZOPERATIONTIMEOUT || rc == ZINVALIDSTATE) {
        call_free(z);
        return rc;
    }
    *out = z;
    return rc;
}

/* Turns a failed request into a result and a message. */
static int fail(zsess *s, int rc, const char *what, const char *path, char *msg, size_t cap)
{
    if (rc == ZINVALIDSTATE || rc == ZSESSIONEXPIRED) {
        snprintf(msg, cap, "the ZooKeeper session has expired (%s %s)", what, path);
        return IDMC_LOST;
    }
    if (rc == ZAUTHFAILED) {
        snprintf(msg, cap, "ZooKeeper refused the session's authentication (%s %s)", what, path);
        return IDMC_LOST;
    }
    if (rc == ZOPERATIONTIMEOUT) {
        snprintf(msg, cap, "ZooKeeper at %s: no answer within %" PRId64 " ms (%s %s)", s->hosts,
                 s->request_ms, what, path);
        return IDMC_ERROR;
    }
    if (rc == ZCONNECTIONLOSS) {
        snprintf(msg, cap, "ZooKeeper at %s: no connection within %" PRId64 " ms (%s %s)", s->hosts,
                 s->request_ms, what, path);
        return IDMC_ERROR;
    }
    if (rc == ZSYSTEMERROR) {
        snprintf(msg, cap, "out of memory (%s %s)", what, path);
        return IDMC_ERROR;
    }
    snprintf(msg, cap, "ZooKeeper at %s: %s %s: %s", s->hosts, what, path, zerror(rc));
    return IDMC_ERROR;
}

/* ---- sessions ------------------------------------------------------------ */

static int hosts_string(const idmc_target *t, char *dst, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < t->n; i++) {
        int n = snprintf(dst + len, cap - len, "%s%s:%d", i > 0 ? "," : "", t->ep[i].host,
                         t->ep[i].port);
        if (n < 0 || (size_t)n >= cap - len)
            return -1;
        len += (size_t)n;
    }
    return 0;
}

static void session_close(zsess *s)
{
    /* Sends the close (the server then deletes the session's ephemeral
     * nodes at once) and waits for it briefly: the library bounds this by
     * 1.5 s, plus 3 s to flush what it has to send. Never with s->mu held:
     * pending completions run in here. */
    if (s->zh != NULL)
        zookeeper_close(s->zh);
    s->zh = NULL;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

/* How long a new session waits for its first connection: twice the
 * request timeout, plus two thirds of the session timeout (what the library
 * gives a server that never answers) for each server the ensemble can lose
 * and keep its quorum. With one server listed, or two, the first term
 * alone: no server can be lost. */
static int64_t connect_wait_ms(const zsess *s, const idmc_coord *c)
{
    int64_t losable = c->target.n > 0 ? (int64_t)(c->target.n - 1) / 2 : 0;
    return 2 * s->request_ms + losable * (2 * c->ttl_ms / 3);
}

/* Opens a session with the coordinator's TTL as its timeout and waits
 * until it is connected, for connect_wait_ms at most (see the file comment
 * on servers that do not answer). */
static int session_open(zsess *s, const idmc_coord *c, char *msg, size_t cap)
{
    memset(s, 0, sizeof *s);
    s->request_ms = idmc_request_timeout_ms(c->ttl_ms);
    if (hosts_string(&c->target, s->hosts, sizeof s->hosts) != 0) {
        snprintf(msg, cap, "the server list is too long");
        return IDMC_USAGE;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int err = pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (err != 0) {
        snprintf(msg, cap, "cannot make a condition variable: %s", strerror(err));
        return IDMC_ERROR;
    }
    pthread_mutex_init(&s->mu, NULL);

    int64_t wait_ms = connect_wait_ms(s, c);
    int64_t deadline = now_ms() + wait_ms;
    /* Resolves the host names here, before any thread starts: a slow
     * resolver is not bounded by wait_ms. */
    errno = 0;
    s->zh = zookeeper_init2(s->hosts, watcher, (int)c->ttl_ms, NULL, s, 0, log_nothing);
    if (s->zh == NULL) {
        /* The library's errno: ENOENT for a name that does not exist,
         * EINVAL for a bad list or another resolver failure. */
        int e = errno;
        snprintf(msg, cap, "ZooKeeper at %s: cannot start a client: %s", s->hosts,
                 e == ENOENT   ? "no server name resolves"
                 : e == EINVAL ? "the server names cannot be resolved"
                               : strerror(e));
        session_close(s);
        return IDMC_ERROR;
    }
    pthread_mutex_lock(&s->mu);
    while (s->state != ZOO_CONNECTED_STATE && !unrecoverable(s->state) && now_ms() < deadline)
        wait_until(s, deadline);
    int state = s->state;
    pthread_mutex_unlock(&s->mu);
    if (state == ZOO_CONNECTED_STATE)
        return 0;
    if (unrecoverable(state))
        snprintf(msg, cap, "ZooKeeper at %s refused the session", s->hosts);
    else
        /* The library's state says how far it got with the server it is
         * at: a TCP connection (ASSOCIATING: the session request is sent)
         * or not yet. zoo_get_current_server formats into a buffer of the
         * calling thread. */
        snprintf(msg, cap,
                 "ZooKeeper at %s: no connection within %" PRId64 " ms (waiting for %s %s)",
                 s->hosts, wait_ms, zoo_get_current_server(s->zh),
                 zoo_state(s->zh) == ZOO_ASSOCIATING_STATE ? "to answer the session request"
                                                           : "to accept the connection");
    session_close(s);
    return IDMC_ERROR;
}

static int64_t session_id(zsess *s)
{
    const clientid_t *id = zoo_client_id(s->zh);
    return id != NULL ? id->client_id : 0;
}

/* ---- nodes --------------------------------------------------------------- */

/* Creates path as a persistent node with no data; one already there is
 * fine. Returns the ZooKeeper result (ZNONODE: a parent is missing). */
static int create_dir(zsess *s, const char *path)
{
    zcall *z = call_new(s, ZOP_CREATE, path);
    if (z == NULL)
        return ZSYSTEMERROR;
    z->mode = ZOO_PERSISTENT;
    z->data_len = 0;
    int rc = run(s, z);
    call_free(z);
    return rc == ZNODEEXISTS ? ZOK : rc;
}

/* Creates the ancestors of path from the top down (the root exists). */
static int make_parents(zsess *s, const char *path, char *msg, size_t cap)
{
    char up[ZK_PATH_CAP];
    snprintf(up, sizeof up, "%s", path);
    for (char *p = up + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = create_dir(s, up);
        *p = '/';
        if (rc != ZOK)
            return fail(s, rc, "creating", up, msg, cap);
    }
    return 0;
}

/* PATH/workers and PATH/marks, and PATH with its parents when missing
 * (tried only then: usually the two creates find the tree there). */
static int make_tree(zsess *s, const idmc_target *t, char *msg, size_t cap)
{
    static const char *const dirs[] = {"workers", "marks"};
    char path[ZK_PATH_CAP];
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", t->path, dirs[i]);
        int rc = create_dir(s, path);
        if (rc == ZNONODE) {
            int made = make_parents(s, path, msg, cap);
            if (made != 0)
                return made;
            rc = create_dir(s, path);
        }
        if (rc != ZOK)
            return fail(s, rc, "creating", path, msg, cap);
    }
    return 0;
}

/* The node numbers under PATH/WHAT, sorted (none when it is missing). */
static int children(zsess *s, const idmc_target *t, const char *what, uint64_t **nodes, size_t *n,
                    char *msg, size_t cap)
{
    *nodes = NULL;
    *n = 0;
    char path[ZK_PATH_CAP];
    snprintf(path, sizeof path, "%s/%s", t->path, what);
    zcall *z;
    int rc = run_new(s, ZOP_CHILDREN, path, &z);
    if (rc == ZOK) {
        *nodes = z->nodes;
        *n = z->n_nodes;
        z->nodes = NULL;
    }
    call_free(z);
    if (rc == ZOK || rc == ZNONODE)
        return 0;
    return fail(s, rc, "listing", path, msg, cap);
}

/* Parses a mark's data: decimal Unix ms, 0 or more. */
static int parse_mark(const zcall *z, int64_t *ms)
{
    if (z->data_len <= 0 || z->data_len >= (int)sizeof z->data)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(z->data, &end, 10);
    if (errno != 0 || end == z->data || *end != '\0' || v < 0)
        return -1;
    *ms = v;
    return 0;
}

/* Reads the mark at path: *ms and its *version, or 0 and -1 when there is
 * none. */
static int read_mark(zsess *s, const char *path, int64_t *ms, int *version, char *msg, size_t cap)
{
    zcall *z;
    int rc = run_new(s, ZOP_GET, path, &z);
    *ms = 0;
    *version = -1;
    if (rc == ZOK && parse_mark(z, ms) != 0) {
        snprintf(msg, cap, "%s holds '%.40s', not a time in decimal Unix ms", path, z->data);
        call_free(z);
        return IDMC_ERROR;
    }
    if (rc == ZOK)
        *version = z->stat.version;
    call_free(z);
    if (rc == ZOK || rc == ZNONODE)
        return 0;
    return fail(s, rc, "reading", path, msg, cap);
}

/* ---- the operations ------------------------------------------------------ */

static int zk_open(idmc_coord *c, char *msg, size_t cap)
{
    if (c->ttl_ms > INT_MAX) {
        snprintf(msg, cap, "a ZooKeeper session timeout must be below %d ms", INT_MAX);
        return IDMC_USAGE;
    }
    char key[ZK_PATH_CAP];
    if (idmc_slot_key(&c->target, "workers", UINT64_MAX, key, sizeof key) != 0) {
        snprintf(msg, cap, "the path is too long");
        return IDMC_USAGE;
    }
    c->impl = NULL; /* the configuration in c is all there is */
    return 0;
}

static void zk_close(idmc_coord *c)
{
    (void)c;
}

/* Whether the hold described by st is ours: this generation, this session. */
static int check_hold(zlease *z, int rc, const struct Stat *st, char *msg, size_t cap)
{
    if (rc == ZNONODE) {
        snprintf(msg, cap, "the hold %s is gone (the session expired or it was deleted)", z->hold);
        return IDMC_LOST;
    }
    if (rc != ZOK)
        return fail(&z->s, rc, "checking", z->hold, msg, cap);
    if (st->czxid != z->czxid || st->ephemeralOwner != session_id(&z->s)) {
        snprintf(msg, cap, "the hold %s is now generation %" PRId64 " (ours was %" PRId64 ")",
                 z->hold, st->czxid, z->czxid);
        return IDMC_LOST;
    }
    return 0;
}

/* Reads the hold; 0 with *version when it is still ours. */
static int hold_version(zlease *z, int *version, char *msg, size_t cap)
{
    zcall *q;
    int rc = run_new(&z->s, ZOP_EXISTS, z->hold, &q);
    struct Stat st = q != NULL ? q->stat : (struct Stat){0};
    call_free(q);
    rc = check_hold(z, rc, &st, msg, cap);
    if (rc == 0)
        *version = st.version;
    return rc;
}

/* Tries to create the hold of node n. 0 with the czxid; IDMC_BUSY when
 * another session holds it; an error. A create repeated after a lost
 * connection may find our own node: it is ours. */
static int take(zlease *z, const idmc_coord *c, uint64_t n, const char *holder, char *msg,
                size_t cap)
{
    char path[ZK_PATH_CAP];
    idmc_slot_key(&c->target, "workers", n, path, sizeof path);
    zcall *q = call_new(&z->s, ZOP_CREATE, path);
    if (q == NULL)
        return fail(&z->s, ZSYSTEMERROR, "creating", path, msg, cap);
    q->mode = ZOO_EPHEMERAL;
    q->data_len = (int)strlen(holder);
    memcpy(q->data, holder, (size_t)q->data_len);
    int rc = run(&z->s, q);
    struct Stat st = {0};
    if (rc == ZOK)
        st = q->stat; /* answered: the completion is done with q */
    call_free(q);
    if (rc == ZNODEEXISTS) {
        rc = run_new(&z->s, ZOP_EXISTS, path, &q);
        if (rc == ZOK)
            st = q->stat;
        call_free(q);
        if (rc == ZNONODE || (rc == ZOK && st.ephemeralOwner != session_id(&z->s)))
            return IDMC_BUSY;
    }
    if (rc != ZOK)
        return fail(&z->s, rc, "creating", path, msg, cap);
    z->czxid = st.czxid;
    snprintf(z->hold, sizeof z->hold, "%s", path);
    idmc_slot_key(&c->target, "marks", n, z->mark, sizeof z->mark);
    return 0;
}

/* Holds the lowest node of [lo, hi] that no one holds: the children of
 * PATH/workers say which to skip; a node taken meanwhile is skipped too. */
static int take_lowest(zlease *z, const idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder,
                       uint64_t *node, char *msg, size_t cap)
{
    uint64_t *held;
    size_t n_held;
    int rc = children(&z->s, &c->target, "workers", &held, &n_held, msg, cap);
    if (rc != 0)
        return rc;
    size_t i = 0;
    uint64_t n = lo;
    for (;;) {
        while (i < n_held && held[i] < n)
            i++;
        rc = i < n_held && held[i] == n ? IDMC_BUSY : take(z, c, n, holder, msg, cap);
        if (rc != IDMC_BUSY || n == hi)
            break;
        n++;
    }
    free(held);
    if (rc == 0)
        *node = n;
    return rc;
}

/* The message for a claim that found every node held. */
static void busy_message(zlease *z, const idmc_coord *c, uint64_t lo, uint64_t hi, char *msg,
                         size_t cap)
{
    if (lo != hi) {
        snprintf(msg, cap, "every node from %" PRIu64 " to %" PRIu64 " is held", lo, hi);
        return;
    }
    char path[ZK_PATH_CAP];
    idmc_slot_key(&c->target, "workers", lo, path, sizeof path);
    zcall *q;
    int rc = run_new(&z->s, ZOP_GET, path, &q);
    if (rc == ZOK)
        snprintf(msg, cap, "node %" PRIu64 " is held by %s", lo, q->data);
    else
        snprintf(msg, cap, "node %" PRIu64 " is held", lo);
    call_free(q);
}

static int zk_claim(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, idmc_lease *l,
                    char *msg, size_t cap)
{
    if (strlen(holder) >= ZK_DATA_CAP) {
        snprintf(msg, cap, "the holder line is longer than %d bytes", ZK_DATA_CAP - 1);
        return IDMC_USAGE;
    }
    zlease *z = calloc(1, sizeof *z);
    if (z == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    int rc = session_open(&z->s, c, msg, cap);
    if (rc != 0) {
        free(z);
        return rc;
    }
    uint64_t node = 0;
    int64_t mark_ms = 0;
    int version;
    rc = make_tree(&z->s, &c->target, msg, cap);
    if (rc == 0)
        rc = take_lowest(z, c, lo, hi, holder, &node, msg, cap);
    if (rc == IDMC_BUSY)
        busy_message(z, c, lo, hi, msg, cap);
    if (rc == 0)
        rc = read_mark(&z->s, z->mark, &mark_ms, &version, msg, cap);
    if (rc != 0) {
        /* Closing the session deletes a hold already made. A lost session
         * here is only a failed claim. */
        session_close(&z->s);
        free(z);
        return rc == IDMC_LOST ? IDMC_ERROR : rc;
    }
    l->node = node;
    snprintf(l->generation, sizeof l->generation, "%" PRId64, z->czxid);
    l->mark_ms = mark_ms;
    l->ttl_ms = zoo_recv_timeout(z->s.zh);
    l->impl = z;
    return 0;
}

static int zk_keepalive(idmc_lease *l, int64_t *ttl_ms, char *msg, size_t cap)
{
    zlease *z = l->impl;
    int version;
    int rc = hold_version(z, &version, msg, cap);
    if (rc == 0)
        *ttl_ms = zoo_recv_timeout(z->s.zh);
    return rc;
}

/* One fenced write of the mark: 0, IDMC_BUSY when something changed
 * between the reads and the multi (read again), or a result. */
static int write_mark_once(zlease *z, int64_t ms, bool shrink, char *msg, size_t cap)
{
    int hold_v;
    int rc = hold_version(z, &hold_v, msg, cap);
    if (rc != 0)
        return rc;
    int64_t cur;
    int mark_v;
    rc = read_mark(&z->s, z->mark, &cur, &mark_v, msg, cap);
    if (rc != 0)
        return rc;
    if (!shrink && mark_v >= 0 && cur >= ms)
        return 0; /* already as high, and the hold was ours just now */
    if (shrink && mark_v >= 0 && cur == ms)
        return 0;
    zcall *q = call_new(&z->s, ZOP_MARK, z->hold);
    if (q == NULL)
        return fail(&z->s, ZSYSTEMERROR, "writing", z->mark, msg, cap);
    /* The check compares the hold's version only (ZooKeeper's check has
     * no czxid): the exists above compared czxid and owner, and while our
     * session lives only a manual delete can end the hold; a session
     * that expired can run nothing, this multi included. */
    q->version = hold_v;
    snprintf(q->path2, sizeof q->path2, "%s", z->mark);
    q->version2 = mark_v;
    q->data_len = snprintf(q->data, sizeof q->data, "%" PRId64, ms);
    rc = run(&z->s, q);
    call_free(q);
    if (rc == ZOK)
        return 0;
    /* ZBADVERSION, ZNODEEXISTS, ZNONODE: the hold or the mark changed
     * (or a write repeated after a lost connection had been done). */
    if (rc == ZBADVERSION || rc == ZNODEEXISTS || rc == ZNONODE)
        return IDMC_BUSY;
    return fail(&z->s, rc, "writing", z->mark, msg, cap);
}

static int zk_write_mark(idmc_lease *l, int64_t ms, bool shrink, char *msg, size_t cap)
{
    zlease *z = l->impl;
    if (ms < 0) {
        snprintf(msg, cap, "a mark must not be negative");
        return IDMC_USAGE;
    }
    for (int i = 0; i < ZK_MARK_TRIES; i++) {
        int rc = write_mark_once(z, ms, shrink, msg, cap);
        if (rc != IDMC_BUSY)
            return rc;
    }
    snprintf(msg, cap, "%s kept changing while it was written (%d tries)", z->mark, ZK_MARK_TRIES);
    return IDMC_ERROR;
}

static void zk_release(idmc_lease *l)
{
    zlease *z = l->impl;
    if (z == NULL)
        return;
    char msg[IDMC_MSG_CAP];
    int version;
    /* Deletes the hold only when it is still ours (the version then
     * guards against a new holder in between); closing the session would
     * delete it too, but the delete is seen at once even when the close
     * does not get through. Both requests share one request timeout, and
     * the close waits 1.5 s at most for a server that does not answer. */
    z->s.end_ms = now_ms() + z->s.request_ms;
    if (!l->lost && hold_version(z, &version, msg, sizeof msg) == 0) {
        zcall *q = call_new(&z->s, ZOP_DELETE, z->hold);
        if (q != NULL) {
            q->version = version;
            run(&z->s, q);
            call_free(q);
        }
    }
    session_close(&z->s);
    free(z);
    l->impl = NULL;
}

/* Merges two sorted lists of nodes into one without repeats. */
static uint64_t *merge_nodes(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t *n)
{
    uint64_t *out = malloc((na + nb + 1) * sizeof *out);
    size_t i = 0, j = 0, k = 0;
    if (out == NULL)
        return NULL;
    while (i < na || j < nb) {
        uint64_t v = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        while (i < na && a[i] == v)
            i++;
        while (j < nb && b[j] == v)
            j++;
        if (k == 0 || out[k - 1] != v)
            out[k++] = v;
    }
    *n = k;
    return out;
}

/* Reports one node: its hold (if any) and its mark. Returns 1 when
 * reported, 0 when there was nothing (both went meanwhile), or -1. */
static int list_one(zsess *s, const idmc_coord *c, uint64_t node,
                    void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx, char *msg,
                    size_t cap)
{
    char path[ZK_PATH_CAP];
    char gen[IDMC_GEN_CAP];
    idmc_slot_info info = {.node = node, .ttl_ms_left = -1};
    idmc_slot_key(&c->target, "workers", node, path, sizeof path);
    zcall *hold;
    int rc = run_new(s, ZOP_GET, path, &hold);
    if (rc != ZOK && rc != ZNONODE) {
        call_free(hold);
        fail(s, rc, "reading", path, msg, cap);
        return -1;
    }
    if (rc == ZOK) {
        info.held = true;
        snprintf(gen, sizeof gen, "%" PRId64, hold->stat.czxid);
        info.generation = gen;
        info.holder = hold->data;
    }
    idmc_slot_key(&c->target, "marks", node, path, sizeof path);
    int version;
    rc = read_mark(s, path, &info.mark_ms, &version, msg, cap);
    if (rc == 0 && (info.held || version >= 0))
        fn(ctx, &info);
    call_free(hold);
    if (rc != 0)
        return -1;
    return info.held || version >= 0;
}

static int zk_list(idmc_coord *c, void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx,
                   char *msg, size_t cap)
{
    zsess s;
    if (session_open(&s, c, msg, cap) != 0)
        return -1;
    uint64_t *held = NULL, *marked = NULL, *all = NULL;
    size_t n_held = 0, n_marked = 0, n_all = 0;
    int count = -1;
    if (children(&s, &c->target, "workers", &held, &n_held, msg, cap) != 0 ||
        children(&s, &c->target, "marks", &marked, &n_marked, msg, cap) != 0)
        goto out;
    all = merge_nodes(held, n_held, marked, n_marked, &n_all);
    if (all == NULL) {
        snprintf(msg, cap, "out of memory");
        goto out;
    }
    count = 0;
    for (size_t i = 0; i < n_all; i++) {
        int rc = list_one(&s, c, all[i], fn, ctx, msg, cap);
        if (rc < 0) {
            count = -1;
            break;
        }
        count += rc;
    }
out:
    free(held);
    free(marked);
    free(all);
    session_close(&s);
    return count;
}

static const idmc_ops zk_ops = {
    .kind = "zookeeper",
    .open = zk_open,
    .close = zk_close,
    .claim = zk_claim,
    .keepalive = zk_keepalive,
    .write_mark = zk_write_mark,
    .release = zk_release,
    .list = zk_list,
};

const idmc_ops *const idmc_zk_ops = &zk_ops;
