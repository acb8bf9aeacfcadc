/*
 * mark/markfile.h - the mark file's bytes (src/mark/markfile.c) and its OS
 * side (src/os/linux/markfile.c); include/idmint/mark.h has the format.
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_MARK_MARKFILE_H
#define IDM_MARK_MARKFILE_H

#include "base.h"

#define IDM_MARK_MAGIC       "IDMMARK1"
#define IDM_MARK_SLOT_BYTES  64
#define IDM_MARK_SLOT_STRIDE 512 /* slot i at i * 512: two sectors */

/* One slot, decoded. */
struct idm_mark_slot {
    uint64_t seq;                    /* 1, 2, ...: the newest valid slot wins; 0 = none */
    int64_t mark_ms;                 /* 0 .. 2^48 - 1 */
    int64_t written_ms;              /* the clock when it was written (diagnostics) */
    uint32_t pid;                    /* the writer (diagnostics) */
    uint8_t tag[IDM_MARK_TAG_BYTES]; /* the owner's (idm_mark_set_tag) */
};

/* CRC-32C (Castagnoli, reflected, as iSCSI and ext4 use it). */
uint32_t idm__crc32c(const void *buf, size_t len);

/* Encodes s into the 64 bytes at out. */
void idm__mark_slot_encode(const struct idm_mark_slot *s, uint8_t out[IDM_MARK_SLOT_BYTES]);

/* Decodes the newest valid slot of a file's bytes into *s (zeroed when
 * the file is new): IDM_OK, or IDM_ESTATE (damaged) with the reason. */
int idm__mark_file_decode(const uint8_t *p, size_t len, struct idm_mark_slot *s, idm_error *err);

/* OS part. open: open-or-create (vetted as state files are), then flock:
 * exclusive (LOCK_NB, held until close: "in use" when another has it) or,
 * for a shared mark, held only while the file is read and, when new,
 * allocated; *fresh when the file was empty, *busy (may be NULL) when an
 * exclusive lock is held by another. lock/unlock: a shared mark's
 * lock around each write. read: up to IDM_MARK_FILE_BYTES from offset 0.
 * write: the slot at its offset, then fdatasync. */
int idm__os_mark_open(const char *path, bool exclusive, int *fd, bool *fresh, bool *busy,
                      idm_error *err);
/* Whether fd is still the file at path (not followed): false when the
 * path is gone or names another file. */
bool idm__os_mark_at(int fd, const char *path);
/* The directory entry of path made durable (a file renamed there). */
int idm__os_mark_sync_dir(const char *path, idm_error *err);
int idm__os_mark_lock(int fd, const char *path, idm_error *err);
void idm__os_mark_unlock(int fd);
int idm__os_mark_read(int fd, const char *path, uint8_t *buf, size_t *len, idm_error *err);
int idm__os_mark_write(int fd, const char *path, unsigned slot,
                       const uint8_t bytes[IDM_MARK_SLOT_BYTES], idm_error *err);
void idm__os_mark_close(int fd);

/* Test hook (tests/unit/test_mark.c): the nth write from now on fails with
 * errno e (0: none). Not thread-safe; tests only. */
void idm__mark_fail_write_at(long nth, int e);

#endif
