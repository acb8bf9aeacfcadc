/*
 * mark.c - the durable time mark (include/idmint/mark.h).
 *
 * One mutex orders the mark's own fields (the durable mark, the limit, the
 * write in flight, the newest slot's sequence); the generators' ceilings
 * are their own atomic words, stored only by apply(). The rule
 *
 *   ceiling = durable, and for snowflakes min(durable, limit)
 *
 * is apply()'s, and every path that changes either side ends in it.
 *
 * A write in flight is a token: idm_mark_want hands it out (in_flight),
 * idm_mark_commit or idm_mark_abort returns it. The blocking path
 * (advance, the ceiling handlers' body) takes the token the same way and
 * waits on `done` while another thread holds it, so a crowd of threads at
 * the ceiling makes one write, not one each.
 *
 * The file I/O of a write (write_file) runs without the mutex: a split
 * owner runs it on a thread of its own while the owning thread keeps
 * minting under the old ceiling. It reads and writes only the fields the
 * token owns (seq) and the descriptor.
 */
#include "internal.h"
#include "mark/markfile.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#define MAX_ATTACH     8
#define MAX_RESERVE_MS 3600000
#define MARK_MAX_MS    ((INT64_C(1) << 48) - 1)

/* What a mark does to a generator of each kind: set its ceiling, install
 * its ceiling handler, read the latest time it used. */
struct gen_ops {
    void (*set_ceiling)(void *g, int64_t ms);
    void (*set_handler)(void *g, idm_ceiling_fn fn, void *ctx);
    int64_t (*used_ms)(void *g);
};

static void gen_ceiling(void *g, int64_t ms)
{
    idm_gen_set_ceiling(g, ms);
}
static void gen_handler(void *g, idm_ceiling_fn fn, void *ctx)
{
    idm_gen_set_ceiling_handler(g, fn, ctx);
}
static int64_t gen_used(void *g)
{
    return idm_gen_high_water_ms(g);
}
static void sf_ceiling(void *g, int64_t ms)
{
    idm_snowflake_set_ceiling(g, ms);
}
static void sf_handler(void *g, idm_ceiling_fn fn, void *ctx)
{
    idm_snowflake_set_ceiling_handler(g, fn, ctx);
}
static int64_t sf_used(void *g)
{
    return idm_snowflake_high_water_ms(g);
}
static void hlc_ceiling(void *g, int64_t ms)
{
    idm_hlc_set_ceiling(g, ms);
}
static void hlc_handler(void *g, idm_ceiling_fn fn, void *ctx)
{
    idm_hlc_set_ceiling_handler(g, fn, ctx);
}
static int64_t hlc_used(void *g)
{
    int64_t wall = 0;
    idm_hlc_decode(idm_hlc_last(g), &wall, NULL);
    return wall;
}

static const struct gen_ops gen_kind = {gen_ceiling, gen_handler, gen_used};
static const struct gen_ops sf_kind = {sf_ceiling, sf_handler, sf_used};
static const struct gen_ops hlc_kind = {hlc_ceiling, hlc_handler, hlc_used};

struct attached {
    const struct gen_ops *ops; /* NULL: a free entry (detached) */
    void *g;
    struct idm_mark *m; /* the handler's context is the entry */
};

struct idm_mark {
    pthread_mutex_t mu;
    pthread_cond_t done; /* a write in flight ended */
    struct idm_env env;  /* clock and allocator */
    int fd;
    uint32_t flags;
    int64_t reserve_ms;
    int64_t resume_ms;          /* found at open */
    _Atomic int64_t durable_ms; /* on disk */
    _Atomic int64_t limit_ms;   /* idm_mark_set_limit */
    _Atomic int64_t ceiling_ms; /* min(durable, limit), as applied */
    _Atomic uint64_t writes;
    bool in_flight;
    bool failed;                          /* the last write failed */
    bool trust_state;                     /* idm_mark_trust_state */
    unsigned relinked;                    /* idm_mark_relinked (owned by the write token) */
    int64_t detached_used;                /* the latest time used by generators detached */
    uint64_t seq;                         /* the newest slot's (owned by the write token) */
    uint8_t tag[IDM_MARK_TAG_BYTES];      /* written with each write */
    uint8_t file_tag[IDM_MARK_TAG_BYTES]; /* the newest slot's */
    size_t n_att;
    struct attached att[MAX_ATTACH];
    char path[]; /* NUL-terminated */
};

void idm_mark_config_init(idm_mark_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->reserve_ms = IDM_MARK_DEFAULT_RESERVE_MS;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Whether the limit bounds a generator of this kind: only snowflakes
 * carry a node number, which is what a lease or a slot promises. */
static bool bounded(const struct gen_ops *ops)
{
    return ops == &sf_kind;
}

/* The one place the ceiling is computed and handed to the generators. */
static void apply(idm_mark *m)
{
    int64_t d = atomic_load(&m->durable_ms), c = min64(d, atomic_load(&m->limit_ms));
    atomic_store(&m->ceiling_ms, c);
    for (size_t i = 0; i < m->n_att; i++)
        if (m->att[i].ops != NULL)
            m->att[i].ops->set_ceiling(m->att[i].g, bounded(m->att[i].ops) ? c : d);
}

int idm_mark_open(idm_mark **out, const char *path, const idm_mark_config *cfg, idm_error *err)
{
    if (out == NULL || path == NULL || path[0] == '\0')
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the mark, or no path");
    *out = NULL;
    idm_mark_config defaults;
    if (cfg == NULL) {
        idm_mark_config_init(&defaults);
        cfg = &defaults;
    }
    if (cfg->flags & ~(uint32_t)(IDM_MARK_SPLIT | IDM_MARK_SHARED))
        return idm__fail(err, IDM_EINVAL, 0, "unknown flags 0x%x", (unsigned)cfg->flags);
    if (cfg->reserve_ms < 1 || cfg->reserve_ms > MAX_RESERVE_MS)
        return idm__fail(err, IDM_EINVAL, 0, "reserve_ms must be 1 to %d (an hour), got %" PRId64,
                         MAX_RESERVE_MS, cfg->reserve_ms);
    struct idm_env env;
    int rc = idm__env_init_clock(&env, cfg->clock, cfg->allocator, err);
    if (rc != IDM_OK)
        return rc;
    size_t plen = strlen(path);
    idm_mark *m = idm__env_alloc(&env, sizeof *m + plen + 1, _Alignof(idm_mark));
    if (m == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for a mark");
    memset(m, 0, sizeof *m);
    memcpy(m->path, path, plen + 1);
    m->env = env;
    m->fd = -1;
    m->flags = cfg->flags;
    m->reserve_ms = cfg->reserve_ms;
    atomic_init(&m->limit_ms, INT64_MAX);
    bool shared = (cfg->flags & IDM_MARK_SHARED) != 0, fresh = false;
    rc = idm__os_mark_open(path, !shared, &m->fd, &fresh, NULL, err);
    uint8_t buf[IDM_MARK_FILE_BYTES];
    size_t len = 0;
    if (rc == IDM_OK)
        rc = idm__os_mark_read(m->fd, path, buf, &len, err);
    struct idm_mark_slot found = {0};
    idm_error why = {0};
    if (rc == IDM_OK && idm__mark_file_decode(buf, len, &found, &why) != IDM_OK)
        rc = idm__fail(err, IDM_ESTATE, 0,
                       "mark file %s is damaged: it %s; nothing can be known of the IDs minted "
                       "under it, so remove it only once the clock is past every ID minted",
                       path, why.msg);
    int64_t mark = found.mark_ms;
    m->seq = found.seq;
    memcpy(m->file_tag, found.tag, sizeof m->file_tag);
    if (shared && m->fd >= 0)
        idm__os_mark_unlock(m->fd);
    if (rc != IDM_OK) {
        idm__os_mark_close(m->fd);
        idm__env_free(&env, m);
        return rc;
    }
    m->resume_ms = mark;
    atomic_init(&m->durable_ms, mark);
    atomic_init(&m->ceiling_ms, mark);
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->done, NULL);
    *out = m;
    return IDM_OK;
}

int64_t idm_mark_resume_ms(const idm_mark *m)
{
    return m != NULL ? m->resume_ms : 0;
}

int64_t idm_mark_durable_ms(const idm_mark *m)
{
    return m != NULL ? atomic_load(&((idm_mark *)m)->durable_ms) : 0;
}

int64_t idm_mark_ceiling_ms(const idm_mark *m)
{
    return m != NULL ? atomic_load(&((idm_mark *)m)->ceiling_ms) : 0;
}

uint64_t idm_mark_writes(const idm_mark *m)
{
    return m != NULL ? atomic_load(&((idm_mark *)m)->writes) : 0;
}

int64_t idm_mark_used_ms(const idm_mark *m)
{
    if (m == NULL)
        return 0;
    int64_t used = max64(m->resume_ms, m->detached_used);
    for (size_t i = 0; i < m->n_att; i++)
        if (m->att[i].ops != NULL)
            used = max64(used, m->att[i].ops->used_ms(m->att[i].g));
    return used;
}

/* ---- the write ------------------------------------------------------------ */

/* Takes the write token (m->mu held); false when another holds it. */
static bool take_token(idm_mark *m)
{
    if (m->in_flight)
        return false;
    m->in_flight = true;
    return true;
}

static void give_back(idm_mark *m)
{
    m->in_flight = false;
    pthread_cond_broadcast(&m->done);
}

/* The mark to write for need: a reserve past the clock (now_ms) or past
 * need, whichever is later. */
static int64_t target_for(const idm_mark *m, int64_t now_ms, int64_t need_ms)
{
    return min64(max64(now_ms, need_ms) + m->reserve_ms, MARK_MAX_MS);
}

/* The clock, for a split owner's calls, which have no error to return: 0
 * when it cannot be read (the target is then a reserve past need, and the
 * slot's write time unknown). */
static int64_t now_or_zero(const idm_mark *m)
{
    int64_t now = 0;
    idm_error ignored;
    return idm__env_now_ms(&m->env, &now, &ignored) == IDM_OK ? now : 0;
}

bool idm_mark_want(idm_mark *m, int64_t need_unix_ms, bool at_ceiling, int64_t *target_ms)
{
    if (m == NULL)
        return false;
    int64_t durable = atomic_load(&m->durable_ms);
    /* Ahead of need: once need comes within half a reserve of the mark. */
    if (!at_ceiling && need_unix_ms < durable - m->reserve_ms / 2)
        return false;
    pthread_mutex_lock(&m->mu);
    bool go = take_token(m);
    pthread_mutex_unlock(&m->mu);
    if (go && target_ms != NULL)
        *target_ms = target_for(m, now_or_zero(m), need_unix_ms);
    return go;
}

/* An exclusive mark's file, removed or replaced under the program, made
 * again (or taken over) at its path, where the next run reads it, before
 * target_ms is written (m->relinked says what was done). The write token
 * is held: the descriptor is the token's. */
static int relink(idm_mark *m, int64_t target_ms, idm_error *err)
{
    m->relinked = 0;
    if ((m->flags & IDM_MARK_SHARED) != 0 || idm__os_mark_at(m->fd, m->path))
        return IDM_OK;
    int fd = -1;
    bool fresh = false, busy = false;
    int rc = idm__os_mark_open(m->path, true, &fd, &fresh, &busy, err);
    if (rc != IDM_OK) {
        m->relinked = busy ? IDM_MARK_TAKEN : 0;
        return rc;
    }
    struct idm_mark_slot found = {0};
    if (!fresh) {
        uint8_t buf[IDM_MARK_FILE_BYTES];
        size_t len = 0;
        idm_error ignored;
        /* A damaged file put there is taken over: the mark is ours. */
        if (idm__os_mark_read(fd, m->path, buf, &len, &ignored) != IDM_OK ||
            idm__mark_file_decode(buf, len, &found, &ignored) != IDM_OK)
            memset(&found, 0, sizeof found);
        if (found.mark_ms > target_ms) {
            idm__os_mark_close(fd);
            m->relinked = IDM_MARK_TAKEN;
            return idm__fail(err, IDM_ESTATE, 0,
                             "mark file %s was replaced by a file with a later mark (Unix ms "
                             "%" PRId64 "): another process writes it",
                             m->path, found.mark_ms);
        }
        rc = idm__os_mark_sync_dir(m->path, err);
        if (rc != IDM_OK) {
            idm__os_mark_close(fd);
            return rc;
        }
    }
    idm__os_mark_close(m->fd);
    m->fd = fd;
    m->seq = found.seq;
    m->relinked = fresh ? IDM_MARK_REMADE : IDM_MARK_REPLACED;
    return IDM_OK;
}

unsigned idm_mark_relinked(const idm_mark *m)
{
    return m != NULL ? m->relinked : 0;
}

/* Writes target_ms (written_ms: the clock when it was chosen, kept in the
 * slot for diagnostics). */
static int write_file(idm_mark *m, int64_t target_ms, int64_t written_ms, int64_t *durable_ms,
                      idm_error *err)
{
    if (target_ms < 0 || target_ms > MARK_MAX_MS)
        return idm__fail(err, IDM_EINVAL, 0, "a mark must be 0 to 2^48 - 1 ms, got %" PRId64,
                         target_ms);
    bool shared = (m->flags & IDM_MARK_SHARED) != 0;
    int rc = relink(m, target_ms, err);
    if (rc != IDM_OK)
        return rc;
    if (shared) {
        /* Another process may have written since: adopt a later mark, and
         * number this write after the newest slot. */
        rc = idm__os_mark_lock(m->fd, m->path, err);
        if (rc != IDM_OK)
            return rc;
        uint8_t buf[IDM_MARK_FILE_BYTES];
        size_t len = 0;
        struct idm_mark_slot found = {0};
        rc = idm__os_mark_read(m->fd, m->path, buf, &len, err);
        if (rc == IDM_OK && idm__mark_file_decode(buf, len, &found, err) != IDM_OK)
            rc = idm__fail(err, IDM_ESTATE, 0, "mark file %s was damaged under this process",
                           m->path);
        if (rc == IDM_OK) {
            m->seq = found.seq;
            memcpy(m->file_tag, found.tag, sizeof m->file_tag);
            bool same_tag = memcmp(found.tag, m->tag, sizeof m->tag) == 0;
            if (found.mark_ms >= target_ms && same_tag) {
                idm__os_mark_unlock(m->fd);
                *durable_ms = found.mark_ms;
                return IDM_OK;
            }
            target_ms = max64(target_ms, found.mark_ms);
        }
    }
    if (rc == IDM_OK) {
        struct idm_mark_slot s = {m->seq + 1, target_ms, written_ms, (uint32_t)getpid(), {0}};
        memcpy(s.tag, m->tag, sizeof s.tag);
        uint8_t bytes[IDM_MARK_SLOT_BYTES];
        idm__mark_slot_encode(&s, bytes);
        rc = idm__os_mark_write(m->fd, m->path, (unsigned)(s.seq % 2), bytes, err);
        if (rc == IDM_OK) {
            m->seq = s.seq;
            memcpy(m->file_tag, m->tag, sizeof m->file_tag);
            *durable_ms = target_ms;
        }
    }
    if (shared)
        idm__os_mark_unlock(m->fd);
    return rc;
}

int idm_mark_write(idm_mark *m, int64_t target_ms, int64_t *durable_ms, idm_error *err)
{
    if (m == NULL || durable_ms == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no mark or no place to store the result");
    return write_file(m, target_ms, now_or_zero(m), durable_ms, err);
}

/* m->mu held. */
static void commit_locked(idm_mark *m, int64_t durable_ms)
{
    if (durable_ms > atomic_load(&m->durable_ms))
        atomic_store(&m->durable_ms, durable_ms);
    atomic_fetch_add(&m->writes, 1);
    m->failed = false;
    apply(m);
    give_back(m);
}

void idm_mark_commit(idm_mark *m, int64_t durable_ms)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    commit_locked(m, durable_ms);
    pthread_mutex_unlock(&m->mu);
}

void idm_mark_abort(idm_mark *m)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    m->failed = true;
    give_back(m);
    pthread_mutex_unlock(&m->mu);
}

int idm_mark_check(idm_mark *m, idm_error *err)
{
    if (m == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no mark");
    pthread_mutex_lock(&m->mu);
    bool go = take_token(m);
    pthread_mutex_unlock(&m->mu);
    if (!go)
        return IDM_OK; /* the write in flight looks itself */
    int64_t durable = atomic_load(&m->durable_ms), got = 0;
    int rc = relink(m, durable, err);
    unsigned what = m->relinked;
    if (rc == IDM_OK && what != 0)
        rc = write_file(m, durable, now_or_zero(m), &got, err);
    m->relinked = what;
    pthread_mutex_lock(&m->mu);
    if (rc != IDM_OK && (what & IDM_MARK_TAKEN))
        m->failed = true; /* another's file: close leaves it alone */
    give_back(m);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static int fail_limit(const idm_mark *m, idm_error *err)
{
    return idm__fail(err, IDM_ECEILING, 0,
                     "mark %s: the limit Unix ms %" PRId64 " is reached (the owner's other "
                     "promise, such as a lease): nothing later may be minted until it is raised",
                     m->path, atomic_load(&((idm_mark *)m)->limit_ms));
}

/* advance for a generator the limit bounds (sf) or not. */
static int advance(idm_mark *m, int64_t need_unix_ms, bool sf, idm_error *err)
{
    if (m == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no mark");
    pthread_mutex_lock(&m->mu);
    for (;;) {
        if (atomic_load(sf ? &m->ceiling_ms : &m->durable_ms) >= need_unix_ms) {
            pthread_mutex_unlock(&m->mu);
            return IDM_OK; /* raised meanwhile */
        }
        if (sf && atomic_load(&m->limit_ms) < need_unix_ms) {
            pthread_mutex_unlock(&m->mu);
            return fail_limit(m, err);
        }
        if (take_token(m))
            break;
        pthread_cond_wait(&m->done, &m->mu);
    }
    pthread_mutex_unlock(&m->mu);
    int64_t now = 0, durable = 0;
    int rc = idm__env_now_ms(&m->env, &now, err);
    bool wrote = rc == IDM_OK;
    if (wrote)
        rc = write_file(m, target_for(m, now, need_unix_ms), now, &durable, err);
    pthread_mutex_lock(&m->mu);
    if (rc == IDM_OK) {
        commit_locked(m, durable);
    } else {
        m->failed = m->failed || wrote; /* a clock that failed wrote nothing */
        give_back(m);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int idm_mark_advance(idm_mark *m, int64_t need_unix_ms, idm_error *err)
{
    return advance(m, need_unix_ms, true, err);
}

/* The blocking mode's ceiling handler (gen.h's idm_ceiling_fn); its
 * context is the generator's entry. */
static int on_ceiling(void *ctx, int64_t ceiling_unix_ms, idm_error *err)
{
    const struct attached *a = ctx;
    int64_t need = ceiling_unix_ms < MARK_MAX_MS ? ceiling_unix_ms + 1 : ceiling_unix_ms;
    return advance(a->m, need, bounded(a->ops), err);
}

void idm_mark_set_limit(idm_mark *m, int64_t limit_unix_ms)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    atomic_store(&m->limit_ms, limit_unix_ms);
    apply(m);
    pthread_mutex_unlock(&m->mu);
}

/* ---- attaching ------------------------------------------------------------ */

static int attach(idm_mark *m, const struct gen_ops *ops, void *g, idm_error *err)
{
    if (m == NULL || g == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no mark or no generator");
    size_t i = 0;
    while (i < m->n_att && m->att[i].ops != NULL)
        i++;
    if (i == MAX_ATTACH)
        return idm__fail(err, IDM_EINVAL, 0, "a mark takes up to %d generators", MAX_ATTACH);
    pthread_mutex_lock(&m->mu);
    m->att[i] = (struct attached){ops, g, m};
    if (i == m->n_att)
        m->n_att++;
    if ((m->flags & IDM_MARK_SPLIT) == 0)
        ops->set_handler(g, on_ceiling, &m->att[i]);
    apply(m);
    pthread_mutex_unlock(&m->mu);
    return IDM_OK;
}

int idm_mark_detach(idm_mark *m, const void *g, idm_error *err)
{
    if (m == NULL || g == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no mark or no generator");
    for (size_t i = 0; i < m->n_att; i++) {
        struct attached *a = &m->att[i];
        if (a->ops == NULL || a->g != g)
            continue;
        pthread_mutex_lock(&m->mu);
        m->detached_used = max64(m->detached_used, a->ops->used_ms(a->g));
        a->ops->set_handler(a->g, NULL, NULL);
        a->ops = NULL;
        a->g = NULL;
        pthread_mutex_unlock(&m->mu);
        return IDM_OK;
    }
    return idm__fail(err, IDM_EINVAL, 0, "that generator is not attached to mark %s", m->path);
}

int idm_mark_attach_gen(idm_mark *m, idm_gen *g, idm_error *err)
{
    if (m != NULL && g != NULL && m->resume_ms > 0) {
        int rc = idm_gen_resume_after(g, m->resume_ms, err);
        if (rc != IDM_OK)
            return rc;
    }
    return attach(m, &gen_kind, g, err);
}

void idm_mark_set_tag(idm_mark *m, const uint8_t tag[IDM_MARK_TAG_BYTES])
{
    if (m != NULL && tag != NULL)
        memcpy(m->tag, tag, sizeof m->tag);
}

void idm_mark_tag(const idm_mark *m, uint8_t tag[IDM_MARK_TAG_BYTES])
{
    if (m != NULL && tag != NULL)
        memcpy(tag, m->file_tag, sizeof m->file_tag);
}

void idm_mark_trust_state(idm_mark *m)
{
    if (m != NULL)
        m->trust_state = true;
}

int idm_mark_attach_snowflake(idm_mark *m, idm_snowflake *g, idm_error *err)
{
    if (m != NULL && g != NULL && !m->trust_state && idm_snowflake_high_water_ms(g) < m->resume_ms)
        return idm__fail(err, IDM_EINVAL, 0,
                         "the snowflake generator was not made to resume after mark %s (Unix ms "
                         "%" PRId64 "): set resume_unix_ms to idm_mark_resume_ms",
                         m->path, m->resume_ms);
    return attach(m, &sf_kind, g, err);
}

int idm_mark_attach_hlc(idm_mark *m, idm_hlc *h, idm_error *err)
{
    if (m != NULL && h != NULL && m->resume_ms > 0) {
        int rc = idm_hlc_resume_after(h, m->resume_ms, err);
        if (rc != IDM_OK)
            return rc;
    }
    return attach(m, &hlc_kind, h, err);
}

/* ---- closing -------------------------------------------------------------- */

int idm_mark_close(idm_mark *m, idm_error *err)
{
    if (m == NULL)
        return IDM_OK;
    int rc = IDM_OK;
    pthread_mutex_lock(&m->mu);
    while (m->in_flight)
        pthread_cond_wait(&m->done, &m->mu);
    bool failed = m->failed;
    pthread_mutex_unlock(&m->mu);
    if (failed) {
        rc = idm__fail(err, IDM_ESTATE, 0,
                       "the last write of mark file %s failed; it is left as it is (safe: the "
                       "next run resumes above what it holds)",
                       m->path);
    } else if ((m->flags & IDM_MARK_SHARED) == 0) {
        /* Down to what was used, never below it nor below the file's mark
         * at open: the next run resumes right above the last ID. */
        int64_t used = idm_mark_used_ms(m), durable = atomic_load(&m->durable_ms), got = 0;
        if (used < durable && (rc = write_file(m, used, used, &got, err)) == IDM_OK) {
            /* Nothing past the file now, should a generator mint on. */
            atomic_store(&m->durable_ms, got);
            apply(m);
        }
    }
    for (size_t i = 0; i < m->n_att; i++)
        if (m->att[i].ops != NULL)
            m->att[i].ops->set_handler(m->att[i].g, NULL, NULL);
    idm__os_mark_close(m->fd);
    pthread_cond_destroy(&m->done);
    pthread_mutex_destroy(&m->mu);
    struct idm_env env = m->env;
    idm__env_free(&env, m);
    return rc;
}
