/*
 * gen/statefile.h - host-wide state files (src/gen/statefile.c, src/os/linux/statefile.c).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_GEN_STATEFILE_H
#define IDM_GEN_STATEFILE_H

#include "base.h"

/* ---- host-wide state files (src/gen/statefile.c, src/os/linux/) ---------- */

#define IDM_STATE_MAGIC   "IDMSTATE"
#define IDM_STATE_VERSION 1u
enum { IDM_STATE_KIND_GEN = 1, IDM_STATE_KIND_SNOWFLAKE = 2 };

/* The first 256 bytes of every state file. What it holds is fixed at
 * creation; a process whose generator would need another kind, layout or
 * node is refused (IDM_ESTATE). */
struct idm_state_header {
    char magic[8];                /* IDM_STATE_MAGIC, written last at creation */
    uint32_t version;             /* IDM_STATE_VERSION */
    uint32_t kind;                /* IDM_STATE_KIND_* */
    uint64_t node;                /* snowflake: the node */
    uint64_t size;                /* total file size */
    char layout[IDM_SF_SPEC_CAP]; /* snowflake: canonical layout spec */
    uint8_t reserved[256 - 8 - 4 - 4 - 8 - 8 - IDM_SF_SPEC_CAP];
};

/* A mapped state file. fd stays open for the map's life so that
 * idm__state_check can fstat it; dev and ino name the file it was opened
 * on. A map whose base is NULL (zeroed, or whose open failed) holds
 * nothing, whatever fd says. */
struct idm_state_map {
    void *base;
    size_t size;
    int fd;
    uint64_t dev, ino;
    _Atomic int64_t checked_ms; /* idm__state_check_at's last check (0: none) */
};

/* Opens or creates path, holding an flock only while it creates or checks
 * the header (the kernel drops it if the process dies), and maps it shared.
 * want describes the header expected; size the whole file.
 *
 * The file is opened with O_NOFOLLOW and created with mode 0600. Refused
 * with IDM_ESTATE and a message naming the path and the problem: a
 * symbolic link, anything but a regular file, a file owned by another uid
 * than geteuid(), a file writable by its group or by others. Its blocks are
 * allocated (posix_fallocate) before it is mapped, so a full filesystem is
 * an error here ("no space left for state file"), never a SIGBUS at first
 * touch. A new file (or one left half-made) is initialised with the magic
 * written last, then fsynced with its directory. */
int idm__state_open(const char *path, const struct idm_state_header *want,
                    struct idm_state_map *map, idm_error *err);
/* Unmaps and closes; a map holding nothing (base NULL) is left alone. */
void idm__state_close(struct idm_state_map *map);

/* Checks that the file still has at least map->size bytes (one fstat): a
 * file truncated or shrunk under this process would raise SIGBUS at the
 * next access to the pages past its end. Returns IDM_OK (also for a map
 * holding nothing), or IDM_ESTATE ("state file was truncated to N bytes
 * under this process ...", or the descriptor no longer refers to the
 * file). Call it at the start of each minting call of a host-wide
 * generator, before the mapping is touched.
 *
 * Residual window: a truncation racing a call, between this fstat and the
 * accesses that follow, can still fault. Only the file's owner (or root)
 * can truncate it, since idm__state_open accepts only files of this uid
 * that neither group nor others may write. A file truncated and grown
 * back to its size passes: its words then read as zero, as in a new file.
 * Thread-safe: yes (no state is changed; fstat on a shared descriptor). */
IDM_NODISCARD int idm__state_check(const struct idm_state_map *map, idm_error *err);

/* The minting calls' check: idm__state_check at most once per clock
 * millisecond (now_ms, the reading the call mints with), not once per
 * call. An fstat is a syscall of 300-700 ns on a VM, most of a host-wide
 * snowflake's cost where calls are otherwise ~100 ns (pg_idmint measured
 * it at half of snowflake()'s samples). The residual window above grows
 * from one call to the rest of a millisecond: a truncation by the file's
 * owner (the only other writer possible) is noticed by the first call of
 * a later millisecond, and a call in the same millisecond may still fault,
 * as one racing the fstat always could. Thread-safe: yes (a relaxed word:
 * two threads may both check, which is harmless). */
IDM_NODISCARD int idm__state_check_at(struct idm_state_map *map, int64_t now_ms, idm_error *err);

/* OS part: open-or-create (refusing symlinks, non-regular, foreign or
 * group/world-writable files) + exclusive flock; block allocation; map;
 * fsync of a new file and its directory; the truncation check. */
int idm__os_state_open(const char *path, int *fd, uint64_t *size, uint64_t *dev, uint64_t *ino,
                       idm_error *err);
int idm__os_state_allocate(int fd, const char *path, uint64_t size, bool fresh, idm_error *err);
int idm__os_state_map(int fd, size_t size, void **base, idm_error *err);
int idm__os_state_sync(int fd, const char *path, void *base, size_t size, idm_error *err);
int idm__os_state_size(int fd, uint64_t dev, uint64_t ino, uint64_t *size, idm_error *err);
void idm__os_state_unlock(int fd);
void idm__os_state_close(int fd);
void idm__os_state_unmap(void *base, size_t size);

/* Shared with the mark file (src/mark): open-or-create at path with mode
 * 0600, refusing what idm__state_open refuses, named as `what` ("state
 * file", "mark file") in the messages; fsync that retries EINTR and counts
 * EINVAL (a file system that keeps nothing) as done; fsync of path's
 * directory. */
int idm__os_open_vetted(const char *what, const char *path, int *fd, idm_error *err);
/* Makes the directory path with mode 0700 when it is missing (*made true;
 * its entry then synced in the parent), or checks that what is there is a
 * directory. IDM_OK or IDM_ESTATE naming path. */
int idm__os_make_dir(const char *what, const char *path, bool *made, idm_error *err);
/* This boot of the machine (/proc/sys/kernel/random/boot_id, a UUID as
 * text) into buf: its length, or 0 when unknown. */
size_t idm__os_boot_id(char *buf, size_t cap);
/* Whether path names something (stat succeeds). */
bool idm__os_file_exists(const char *path);
int idm__os_fsync(int fd);
int idm__os_sync_dir(const char *what, const char *path, idm_error *err);

#endif
