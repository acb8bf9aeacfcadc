/*
 * compat/idmint_segstore.h - the segment stores' names from before they
 * were a component of their own (idmc_store_*, the IDMC_* codes, messages
 * into (msg, cap)), mapped onto <idmint/segstore.h> for the one caller
 * that still uses them, idmintd's server/segments.c (and IDMC_TAG_MAX in
 * server/http/). Not installed, and only on idmintd's include path (the
 * top-level CMakeLists.txt). New code uses <idmint/segstore.h>; this file
 * goes once server/ does.
 */
#ifndef IDMINT_SEGSTORE_COMPAT_H
#define IDMINT_SEGSTORE_COMPAT_H

#include "idmint_coord.h"

#include <idmint/segstore.h>
#include <string.h>

/* IDMC_ERROR (2) and IDMC_USAGE (4) are idmint_coord.h's; the store's
 * codes kept those numbers, and these three. */
enum { IDMC_NOTAG = IDMSEG_ENOTAG, IDMC_EXISTS = IDMSEG_EEXISTS, IDMC_READONLY = IDMSEG_EREADONLY };

#define IDMC_TAG_MAX IDMSEG_TAG_MAX

/* The handle under its old name: an idmseg_store. */
struct idmc_store;
typedef struct idmc_store idmc_store;
typedef idmseg_tag_info idmc_tag_info;

static inline idmseg_store *idmc__seg(idmc_store *st)
{
    return (idmseg_store *)(void *)st;
}

/* The message into (msg, cap) as the old calls left it: cut to fit, and
 * empty after a success. */
static inline int idmc__seg_msg(int rc, const idmseg_error *e, char *msg, size_t cap)
{
    if (cap == 0)
        return rc;
    const char *src = rc != 0 ? e->msg : "";
    size_t n = strnlen(src, cap - 1);
    memcpy(msg, src, n);
    msg[n] = '\0';
    return rc;
}

static inline bool idmc_tag_valid(const char *tag, size_t len, char *msg, size_t cap)
{
    idmseg_error e;
    bool ok = idmseg_tag_valid(tag, len, &e);
    if (!ok)
        (void)idmc__seg_msg(e.code, &e, msg, cap);
    return ok;
}

static inline int idmc_store_open(const char *url, idmc_store **out, char *msg, size_t cap)
{
    idmseg_error e;
    idmseg_store *st = NULL;
    int rc = idmseg_store_open(url, &st, &e);
    *out = (idmc_store *)(void *)st;
    return idmc__seg_msg(rc, &e, msg, cap);
}

static inline const char *idmc_store_kind(const idmc_store *st)
{
    return idmseg_store_kind((const idmseg_store *)(const void *)st);
}

static inline void idmc_store_close(idmc_store *st)
{
    idmseg_store_close(idmc__seg(st));
}

static inline int idmc_store_lease(idmc_store *st, const char *tag, uint64_t count, uint64_t *first,
                                   uint64_t *stride, char *msg, size_t cap)
{
    idmseg_error e;
    int rc = idmseg_store_lease(idmc__seg(st), tag, count, first, stride, &e);
    return idmc__seg_msg(rc, &e, msg, cap);
}

static inline int idmc_store_show(idmc_store *st, const char *tag, idmc_tag_info *out, char *msg,
                                  size_t cap)
{
    idmseg_error e;
    int rc = idmseg_store_show(idmc__seg(st), tag, out, &e);
    return idmc__seg_msg(rc, &e, msg, cap);
}

#endif
