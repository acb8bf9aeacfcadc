/*
 * idmint_coord.h - worker-ID leases: which snowflake node number a process
 * may mint as (coord/, a component of its own beside libidmint, which
 * stays OpenSSL-only). Design: docs/leases.md.
 *
 * This is the host-local registry, the embedded default: one slot file
 * per node number under a host-wide directory, held by an flock(2) that
 * the kernel drops when the holder dies, so that two processes on one host
 * never mint as the same node and a dead holder's slot frees by itself.
 * Each slot file also records the time high-water mark of its holders
 * (raised ahead of need while held), so that a new holder resumes above
 * whatever an earlier one may have minted, even with its clock behind.
 * Coordinators for several hosts (etcd, ZooKeeper) come later behind the
 * same slot interface.
 *
 * A slot file is IDMC_SLOT_BYTES long: "IDMSLOT1", the mark (int64, Unix
 * ms, host byte order), and at IDMC_HOLDER_AT a NUL-terminated line about
 * the holder ("pid=... host=... since=...").
 *
 * Thread-safety: a slot is used by one thread at a time (idmintd records
 * marks from libuv's thread pool, one write in flight). Not async-signal
 * safe. Not installed yet.
 */
#ifndef IDMINT_COORD_H
#define IDMINT_COORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMC_SLOT_BYTES 512
#define IDMC_HOLDER_AT 64
#define IDMC_MSG_CAP 512

/* Results: 0 or one of these. */
enum { IDMC_BUSY = 1, IDMC_ERROR = 2 };

typedef struct idmc_slot idmc_slot;

/* The registry directory to use when none is given: /run/idmint/nodes as
 * root, else $XDG_RUNTIME_DIR/idmint/nodes, else /tmp/idmint-UID/nodes.
 * Writes at most cap bytes; returns 0 or -1 (too long). */
int idmc_local_default_dir(char *dst, size_t cap);

/*
 * Claims a node number in [lo, hi] (exact: lo itself, lo == hi) from the
 * registry at dir, in the namespace ns (the layout's name: node 7 of one
 * layout is not node 7 of another), creating the directories (mode 0700,
 * owned by this user, no symbolic links) as needed. holder is a line
 * describing the caller (pid, host, addresses), kept in the slot for
 * `lease list`.
 *
 * Returns 0 with *out set; IDMC_BUSY when every slot in the range is held
 * (msg names the range, or for an exact claim the holder found); or
 * IDMC_ERROR with msg saying why (a directory that cannot be made or is
 * not ours, an I/O error). Does not block: a held slot is skipped.
 */
int idmc_local_claim(const char *dir, const char *ns, uint64_t lo, uint64_t hi, const char *holder,
                     idmc_slot **out, char *msg, size_t cap);

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
/* Gives the slot up (the lock goes; the mark stays for the next holder). */
void idmc_slot_release(idmc_slot *slot);

/* Reads the slot files of ns under dir: for each node calls fn with the
 * node, whether it is held now, the recorded mark and the holder line.
 * Returns the number of slots seen, or -1 with msg set. */
int idmc_local_list(const char *dir, const char *ns,
                    void (*fn)(void *ctx, uint64_t node, bool held, int64_t mark_ms,
                               const char *holder),
                    void *ctx, char *msg, size_t cap);

#endif
