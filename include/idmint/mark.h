/*
 * idmint/mark.h - the durable time mark: crash-safe IDs for any program.
 *
 * A time-ordered ID is safe to hand out only if no later run of the
 * program can mint it again. After a crash, a power loss or a clock set
 * back, the generators' in-memory states are gone, and a clock that reads
 * earlier than before would repeat (UUIDv7, ULID, KSUID) or reorder
 * (snowflakes, HLC stamps) what was minted. An idm_mark closes that hole:
 *
 *   - it owns a mark file holding a time in Unix ms, written with fdatasync
 *     before any ID at or below it is handed out;
 *   - every generator attached to it has a ceiling (no ID later than what
 *     is durable), and resumes above the mark found at open;
 *   - reaching the ceiling writes the next reserve (reserve_ms past the
 *     clock), once per reserve, not once per ID.
 *
 * So every ID handed out lies at or below a mark that was on disk when it
 * was minted, and the next run starts above it: a process killed at any
 * instant, then started again with the clock 5 s behind, still mints only
 * above everything minted before.
 *
 * The ceiling of the attached generators is the durable mark, and for
 * snowflakes min(durable mark, limit): the limit is the other promise an
 * owner may have to keep for a node number (a lease's deadline, a node
 * slot's mark; idm_mark_set_limit). That rule lives here and nowhere
 * else.
 *
 * Two ways to use it:
 *
 *   blocking (the default): a minting call that reaches the ceiling
 *     persists the next reserve itself (through the ceiling handler the
 *     mark installs on each generator: gen.h's idm_ceiling_fn) and goes on.
 *     Calls of other threads that reach it meanwhile wait for that one
 *     write. For ordinary programs and the idmint CLI (`--mark FILE`).
 *
 *   split (IDM_MARK_SPLIT): for owners that must never wait in a minting
 *     call (an event loop, a database backend). No handler is installed: a
 *     call at the ceiling fails with IDM_ECEILING, and the owner asks
 *     idm_mark_want whether a write should start, runs idm_mark_write on a
 *     thread of its own, and passes the result to idm_mark_commit (or
 *     idm_mark_abort) on the owning thread, which raises the ceilings.
 *
 * The file (IDM_MARK_FILE_BYTES, made with mode 0600 and allocated at once,
 * so a rewrite in place needs no new block on a full disk) holds two
 * 64-byte slots, at offsets 0 and 512: "IDMMARK1", a sequence number, the
 * mark, the time of the write, the writer's pid, the owner's 16-byte tag
 * (idm_mark_set_tag), and a CRC-32C of the rest.
 * A write goes to the older slot, so a torn write leaves the newer one
 * valid. As host-wide state files (gen.h), a symbolic link, anything but a
 * regular file, a file of another uid and one its group or others may write
 * are refused (IDM_ESTATE, naming the problem and the path); so is a file
 * with bytes but no valid slot (damaged: nothing is assumed about what was
 * minted).
 *
 * Writers: by default the mark is exclusive - open takes a lock on the file
 * (flock) for the object's life, a second opener gets IDM_ESTATE ("in use"),
 * and idm_mark_close lowers the file to the time last used, so a program
 * run again and again never drifts ahead of the clock. IDM_MARK_SHARED lets
 * several processes share one file (each of their generators must still be
 * distinct: a snowflake node per process): every write takes the lock,
 * reads the file and writes only a later mark (adopting a later one another
 * process wrote), and the mark is never lowered.
 */
#ifndef IDMINT_MARK_H
#define IDMINT_MARK_H

#include <stdbool.h>

#include "common.h"
#include "error.h"
#include "gen.h"
#include "hlc.h"
#include "snowflake.h"

IDM_BEGIN_DECLS

#define IDM_MARK_FILE_BYTES         1024
#define IDM_MARK_DEFAULT_RESERVE_MS 1000
#define IDM_MARK_TAG_BYTES          16

/* Flags of idm_mark_config. */
enum {
    IDM_MARK_SPLIT = 1u << 0, /* install no ceiling handlers: the owner writes (see above) */
    IDM_MARK_SHARED = 1u << 1 /* several processes share the file (see above) */
};

/* Start from idm_mark_config_init. reserve_ms (1 .. 3,600,000): how far
 * past the clock each write reaches, the time a run may mint between two
 * writes. clock, allocator: zeroed = the OS's. */
typedef struct idm_mark_config {
    int64_t reserve_ms;
    idm_clock clock;
    idm_allocator allocator;
    uint32_t flags;
} idm_mark_config;

typedef struct idm_mark idm_mark;

/* Zeroes cfg and sets reserve_ms to IDM_MARK_DEFAULT_RESERVE_MS. */
IDM_API void idm_mark_config_init(idm_mark_config *cfg);

/* Opens (or creates, with its directory entry synced) the mark file at
 * path and reads the mark in it (idm_mark_resume_ms). cfg may be NULL.
 * Nothing is written until a generator needs it. Returns IDM_OK, IDM_EINVAL
 * (a bad setting), IDM_ENOMEM, IDM_ESTATE (the file cannot be opened,
 * created or locked, is refused as above, is damaged, or is in use by
 * another exclusive opener). Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_mark_open(idm_mark **out, const char *path,
                                        const idm_mark_config *cfg, idm_error *err);

/* Lowers the mark to the time last used by the attached generators when
 * the mark is exclusive and that is below what is durable (so the next run
 * needs no wait), then closes the file and frees m. Call it once no
 * attached generator mints any more; detach nothing before. IDM_OK, or
 * IDM_ESTATE when the last write failed (the mark is then left as it is,
 * which is still safe: only later IDs are minted next time); m is freed
 * either way. NULL is a no-op. Thread-safe: no. */
IDM_API int idm_mark_close(idm_mark *m, idm_error *err);

/* The mark found in the file at open: every ID minted through m is later
 * (0: the file was new). Thread-safe: yes. */
IDM_API int64_t idm_mark_resume_ms(const idm_mark *m);

/* The mark last made durable (starts as idm_mark_resume_ms), and the
 * snowflakes' ceiling in force, min(durable, limit). Thread-safe: yes. */
IDM_API int64_t idm_mark_durable_ms(const idm_mark *m);
IDM_API int64_t idm_mark_ceiling_ms(const idm_mark *m);

/* The writes made since open. Thread-safe: yes. */
IDM_API uint64_t idm_mark_writes(const idm_mark *m);

/* Attaches a generator: it resumes above idm_mark_resume_ms, gets the
 * ceiling, and (unless IDM_MARK_SPLIT) the ceiling handler that writes the
 * next reserve. The generator must outlive m's use of it (free it after
 * idm_mark_close). A snowflake generator cannot resume after its creation:
 * make it with resume_unix_ms = idm_mark_resume_ms(m), or this fails with
 * IDM_EINVAL. Up to 8 generators per mark (IDM_EINVAL beyond).
 * Thread-safe: no (attach before the generators are shared). */
IDM_API IDM_NODISCARD int idm_mark_attach_gen(idm_mark *m, idm_gen *g, idm_error *err);
IDM_API IDM_NODISCARD int idm_mark_attach_snowflake(idm_mark *m, idm_snowflake *g, idm_error *err);
IDM_API IDM_NODISCARD int idm_mark_attach_hlc(idm_mark *m, idm_hlc *h, idm_error *err);

/* The owner's tag: 16 bytes written with every later write (set_tag), and
 * the tag of the newest slot read (at open, or by a shared write). An
 * owner records there what the mark cannot know, such as the boot of the
 * machine its host-wide state was last resumed in (pg_idmint). A shared
 * mark's write with another tag than the file's is made even when the
 * file's mark is already high enough. Thread-safe: no (set_tag before the
 * mark is shared; tag while no write runs). */
IDM_API void idm_mark_set_tag(idm_mark *m, const uint8_t tag[IDM_MARK_TAG_BYTES]);
IDM_API void idm_mark_tag(const idm_mark *m, uint8_t tag[IDM_MARK_TAG_BYTES]);

/* For an owner whose snowflake generators keep a host-wide state known to
 * hold every ID minted under this mark (pg_idmint knows it when the state
 * file survived and the tag names this boot of the machine): attaching
 * them then skips the check that they were made to resume above the mark,
 * so they continue from the state rather than from the later mark.
 * Thread-safe: no (before attaching). */
IDM_API void idm_mark_trust_state(idm_mark *m);

/* Sets the limit: the other bound on the snowflake generators' ceiling
 * (INT64_MAX, the default: none). It bounds snowflakes only: a lease or a
 * node slot's mark is a promise about a node number, which UUIDv7, ULID,
 * KSUID and HLC stamps do not carry, so their ceiling stays the durable
 * mark. Lowering takes effect for calls that start afterwards; a limit
 * reached makes a snowflake's handler fail with IDM_ECEILING (only the
 * owner raising the limit helps). Thread-safe: yes. */
IDM_API void idm_mark_set_limit(idm_mark *m, int64_t limit_unix_ms);

/* Detaches a generator attached before (an owner that replaces its
 * snowflake generator when it takes another node): its ceiling handler is
 * removed, and the latest time it used still counts in idm_mark_used_ms.
 * IDM_EINVAL when g is not attached. Thread-safe: no (as attach). */
IDM_API IDM_NODISCARD int idm_mark_detach(idm_mark *m, const void *g, idm_error *err);

/* What the last write (or idm_mark_check) found of the file at the mark's
 * path, for an exclusive mark: the file removed or replaced under the
 * running program is where the next run would look, so the write makes
 * it again (IDM_MARK_REMADE: it was gone; IDM_MARK_REPLACED: another file
 * was put there by rename, and is taken over) with the mark being written.
 * A file put there with a later mark than the one written, or locked by
 * another process, is another writer's: it is left alone and the write
 * fails with IDM_ESTATE and IDM_MARK_TAKEN. 0: the file was where it was.
 * Thread-safe: read it where the write ran, before the next one. */
enum { IDM_MARK_REMADE = 1u << 0, IDM_MARK_REPLACED = 1u << 1, IDM_MARK_TAKEN = 1u << 2 };
IDM_API unsigned idm_mark_relinked(const idm_mark *m);

/* Looks whether the file at the mark's path is still the mark's own, and
 * makes it again (or takes over a replacement) with the durable mark when
 * not, as a write does (idm_mark_relinked says what was done). For an
 * owner that wants a removed file noticed while no write is due (idmintd
 * looks every second). Does nothing while a write is in flight. IDM_OK or
 * IDM_ESTATE. Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_mark_check(idm_mark *m, idm_error *err);

/* The latest time any attached generator has used (Unix ms, at least
 * idm_mark_resume_ms). Thread-safe: yes. */
IDM_API int64_t idm_mark_used_ms(const idm_mark *m);

/* Split mode. idm_mark_want: need_unix_ms is the time a call needs (a
 * refused call's; or, to write ahead, the time just used). Returns true,
 * with *target_ms the mark to write, when no write is in flight and the
 * durable mark is reached (at_ceiling) or within half a reserve of need;
 * the write is then in flight until idm_mark_commit or idm_mark_abort.
 * Thread-safe: yes. */
IDM_API bool idm_mark_want(idm_mark *m, int64_t need_unix_ms, bool at_ceiling, int64_t *target_ms);

/* Writes target_ms to the file and syncs it; on any thread (it touches
 * only the file and the write's own fields, never the ceilings). With
 * IDM_MARK_SHARED, a later mark found in the file is kept and returned.
 * *durable_ms: the mark now on disk. IDM_OK or IDM_ESTATE (the errno's
 * text and the path in err). Thread-safe: one write at a time (the one
 * idm_mark_want started). */
IDM_API IDM_NODISCARD int idm_mark_write(idm_mark *m, int64_t target_ms, int64_t *durable_ms,
                                         idm_error *err);

/* Ends the write in flight: commit raises the durable mark to durable_ms
 * and the attached generators' ceilings with it; abort leaves both (the
 * next idm_mark_want may start another) and counts as a failed write, so
 * that idm_mark_close leaves the file as it is (until a later commit): an
 * owner that knows the file is no longer its own calls it for that too,
 * with no write in flight. Thread-safe: yes. */
IDM_API void idm_mark_commit(idm_mark *m, int64_t durable_ms);
IDM_API void idm_mark_abort(idm_mark *m);

/* Blocking mode's step, callable in split mode too: makes a mark above
 * need_unix_ms durable now (want + write + commit; a write another thread
 * has in flight is waited for). IDM_OK, IDM_ECEILING (the limit is
 * reached), IDM_ESTATE. Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_mark_advance(idm_mark *m, int64_t need_unix_ms, idm_error *err);

/* The file's contents, decoded without opening anything (for inspection
 * tools and fuzzing): the newest valid slot's mark, sequence number and
 * write time. A zero-length or all-zero buffer is a new file (*mark_ms 0,
 * IDM_OK); bytes with no valid slot are IDM_ESTATE (damaged), with the
 * reason in err. Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_mark_decode(const void *buf, size_t len, int64_t *mark_ms,
                                          uint64_t *seq, int64_t *written_ms, idm_error *err);

IDM_END_DECLS

#endif
