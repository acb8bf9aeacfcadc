/*
 * pg_idmint.c - module set-up: GUCs, memory, the backend's generator,
 * errors, clock and waits.
 *
 * The module needs no shared memory of its own, so it works the same
 * loaded per backend (CREATE EXTENSION and a first call) or from
 * shared_preload_libraries: the server-wide snowflake state lives in a
 * file under the data directory (sfshared.c). With preloading, _PG_init
 * runs in the postmaster and only defines the GUCs; generators are made in
 * each backend on first use.
 */
#include "pg_idmint.h"

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#if PG_VERSION_NUM >= 140000
#include "utils/wait_event.h"
#else
#include "pgstat.h"
#endif

#include <limits.h>
#include <time.h>

PG_MODULE_MAGIC;

void _PG_init(void);

int pgi_node = 0;
char *pgi_layout_text = NULL;
int pgi_reserve_ms = 1000;
int pgi_max_rewind_ms = 1000;

/* --- memory --------------------------------------------------------------- */

/* The library asks for up to 64-byte alignment, more than palloc promises:
 * over-allocate, and keep the chunk's start just below the aligned block. */
static void *pgi_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (size > MaxAllocSize - align - sizeof(void *))
        return NULL;
    char *raw = MemoryContextAllocExtended(TopMemoryContext, size + align + sizeof(void *),
                                           MCXT_ALLOC_NO_OOM);
    if (raw == NULL)
        return NULL;
    uintptr_t p = ((uintptr_t)raw + sizeof(void *) + align - 1) & ~(uintptr_t)(align - 1);
    ((void **)p)[-1] = raw;
    return (void *)p;
}

static void pgi_free(void *ctx, void *ptr)
{
    (void)ctx;
    pfree(((void **)ptr)[-1]);
}

const idm_allocator pgi_allocator = {pgi_alloc, pgi_free, NULL};

/* --- errors --------------------------------------------------------------- */

static const char *reason(int rc, const idm_error *err)
{
    return err != NULL && err->msg[0] != '\0' ? err->msg : idm_strerror(rc);
}

void pgi_raise(int rc, const idm_error *err, const char *what)
{
    int code;
    switch (rc) {
    case IDM_EPARSE:
        code = ERRCODE_INVALID_TEXT_REPRESENTATION;
        break;
    case IDM_EINVAL:
        code = ERRCODE_INVALID_PARAMETER_VALUE;
        break;
    case IDM_ETIME_RANGE:
        code = ERRCODE_DATETIME_VALUE_OUT_OF_RANGE;
        break;
    case IDM_ENOMEM:
        code = ERRCODE_OUT_OF_MEMORY;
        break;
    case IDM_ECLOCK:
    case IDM_ENOENTROPY:
    case IDM_ESTATE:
        code = ERRCODE_SYSTEM_ERROR;
        break;
    case IDM_ECLOCK_REWIND:
        code = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
        break;
    default:
        code = ERRCODE_INTERNAL_ERROR;
        break;
    }
    ereport(ERROR, (errcode(code), errmsg("%s: %s", what, reason(rc, err))));
    pg_unreachable();
}

void pgi_raise_input(const char *kind, const char *input, size_t len, const idm_error *err)
{
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid %s: \"%.*s\"", kind,
                           (int)Min(len, 200), input),
                    errdetail("%s", reason(IDM_EPARSE, err))));
    pg_unreachable();
}

/* --- the backend's generator ---------------------------------------------- */

static idm_gen *backend_gen;

idm_gen *pgi_gen_new(const idm_clock *clock)
{
    idm_gen_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.allocator = pgi_allocator;
    cfg.flags = IDM_GEN_UNSHARED;
    if (clock != NULL)
        cfg.clock = *clock;
    idm_gen *g = NULL;
    idm_error err = {0};
    int rc = idm_gen_new(&g, &cfg, &err);
    if (rc != IDM_OK)
        pgi_raise(rc, &err, "could not create pg_idmint's generator");
    return g;
}

idm_gen *pgi_gen(void)
{
    if (unlikely(backend_gen == NULL))
        backend_gen = pgi_gen_new(NULL);
    return backend_gen;
}

/* --- the layout GUC -------------------------------------------------------- */

static idm_sf_layout current_layout;
static bool layout_stale = true;

static bool check_layout(char **newval, void **extra, GucSource source)
{
    (void)extra;
    (void)source;
    idm_sf_layout l;
    idm_error err = {0};
    if (*newval == NULL || idm_sf_layout_parse(&l, *newval, strlen(*newval), &err) != IDM_OK) {
        GUC_check_errdetail("%s", err.msg[0] != '\0' ? err.msg : "no layout given");
        return false;
    }
    return true;
}

static void assign_layout(const char *newval, void *extra)
{
    (void)newval;
    (void)extra;
    layout_stale = true;
}

const idm_sf_layout *pgi_layout(void)
{
    if (unlikely(layout_stale)) {
        idm_error err = {0};
        const char *t = pgi_layout_text != NULL ? pgi_layout_text : "twitter";
        int rc = idm_sf_layout_parse(&current_layout, t, strlen(t), &err);
        if (rc != IDM_OK) /* the check hook accepted it: cannot happen */
            pgi_raise(rc, &err, "invalid pg_idmint.layout");
        layout_stale = false;
    }
    return &current_layout;
}

void pgi_layout_arg(text *t, idm_sf_layout *out)
{
    idm_error err = {0};
    if (idm_sf_layout_parse(out, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &err) != IDM_OK)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid snowflake layout \"%.*s\"",
                               (int)Min(VARSIZE_ANY_EXHDR(t), 200), VARDATA_ANY(t)),
                        errdetail("%s", err.msg)));
}

/* --- time ------------------------------------------------------------------ */

#define UNIX_TO_PG_EPOCH_US                                                                        \
    ((int64)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC)

TimestampTz pgi_timestamptz_from_unix_us(int64 unix_us)
{
    return (TimestampTz)(unix_us - UNIX_TO_PG_EPOCH_US);
}

TimestampTz pgi_timestamptz_from_unix_ms(int64 unix_ms)
{
    return pgi_timestamptz_from_unix_us(unix_ms * 1000);
}

int64 pgi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pgi_wait_until(int64 unix_ns)
{
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        int64 left = unix_ns - pgi_now_ns();
        if (left <= 0)
            return;
        if (left < 1000000) {
            /* Under a millisecond (a unit's sequence used up): too short
             * for the latch's timeout, and over before a cancel matters. */
            pg_usleep((long)((left + 999) / 1000));
            continue;
        }
        long ms = (long)Min(left / 1000000, 1000);
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms,
                        PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
    }
}

/* --- GUCs -------------------------------------------------------------------- */

void _PG_init(void)
{
    DefineCustomIntVariable(
        "pg_idmint.node", "The node number snowflake() puts in every ID.",
        "Unique among all generators that mint snowflakes for the same keys: every backend "
        "of this server shares it. Its range depends on pg_idmint.layout.",
        &pgi_node, 0, 0, INT_MAX, PGC_SIGHUP, 0, NULL, NULL, NULL);
    DefineCustomStringVariable(
        "pg_idmint.layout", "The snowflake layout: a preset or a spec.",
        "Presets: twitter, discord, instagram, sonyflake, sonyflake2, baidu, safe53; or a spec "
        "such as time=41,node=10,seq=12,unit=1ms,epoch=1735689600000.",
        &pgi_layout_text, "twitter", PGC_SIGHUP, 0, check_layout, assign_layout, NULL);
    DefineCustomIntVariable(
        "pg_idmint.reserve", "Time reserved ahead of snowflake() and made durable before use.",
        "After a crash or power loss, snowflake() resumes above the last mark written, so a "
        "clock set back by up to this much still never repeats an ID.",
        &pgi_reserve_ms, 1000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
    DefineCustomIntVariable(
        "pg_idmint.max_rewind",
        "How far behind the latest snowflake the clock may read before snowflake() fails.",
        "Behind by less, snowflake() waits for the clock (query cancel ends the wait).",
        &pgi_max_rewind_ms, 1000, 0, 24 * 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL,
        NULL);
#if PG_VERSION_NUM >= 150000
    MarkGUCPrefixReserved("pg_idmint");
#else
    /* Before 15, the same check under its older name. */
    EmitWarningsOnPlaceholders("pg_idmint");
#endif
}
