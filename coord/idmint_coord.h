/*
 * idmint_coord.h - worker-ID leases: which snowflake node number a process
 * may mint as (coord/, a component of its own beside libidmint, which
 * stays OpenSSL-only). Design: docs/leases.md.
 *
 * This is the host-local registry, the embedded default: one slot per node
 * number under one directory per host (IDMC_HOST_REGISTRY, whoever starts
 * the process and from whatever environment), held by two locks that the
 * kernel drops when the holder dies: a name in the abstract Unix socket
 * namespace, which no file-system clean-up can remove, and an flock(2) on
 * the slot file. So two processes on one host never mint as the same node,
 * a dead holder's slot frees by itself, and a slot file removed under its
 * holder does not hand the node out twice. Each slot file also records the
 * time high-water mark of its holders (raised ahead of need while held),
 * so that a new holder resumes above whatever an earlier one may have
 * minted, even with its clock behind. Coordinators for several hosts
 * (etcd, ZooKeeper) follow below. docs/leases.md has the design.
 *
 * A slot file is IDMC_SLOT_BYTES long: "IDMSLOT1", the mark (int64, Unix
 * ms, host byte order), and at IDMC_HOLDER_AT a NUL-terminated line about
 * the holder ("pid=... host=... since=...").
 *
 * Thread-safety: a slot's marks, checks and repairs may be called from
 * different threads (idmintd records marks and checks its slot from
 * libuv's thread pool); release it from one thread once nothing else uses
 * it. Not async-signal safe. Installed as <idmint/idmint_coord.h>, with libidmint_coord.a and
 * idmint-coord.pc (which brings the clients' libraries).
 */
#ifndef IDMINT_COORD_H
#define IDMINT_COORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMC_SLOT_BYTES 512
#define IDMC_HOLDER_AT 64
#define IDMC_MSG_CAP 2048 /* room for a slot path (PATH_MAX bounds are far beyond) and why */

/* Results: 0 or one of these. */
enum { IDMC_BUSY = 1, IDMC_ERROR = 2 };

/* The detail of a call's result, caller-owned and passed last (NULL
 * allowed), as libidmint's idm_error: code is what the call returned,
 * msg the reason, NUL-terminated (for a failure; a few calls also say
 * something on success, as documented: "" otherwise). The convention is
 * docs/CONTRIBUTING.md's, "Errors". */
typedef struct idmc_error {
    int code;
    char msg[IDMC_MSG_CAP];
} idmc_error;

/* Fixed text for a result code ("busy", "error", "lost", "usage"). */
const char *idmc_strerror(int code);

typedef struct idmc_slot idmc_slot;

/* The host's registry: one place for every user and environment. Made by
 * the first process that can (root: mode 0755 for /run/idmint, 1777 for
 * nodes); a process that finds it missing and cannot make it is refused
 * with a message saying what to do (the tmpfiles.d line, --node-registry,
 * --node, --coord), never given a registry of its own. */
#define IDMC_HOST_REGISTRY "/run/idmint/nodes"

/* The registry directory to use when none is given: IDMC_HOST_REGISTRY.
 * Writes at most cap bytes; returns 0 or -1 (too long). */
int idmc_local_default_dir(char *dst, size_t cap);

/*
 * Claims a node number in [lo, hi] (exact: lo itself, lo == hi) from the
 * registry at dir, in the namespace ns (the layout's name: node 7 of one
 * layout is not node 7 of another), creating the directories as needed:
 * IDMC_HOST_REGISTRY shared (mode 1777, sticky: any user's processes make
 * slots there, none can remove another's), any other dir private (mode
 * 0700, this user's); no symbolic links. holder is a line describing the
 * caller (pid, host, addresses), kept in the slot for `lease list`.
 *
 * A slot whose recorded mark is past max_mark_ms (the layout's last time:
 * written under a clock set far ahead) or whose file cannot be opened is
 * never written: an exact claim is refused (IDMC_ERROR, err->msg naming the
 * file and how to clear it), a range claim skips it (on success err->msg then
 * starts with "skipped " and says which, for the caller to log; err->msg is
 * empty otherwise).
 *
 * Returns 0 with *out set; IDMC_BUSY when every slot in the range is held
 * (err->msg names the range, or for an exact claim the holder found); or
 * IDMC_ERROR with err->msg saying why (a directory that cannot be made or is
 * not fit, an I/O error). Does not block: a held slot is skipped.
 */
int idmc_local_claim(const char *dir, const char *ns, uint64_t lo, uint64_t hi,
                     int64_t max_mark_ms, const char *holder, idmc_slot **out, idmc_error *err);

uint64_t idmc_slot_node(const idmc_slot *slot);
/* The mark recorded in the slot when it was claimed: earlier holders' (0
 * when none). The new holder must mint nothing at or below it. */
int64_t idmc_slot_mark_ms(const idmc_slot *slot);
/* Records that the holder may mint up to ms: written and fsynced before
 * the holder's ceiling passes it. Never lowers the recorded mark. Returns
 * 0 or -1 with errno set. */
int idmc_slot_record_mark(idmc_slot *slot, int64_t ms);
/* At a clean stop: lowers the recorded mark to ms, the latest time the
 * holder actually used (everything it handed out lies at or below it),
 * so that the next holder does not wait out the holder's reserve. */
int idmc_slot_shrink_mark(idmc_slot *slot, int64_t ms);
/* The slot file's path (for messages). */
const char *idmc_slot_path(const idmc_slot *slot);
/* Whether the slot file is still the one at its path: 0; IDMC_LOST when it
 * was removed or replaced (the node is still this process's, by its name,
 * but the file that carries the mark to the next holder is gone); or
 * IDMC_ERROR. Does file I/O (fstat, lstat): not for an event loop's thread.
 * A holder checks about once a second, and on IDMC_LOST stops minting as
 * the node until idmc_slot_repair has put the file back. */
int idmc_slot_check(idmc_slot *slot, idmc_error *err);
/* After IDMC_LOST: makes the directories and the slot file again at the
 * same path, locked, with the mark recorded so far (or the mark of a file
 * made there meanwhile, if higher). 0 when the slot is whole again (err->msg
 * says what was done), 0 with err->msg empty when nothing was missing,
 * IDMC_BUSY when another process holds the file now at the path (one in
 * another network namespace, or an idmint before the abstract names: stop
 * minting as the node and release it), or IDMC_ERROR (try again). */
int idmc_slot_repair(idmc_slot *slot, idmc_error *err);
/* Gives the slot up (the locks go; the mark stays for the next holder). */
void idmc_slot_release(idmc_slot *slot);

/*
 * The rule a process that mints as a slot's node keeps (the CLI's and the
 * bindings' --node auto and fixed nodes; idmintd keeps it through its
 * durable mark, hwm.c): it mints nothing past the mark it has recorded in
 * the slot, so that the next holder of the node resumes above all of it.
 * The mark is recorded IDMC_SLOT_AHEAD_MS past the later of the clock and
 * the time used, and recorded anew when minting comes within
 * IDMC_SLOT_LOW_MS of it or stops at it; at the end it is lowered to the
 * time used, so the next holder does not wait out the reserve.
 */
#define IDMC_SLOT_AHEAD_MS 1000
#define IDMC_SLOT_LOW_MS   500

/* Records a new mark in slot when one is due (at_ceiling, or now_ms within
 * IDMC_SLOT_LOW_MS of *recorded_ms) and *recorded_ms would rise, putting
 * the slot file back first if it was removed (idmc_slot_repair); then
 * *recorded_ms is the holder's ceiling. used_ms is the latest time minted.
 * Returns 0 (recorded, or not due); IDMC_LOST when another process holds
 * the file at the slot's path now (stop minting as the node); or
 * IDMC_ERROR with err->msg (the file cannot be written: mint nothing past
 * *recorded_ms, try again later). Does file I/O and an fdatasync. */
int idmc_slot_keep(idmc_slot *slot, int64_t *recorded_ms, int64_t used_ms, int64_t now_ms,
                   bool at_ceiling, idmc_error *err);
/* At the end of a holder's run: lowers the slot's mark to used_ms (never
 * below claim_ms, the mark found at the claim) when it is below
 * recorded_ms, then releases the slot. NULL is ignored. */
void idmc_slot_end(idmc_slot *slot, int64_t claim_ms, int64_t recorded_ms, int64_t used_ms);

/* Reads the slot files of ns under dir: for each node calls fn with the
 * node, whether it is held now, the recorded mark and the holder line;
 * then for each node held whose slot file is gone (mark 0). Returns the
 * number of slots seen, or -1 with err->msg set (dir/ns cannot be read). */
int idmc_local_list(const char *dir, const char *ns,
                    void (*fn)(void *ctx, uint64_t node, bool held, int64_t mark_ms,
                               const char *holder),
                    void *ctx, idmc_error *err);

/* ==== Coordinators for several hosts: etcd and ZooKeeper ==================
 *
 * A coordinator URL names the service and where the slots live:
 *
 *   etcd://HOST:PORT[,HOST:PORT...]/PREFIX   etcd's v3 JSON gateway (etcd.c,
 *                                           libcurl + jansson)
 *   zk://HOST:PORT[,HOST:PORT...]/PATH       ZooKeeper (zk.c, libzookeeper-mt)
 *
 * One PREFIX (PATH) is one ID space: one layout, one node range shared by
 * the processes that use it. Under it:
 *
 *   PREFIX/workers/NNNN   the hold: the node (decimal, at least 4 digits,
 *                         zero-padded); exists only while held. etcd: a key
 *                         attached to the holder's lease, created by a
 *                         transaction only if absent. ZooKeeper: an
 *                         ephemeral node of the holder's session. Value: the
 *                         holder line.
 *   PREFIX/marks/NNNN     the time high-water mark of the node's holders
 *                         (decimal Unix ms), persistent: it outlives holders
 *                         so that the next one resumes above it.
 *
 * A lease (idmc_lease) is one claim: etcd's lease (granted with the TTL) or
 * ZooKeeper's session (the TTL is the session timeout; the negotiated one
 * counts). Its generation, the fencing token, is the hold's creation
 * number: etcd's create_revision of workers/NNNN, ZooKeeper's czxid.
 * Every write of a mark is fenced by it (etcd: a transaction comparing
 * create_revision; ZooKeeper: a multi checking the hold, on the holder's
 * own session), so a holder whose slot was taken over can no longer write.
 *
 * Calls block on the network, each request bounded by about a quarter of
 * the TTL (at least 500 ms, at most 2 s), trying the listed servers in
 * turn: callers run them off any event loop. One coordinator and its
 * leases are used by one thread at a time (idmintd: its lease thread; the
 * CLI: its only thread); different coordinators are independent.
 *
 * Results: 0, or IDMC_BUSY (every slot of the range is held), IDMC_ERROR
 * (the service could not be reached or answered something unexpected:
 * err->msg says which; try again), IDMC_LOST (the lease has expired or the
 * slot's generation is no longer ours: never mint as it again), IDMC_USAGE
 * (a bad URL or argument; trying again will not help). */
enum { IDMC_LOST = 3, IDMC_USAGE = 4 };

typedef struct idmc_coord idmc_coord;
typedef struct idmc_lease idmc_lease;

/* Parses url and makes a coordinator for it, with leases of ttl_ms
 * (>= 2000). Does no network I/O. Returns 0 with *out set, or IDMC_USAGE
 * with err->msg (a malformed URL, an unknown scheme, a backend this build lacks). */
int idmc_open(const char *url, int64_t ttl_ms, idmc_coord **out, idmc_error *err);
/* "etcd" or "zookeeper". */
const char *idmc_kind(const idmc_coord *c);
/* The URL as given (for messages). */
const char *idmc_url(const idmc_coord *c);
/* Frees c; its leases must have been released first. NULL is ignored. */
void idmc_close(idmc_coord *c);

/*
 * Claims the lowest free node in [lo, hi] (lo == hi: exactly that node)
 * with a new lease of the coordinator's TTL. holder describes the caller
 * (pid, host, addresses) and is stored in the hold for `lease list`.
 * The lease lasts at least its TTL from the moment this call began.
 * Returns 0 with *out; IDMC_BUSY when every node of the range is held (err->msg
 * names the range, or the holder for an exact claim); IDMC_ERROR.
 * Nothing is left behind on failure (a lease granted for a claim that
 * failed is revoked, or expires).
 */
int idmc_claim(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, idmc_lease **out,
               idmc_error *err);

uint64_t idmc_lease_node(const idmc_lease *l);
/* The generation (fencing token) as a decimal string. */
const char *idmc_lease_generation(const idmc_lease *l);
/* The mark found in PREFIX/marks/NNNN when the node was claimed (0 when
 * none): the new holder must mint nothing at or below it. */
int64_t idmc_lease_mark_ms(const idmc_lease *l);
/* The lease's TTL as the service granted it (ms). */
int64_t idmc_lease_ttl_ms(const idmc_lease *l);

/* Refreshes the lease. 0: the service confirmed that the lease is alive
 * and the hold is still this generation's, so the lease lasts at least
 * *ttl_ms (the TTL the service reports) from the moment this call began.
 * IDMC_LOST or IDMC_ERROR otherwise (*ttl_ms untouched). */
int idmc_keepalive(idmc_lease *l, int64_t *ttl_ms, idmc_error *err);

/* Records in PREFIX/marks/NNNN that the holder may mint up to ms: fenced
 * by the generation, durable on the service when this returns 0. Never
 * lowers the recorded mark. 0, IDMC_LOST or IDMC_ERROR. */
int idmc_record_mark(idmc_lease *l, int64_t ms, idmc_error *err);
/* At a clean stop: lowers the recorded mark to ms, the latest time the
 * holder actually used (fenced). */
int idmc_shrink_mark(idmc_lease *l, int64_t ms, idmc_error *err);

/* How much of a lease's TTL a holder does not count on: a fifth of it, at
 * least IDMC_LEASE_MARGIN_MIN_MS. It covers the drift between the holder's
 * monotonic clock and the coordinator's over one TTL, the time a reply
 * takes to arrive after the coordinator refreshed the lease, and the
 * holder's lag in noticing. Pure. Thread-safe: yes. */
#define IDMC_LEASE_MARGIN_MIN_MS 500
int64_t idmc_lease_margin_ms(int64_t ttl_ms);
/* The holder's deadline for a lease last confirmed by a call that began at
 * confirmed_ms (the holder's monotonic clock, ms) with a TTL of ttl_ms:
 * confirmed_ms + ttl_ms - idmc_lease_margin_ms(ttl_ms). Past it the lease
 * may have expired on the coordinator, so the holder mints nothing as the
 * node. A negative ttl_ms counts as 0 (the deadline is then the margin
 * before confirmed_ms); the result saturates at INT64_MIN and INT64_MAX
 * instead of wrapping. Pure. Thread-safe: yes. */
int64_t idmc_lease_deadline(int64_t confirmed_ms, int64_t ttl_ms);

/* Gives the slot up and frees l: deletes the hold if it is still this
 * generation's, and ends the lease (etcd: revokes it; ZooKeeper: closes
 * the session). Best effort and bounded; after IDMC_LOST it only frees.
 * NULL is ignored. */
void idmc_release(idmc_lease *l);

/* One slot as `idmint lease list` shows it. */
typedef struct idmc_slot_info {
    uint64_t node;
    bool held;
    const char *generation; /* NULL when not held */
    const char *holder;     /* NULL when not held */
    int64_t mark_ms;        /* 0 when none recorded */
    int64_t ttl_ms_left;    /* the lease's remaining TTL; -1 when unknown or not held */
} idmc_slot_info;

/* Calls fn for every node that is held or has a mark, in node order.
 * Returns the number of slots reported, or -1 with err->msg set (IDMC_ERROR's
 * reasons). */
int idmc_list(idmc_coord *c, void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx,
              idmc_error *err);

#endif
