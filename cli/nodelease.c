/*
 * nodelease.c - a snowflake node leased for one `idmint gen snowflake` run
 * (--node auto, --coord URL; docs/leases.md, coord/idmint_coord.h): from a
 * coordinator (etcd, ZooKeeper) or from this host's registry
 * (coord/local.c, the default of --node auto, as idmintd's).
 *
 * The run mints only inside what its slot promises: the generator resumes
 * above the slot's mark (an earlier holder's time high-water mark), and
 * its ceiling is the mark recorded for this run (a second ahead of the
 * clock, raised whenever minting gets within half a second of it) and, for
 * a coordinator, the lease's deadline as wall-clock time (the start of the
 * last confirmed claim or keep-alive, plus the TTL, less a margin). So a
 * run that can no longer reach its coordinator stops minting before
 * anyone else can have been given its node, and the next holder of the
 * node resumes above everything it minted.
 *
 * The CLI has one thread: keep-alives and mark writes happen between
 * batches (a batch takes about a millisecond, far less than any TTL) and
 * block for at most the coordinator's request timeouts. Left out: SIGINT
 * and SIGTERM are not caught (a killed run's lease runs out by itself and
 * the mark recorded covers what it minted; the next holder waits out at
 * most the second reserved ahead).
 */
#include "cli.h"

#include "host.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_QUIET_MS 1000 /* a longer wait for the slot's mark is announced */
#define RETRY_MS      200  /* after a failed call, the next one no sooner */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    if (ms <= 0) {
        return;
    }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Monotonic ms: past it, the lease may have expired on the coordinator
 * (idmc_lease_deadline: the TTL less a margin, as idmintd counts it). */
static int64_t deadline(const cli_node_lease *L)
{
    return idmc_lease_deadline(L->confirmed, L->ttl_ms);
}

/* Where the node came from, for messages. */
static const char *source(const cli_node_lease *L)
{
    return L->coord != NULL ? idmc_url(L->coord) : "this host's registry";
}

static int lost(cli *c, const cli_node_lease *L, const char *msg)
{
    if (L->lease == NULL) {
        cli_diag(c,
                 "node %" PRIu64 " of this host's registry was lost: %s; stopping (the IDs "
                 "printed are valid)",
                 L->node, msg);
        return CLI_EXIT_FAIL;
    }
    cli_diag(c,
             "the lease of node %" PRIu64 " (generation %s) from %s was lost: %s; stopping (the "
             "IDs printed are valid)",
             L->node, idmc_lease_generation(L->lease), source(L), msg);
    return CLI_EXIT_FAIL;
}

static void failed(cli_node_lease *L, const char *what, const char *msg)
{
    int64_t now = mono_ms();
    snprintf(L->failure, sizeof L->failure, "%s: %.400s", what, msg);
    L->retry_at = now + RETRY_MS;
    if (L->failing_since == 0) {
        L->failing_since = now;
    }
}

/* Keeps a coordinator's lease alive when due (a third of the TTL after the
 * last confirmation, or sooner when force). Returns 0, IDMC_LOST (msg set)
 * or IDMC_ERROR (recorded in L->failure; tried again later). */
static int keepalive_if_due(cli_node_lease *L, bool force, char *msg, size_t cap)
{
    int64_t t0 = mono_ms();
    if (L->lease == NULL || t0 < L->retry_at || (!force && t0 < L->next_keepalive)) {
        return 0;
    }
    int64_t ttl = 0;
    idmc_error err;
    int rc = idmc_keepalive(L->lease, &ttl, &err);
    snprintf(msg, cap, "%s", err.msg);
    if (rc == 0) {
        L->confirmed = t0;
        L->ttl_ms = ttl;
        L->next_keepalive = t0 + ttl / 3;
        L->failure[0] = '\0';
        L->failing_since = 0;
    } else if (rc != IDMC_LOST) {
        failed(L, "keep-alive failed", msg);
        rc = IDMC_ERROR;
    }
    return rc;
}

/* Records a new mark for this run in the node's slot when one is due, by
 * the slots' rule (idmc_slot_keep: IDMC_SLOT_AHEAD_MS past the clock,
 * anew within IDMC_SLOT_LOW_MS of it), which a coordinator's slot keeps
 * too. 0 (recorded or not due), IDMC_LOST, or IDMC_ERROR with msg. */
static int record_mark(cli_node_lease *L, int64_t now, bool at_ceiling, char *msg, size_t cap)
{
    idmc_error err;
    int rc;
    if (L->lease == NULL) {
        rc = idmc_slot_keep(L->slot, &L->recorded, 0, now, at_ceiling, &err);
    } else if (now + IDMC_SLOT_LOW_MS < L->recorded) {
        return 0;
    } else {
        rc = idmc_record_mark(L->lease, now + IDMC_SLOT_AHEAD_MS, &err);
        if (rc == 0) {
            L->recorded = now + IDMC_SLOT_AHEAD_MS;
        }
    }
    snprintf(msg, cap, "%s", err.msg);
    return rc;
}

static int ran_out(cli *c, const cli_node_lease *L)
{
    cli_diag(c,
             "the lease of node %" PRIu64 " ran out: no keep-alive confirmed by %s for %" PRId64
             " ms (TTL %" PRId64 " ms, less a margin)%s%s; stopping (the IDs printed are valid)",
             L->node, idmc_url(L->coord), mono_ms() - L->confirmed, L->ttl_ms,
             L->failure[0] != '\0' ? "; " : "", L->failure);
    return CLI_EXIT_FAIL;
}

int64_t cli_node_lease_ceiling(const cli_node_lease *L)
{
    int64_t ceiling = L->recorded;
    if (L->lease != NULL) {
        int64_t d = wall_ms() + (deadline(L) - mono_ms());
        if (d < ceiling) {
            ceiling = d;
        }
    }
    return ceiling;
}

int cli_node_lease_keep(cli *c, cli_node_lease *L, bool at_ceiling)
{
    char msg[IDMC_MSG_CAP];
    for (;;) {
        /* At the ceiling, a deadline less than the mark's headroom away is
         * what holds minting back: refresh it now. */
        bool force = at_ceiling && deadline(L) - mono_ms() <= IDMC_SLOT_LOW_MS;
        int rc = keepalive_if_due(L, force, msg, sizeof msg);
        if (rc == IDMC_LOST) {
            return lost(c, L, msg);
        }
        int64_t now = wall_ms();
        if (mono_ms() >= L->retry_at) {
            rc = record_mark(L, now, at_ceiling, msg, sizeof msg);
            if (rc == 0) {
                if (L->failure[0] != '\0' && L->lease == NULL) {
                    L->failure[0] = '\0';
                    L->failing_since = 0;
                }
            } else if (rc == IDMC_LOST) {
                return lost(c, L, msg);
            } else {
                failed(L, "cannot record the time high-water mark in the node's slot", msg);
            }
        }
        if (L->lease != NULL && mono_ms() >= deadline(L)) {
            return ran_out(c, L);
        }
        if (!at_ceiling || cli_node_lease_ceiling(L) > wall_ms()) {
            return CLI_EXIT_OK;
        }
        /* At the ceiling, and it could not be raised: try again for a
         * while (a coordinator that is briefly away), then give up. */
        if (L->lease == NULL ||
            (L->failing_since != 0 && mono_ms() - L->failing_since >= L->ttl_ms)) {
            cli_diag(c, "node %" PRIu64 ": %s; not minting past the mark recorded in its slot",
                     L->node, L->failure[0] != '\0' ? L->failure : "the ceiling is reached");
            return CLI_EXIT_FAIL;
        }
        int64_t wait = L->retry_at - mono_ms();
        sleep_ms(wait > 0 ? wait : 1);
    }
}

/* Waits until the clock has passed the slot's mark, keeping a lease
 * alive meanwhile: nothing may be minted at or below the mark. */
static int wait_for_mark(cli *c, cli_node_lease *L)
{
    int64_t now = wall_ms();
    if (now > L->claim_mark) {
        return CLI_EXIT_OK;
    }
    int64_t wait = L->claim_mark + 1 - now;
    if (wait > WAIT_QUIET_MS) {
        char mark[IDM_RFC3339_CAP];
        if (idm_time_format(L->claim_mark, mark, sizeof mark) != IDM_OK) {
            snprintf(mark, sizeof mark, "%" PRId64, L->claim_mark);
        }
        cli_diag(c,
                 "node %" PRIu64 ": waiting %" PRId64 ".%" PRId64
                 " s for the clock to pass the slot's mark %s (its earlier holders' time "
                 "high-water mark)",
                 L->node, wait / 1000, wait % 1000 / 100, mark);
    }
    char msg[IDMC_MSG_CAP];
    while ((now = wall_ms()) <= L->claim_mark) {
        int64_t step = L->claim_mark + 1 - now;
        if (L->lease != NULL) {
            if (keepalive_if_due(L, false, msg, sizeof msg) == IDMC_LOST) {
                return lost(c, L, msg);
            }
            if (mono_ms() >= deadline(L)) {
                return ran_out(c, L);
            }
            int64_t until =
                (L->retry_at > L->next_keepalive ? L->retry_at : L->next_keepalive) - mono_ms();
            if (until < step) {
                step = until > 0 ? until : 1;
            }
        }
        sleep_ms(step);
    }
    return CLI_EXIT_OK;
}

static int claim_coord(cli *c, const cli_node_lease_opts *o, cli_node_lease *L, const char *holder)
{
    idmc_error err;
    const char *msg = err.msg;
    int rc = idmc_open(o->coord, o->ttl_ms, &L->coord, &err);
    if (rc == IDMC_USAGE) {
        return cli_usage(c, "--coord %s: %s", o->coord, msg);
    }
    if (rc != 0) {
        cli_diag(c, "--coord %s: %s", o->coord, msg);
        return CLI_EXIT_FAIL;
    }
    int64_t t0 = mono_ms();
    rc = idmc_claim(L->coord, o->lo, o->hi, holder, &L->lease, &err);
    if (rc == 0) {
        L->node = idmc_lease_node(L->lease);
        L->claim_mark = idmc_lease_mark_ms(L->lease);
        L->ttl_ms = idmc_lease_ttl_ms(L->lease);
        L->confirmed = t0;
        L->next_keepalive = t0 + L->ttl_ms / 3;
        return CLI_EXIT_OK;
    }
    int st = CLI_EXIT_FAIL;
    if (rc == IDMC_BUSY && o->exact) {
        cli_diag(c,
                 "--node %" PRIu64 ": %s (coordinator %s): two processes minting as one node "
                 "would repeat IDs",
                 o->lo, msg, o->coord);
    } else if (rc == IDMC_BUSY) {
        cli_diag(c, "no free snowflake node at %s: %s", o->coord, msg);
    } else if (rc == IDMC_USAGE) {
        st = cli_usage(c, "--coord %s: %s", o->coord, msg);
    } else {
        cli_diag(c, "cannot lease a snowflake node from %s: %s", o->coord, msg);
    }
    idmc_close(L->coord);
    L->coord = NULL;
    return st;
}

static int claim_local(cli *c, const cli_node_lease_opts *o, cli_node_lease *L, const char *holder)
{
    char dir[1024];
    idmc_error err;
    const char *msg = err.msg;
    if (o->registry != NULL) {
        snprintf(dir, sizeof dir, "%s", o->registry);
    } else if (idmc_local_default_dir(dir, sizeof dir) != 0) {
        cli_diag(c, "cannot name this host's node registry (the path is too long); give "
                    "--registry DIR");
        return CLI_EXIT_FAIL;
    }
    int rc = idmc_local_claim(dir, o->ns, o->lo, o->hi, o->max_mark_ms, holder, &L->slot, &err);
    if (rc == 0) {
        if (msg[0] != '\0') {
            cli_diag(c, "%s", msg); /* a slot skipped as unusable */
        }
        L->node = idmc_slot_node(L->slot);
        L->claim_mark = idmc_slot_mark_ms(L->slot);
        /* No expiry: the flock lasts as long as this process. */
        L->ttl_ms = INT64_MAX / 4;
        return CLI_EXIT_OK;
    }
    if (rc == IDMC_BUSY) {
        cli_diag(c, "no free snowflake node on this host (registry %s): %s", dir, msg);
    } else {
        cli_diag(c, "%s", msg);
    }
    return CLI_EXIT_FAIL;
}

int cli_node_lease_claim(cli *c, const cli_node_lease_opts *o, cli_node_lease *L)
{
    memset(L, 0, sizeof *L);
    char holder[IDMC_SLOT_BYTES - IDMC_HOLDER_AT];
    idmx_host_holder(holder, sizeof holder, "idmint");
    int st = o->coord != NULL ? claim_coord(c, o, L, holder) : claim_local(c, o, L, holder);
    if (st != CLI_EXIT_OK) {
        return st;
    }
    L->recorded = L->claim_mark;
    st = wait_for_mark(c, L);
    if (st == CLI_EXIT_OK) {
        /* The first mark of ours, before anything is minted. */
        st = cli_node_lease_keep(c, L, true);
    }
    if (st != CLI_EXIT_OK) {
        cli_node_lease_end(L, 0);
    }
    return st;
}

void cli_node_lease_end(cli_node_lease *L, int64_t used_ms)
{
    /* Everything minted lies at or below used (and above the claim's
     * mark): the next holder need not wait out our reserve. */
    int64_t used = used_ms > L->claim_mark ? used_ms : L->claim_mark;
    if (L->lease != NULL) {
        if (used < L->recorded) {
            (void)idmc_shrink_mark(L->lease, used, NULL);
        }
        idmc_release(L->lease);
        L->lease = NULL;
    }
    if (L->coord != NULL) {
        idmc_close(L->coord);
        L->coord = NULL;
    }
    idmc_slot_end(L->slot, L->claim_mark, L->recorded, used_ms);
    L->slot = NULL;
}
