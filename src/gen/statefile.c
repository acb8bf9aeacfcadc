/*
 * statefile.c - host-wide generator state: a small file, mapped shared by
 * every process that opens it, holding a header and the monotonic states.
 *
 * Creation protocol (under the flock): allocate the file's blocks
 * (posix_fallocate; zero-filled by the kernel); write the header with the
 * magic last; fsync the file and its directory. A process that dies before
 * the magic is written leaves a file that the next opener treats as new.
 * A file whose magic is set is checked field by field, and refused with a
 * message saying what it holds when it was made for another generator.
 *
 * The file is not trusted: the OS side refuses symlinks, other owners and
 * files others may write, and keeps the descriptor open so that
 * idm__state_check can notice a truncation before the mapping faults.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Larger than any state file this version or a later one makes. */
#define STATE_MAX_BYTES 65536u

static void describe(const struct idm_state_header *h, char *dst, size_t cap)
{
    if (h->kind == IDM_STATE_KIND_GEN)
        snprintf(dst, cap, "UUIDv7/ULID/KSUID generator state");
    else if (h->kind == IDM_STATE_KIND_SNOWFLAKE)
        snprintf(dst, cap, "snowflake state for layout %.*s, node %" PRIu64, (int)sizeof h->layout,
                 h->layout, h->node);
    else
        snprintf(dst, cap, "state of unknown kind %" PRIu32, h->kind);
}

int idm__state_open(const char *path, const struct idm_state_header *want,
                    struct idm_state_map *map, idm_error *err)
{
    map->base = NULL;
    map->size = 0;
    map->fd = -1;
    int fd;
    uint64_t size;
    int rc = idm__os_state_open(path, &fd, &size, &map->dev, &map->ino, err);
    if (rc != IDM_OK)
        return rc;
    bool fresh = size == 0;
    /* A state file is a few hundred bytes: a larger one is not allocated
     * or mapped at all. */
    if (!fresh && (size < sizeof(struct idm_state_header) || size > STATE_MAX_BYTES))
        rc = idm__fail(err, IDM_ESTATE, 0, "%s is not an idmint state file (%" PRIu64 " bytes)",
                       path, size);
    if (fresh)
        size = want->size;
    /* Also for an existing file: one an older version sized sparsely still
     * gets its blocks here rather than at a first touch that faults. */
    if (rc == IDM_OK)
        rc = idm__os_state_allocate(fd, path, size, fresh, err);
    if (rc == IDM_OK)
        rc = idm__os_state_map(fd, (size_t)size, &map->base, err);
    if (rc != IDM_OK) {
        idm__os_state_unlock(fd);
        idm__os_state_close(fd);
        return rc;
    }
    map->size = (size_t)size;
    map->fd = fd;
    struct idm_state_header *h = map->base;
    if (fresh || memcmp(h->magic, "\0\0\0\0\0\0\0\0", 8) == 0) {
        /* New, or left half-made by a process that died creating it. */
        if (map->size != want->size) {
            rc = idm__fail(err, IDM_ESTATE, 0, "%s is not an idmint state file", path);
        } else {
            memset(map->base, 0, map->size);
            struct idm_state_header copy = *want;
            memset(copy.magic, 0, sizeof copy.magic);
            memcpy(h, &copy, sizeof copy);
            atomic_thread_fence(memory_order_release);
            memcpy(h->magic, IDM_STATE_MAGIC, sizeof h->magic);
            rc = idm__os_state_sync(fd, path, map->base, map->size, err);
        }
    } else if (memcmp(h->magic, IDM_STATE_MAGIC, sizeof h->magic) != 0) {
        rc = idm__fail(err, IDM_ESTATE, 0, "%s is not an idmint state file", path);
    } else if (h->version != want->version) {
        rc = idm__fail(err, IDM_ESTATE, 0,
                       "%s is an idmint state file of version %" PRIu32 ", this is version %" PRIu32
                       "; remove it or use another path",
                       path, h->version, want->version);
    } else if (h->kind == want->kind && h->kind == IDM_STATE_KIND_SNOWFLAKE &&
               strncmp(h->layout, want->layout, sizeof h->layout) == 0 && h->node != want->node) {
        rc = idm__fail(err, IDM_ESTATE, 0,
                       "%s holds snowflake state for node %" PRIu64 ", not node %" PRIu64, path,
                       h->node, want->node);
    } else if (h->kind != want->kind || h->node != want->node || h->size != want->size ||
               map->size != want->size || strncmp(h->layout, want->layout, sizeof h->layout) != 0) {
        char has[160], needs[160];
        describe(h, has, sizeof has);
        describe(want, needs, sizeof needs);
        rc =
            idm__fail(err, IDM_ESTATE, 0, "%s holds %s; this generator needs %s", path, has, needs);
    }
    idm__os_state_unlock(fd);
    if (rc != IDM_OK)
        idm__state_close(map);
    return rc;
}

void idm__state_close(struct idm_state_map *map)
{
    if (map->base == NULL)
        return;
    idm__os_state_unmap(map->base, map->size);
    idm__os_state_close(map->fd);
    map->base = NULL;
    map->size = 0;
    map->fd = -1;
}

int idm__state_check(const struct idm_state_map *map, idm_error *err)
{
    if (map->base == NULL)
        return IDM_OK;
    uint64_t size;
    int rc = idm__os_state_size(map->fd, map->dev, map->ino, &size, err);
    if (rc != IDM_OK)
        return rc;
    if (IDM_UNLIKELY(size < map->size))
        return idm__fail(err, IDM_ESTATE, 0,
                         "state file was truncated to %" PRIu64
                         " bytes under this process (%zu needed); refusing to mint rather than "
                         "fault: create the generator again",
                         size, map->size);
    return IDM_OK;
}

int idm__state_check_at(struct idm_state_map *map, int64_t now_ms, idm_error *err)
{
    if (map->base == NULL ||
        atomic_load_explicit(&map->checked_ms, memory_order_relaxed) == now_ms)
        return IDM_OK;
    int rc = idm__state_check(map, err);
    if (rc == IDM_OK)
        atomic_store_explicit(&map->checked_ms, now_ms, memory_order_relaxed);
    return rc;
}
