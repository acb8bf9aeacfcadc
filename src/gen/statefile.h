/*
 * gen/statefile.h - host-wide state files (src/gen/statefile.c, src/os/linux/statefile.c).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_GEN_STATEFILE_H
#define IDM_GEN_STATEFILE_H

#include "base.h"

/* ---- host-wide state files (src/gen/statefile.c, src/os/linux/) ---------- */

#define IDM_STATE_MAGIC "IDMSTATE"
#define IDM_STATE_VERSION 1u
enum { IDM_STATE_KIND_GEN = 1, IDM_STATE_KIND_SNOWFLAKE = 2 };

/* The first 256 bytes of every state file. What it holds is fixed at
 * creation; a process whose generator would need another kind, layout or
 * node is refused (IDM_ESTATE). */
struct idm_state_header {
    char magic[8];     /* IDM_STATE_MAGIC, written last at creation */
    uint32_t version;  /* IDM_STATE_VERSION */
    uint32_t kind;     /* IDM_STATE_KIND_* */
    uint64_t node;     /* snowflake: the node */
    uint64_t size;     /* total file size */
    char layout[IDM_SF_SPEC_CAP]; /* snowflake: canonical layout spec */
    uint8_t reserved[256 - 8 - 4 - 4 - 8 - 8 - IDM_SF_SPEC_CAP];
};

/* A mapped state file. */
struct idm_state_map {
    void *base;
    size_t size;
};

/* Opens or creates path, holding an flock only while it creates or checks
 * the header (the kernel drops it if the process dies), and maps it shared.
 * want describes the header expected; size the whole file. */
int idm__state_open(const char *path, const struct idm_state_header *want, struct idm_state_map *map,
                    idm_error *err);
void idm__state_close(struct idm_state_map *map);

/* OS part: open-or-create + exclusive flock; size check/extend; mmap. */
int idm__os_state_open(const char *path, int *fd, uint64_t *size, idm_error *err);
int idm__os_state_extend(int fd, uint64_t size, idm_error *err);
int idm__os_state_map(int fd, size_t size, void **base, idm_error *err);
void idm__os_state_unlock_close(int fd);
void idm__os_state_unmap(void *base, size_t size);

#endif
