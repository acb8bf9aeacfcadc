/*
 * sfhost.c - one snowflake sequence per host directory, held to a shared
 * durable mark (include/idmint/sfhost.h).
 *
 * The composition of three parts that each keep their own rule: the
 * host-wide state (gen.h: a word mapped shared, advanced by CAS), the mark
 * (mark.h: the ceiling and its writes) and the generator. What is decided
 * here is only where a new opener resumes, and that a call reaching the
 * ceiling advances the mark itself (idm_mark_advance: the one write of a
 * crowd of threads or processes; a later mark another opener wrote is
 * adopted, not written again).
 *
 * Trust: the state file holds every ID minted when it exists and the
 * mark's tag names this boot (a crash of any opener leaves the mapped
 * pages in the page cache; only a reboot can lose its last writes). An
 * opener that cannot trust it resumes from the mark (above anything any
 * process minted) and, once its generator has moved the state above the
 * mark, writes the boot as the tag; until then every later opener
 * distrusts the state too, which is safe.
 */
#include "internal.h"

#include <idmint/mark.h>
#include <idmint/sfhost.h>
#include <idmint/uuid.h>

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PATH_CAP       4096
#define BOOT_TEXT_CAP  40
#define MAX_RESERVE_MS 3600000

struct idm_sfhost {
    struct idm_env env;
    idm_snowflake *g;
    idm_mark *mark;
    int64_t unit_ms;
    char state_path[PATH_CAP];
    char mark_path[PATH_CAP];
};

void idm_sfhost_config_init(idm_sfhost_config *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof *cfg);
    int rc = idm_sf_layout_preset(&cfg->layout, "twitter", 7, NULL);
    assert(rc == IDM_OK);
    (void)rc;
    cfg->reserve_ms = IDM_MARK_DEFAULT_RESERVE_MS;
    cfg->max_rewind_ms = 1000;
}

/* This boot as 16 bytes; all zero when unknown, which never matches a tag,
 * so the state is then never trusted. */
static void boot_tag(uint8_t tag[IDM_MARK_TAG_BYTES])
{
    memset(tag, 0, IDM_MARK_TAG_BYTES);
    char text[BOOT_TEXT_CAP];
    idm_uuid u;
    if (idm__os_boot_id(text, sizeof text) >= IDM_UUID_STRLEN &&
        idm_uuid_parse(text, IDM_UUID_STRLEN, &u, NULL) == IDM_OK)
        memcpy(tag, u.bytes, IDM_MARK_TAG_BYTES);
}

static bool tag_known(const uint8_t tag[IDM_MARK_TAG_BYTES])
{
    for (int i = 0; i < IDM_MARK_TAG_BYTES; i++)
        if (tag[i] != 0)
            return true;
    return false;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * UINT64_C(1099511628211);
    return h;
}

static int check_config(const idm_sfhost_config *cfg, idm_error *err)
{
    if (cfg == NULL || cfg->dir == NULL || cfg->dir[0] == '\0')
        return idm__fail(err, IDM_EINVAL, 0, "no directory for the host-wide snowflake state");
    if (cfg->reserve_ms < 1 || cfg->reserve_ms > MAX_RESERVE_MS)
        return idm__fail(err, IDM_EINVAL, 0,
                         "reserve_ms must lie in 1 .. %d, got %" PRId64, MAX_RESERVE_MS,
                         cfg->reserve_ms);
    if (cfg->max_rewind_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0, "max_rewind_ms must be 0 or more, got %" PRId64,
                         cfg->max_rewind_ms);
    if (cfg->floor_unix_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0, "floor_unix_ms must be 0 or more, got %" PRId64,
                         cfg->floor_unix_ms);
    uint64_t max_node = idm_sf_layout_max_node(&cfg->layout);
    if (cfg->node > max_node)
        return idm__fail(err, IDM_EINVAL, 0,
                         "node %" PRIu64 " is out of range for the layout: its node field holds "
                         "0 to %" PRIu64,
                         cfg->node, max_node);
    return IDM_OK;
}

int idm_sfhost_path(const idm_sfhost_config *cfg, const char *ext, char *dst, size_t cap,
                    idm_error *err)
{
    int rc = check_config(cfg, err);
    if (rc != IDM_OK)
        return rc;
    if (ext == NULL || dst == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no extension or no output buffer");
    /* HASH names the layout's canonical spec (no preset name), so
     * equivalent layouts share the files. */
    idm_sf_layout unnamed = cfg->layout;
    unnamed.name[0] = '\0';
    char spec[IDM_SF_SPEC_CAP];
    if (idm_sf_layout_format(&unnamed, spec, sizeof spec) != IDM_OK)
        return idm__fail(err, IDM_EINVAL, 0, "the snowflake layout cannot be formatted");
    size_t len = strlen(cfg->dir);
    while (len > 1 && cfg->dir[len - 1] == '/')
        len--;
    int n = snprintf(dst, cap, "%.*s/snowflake-%" PRIu64 "-%016" PRIx64 ".%s", (int)len, cfg->dir,
                     cfg->node, fnv1a(spec), ext);
    if (n < 0 || (size_t)n >= cap)
        return idm__fail(err, IDM_EINVAL, 0, "the directory %s is too long a path", cfg->dir);
    return IDM_OK;
}

/* The state is above the mark now: write this boot as the tag (a write even
 * when the mark stays, since the tag changes), so later openers trust it. */
static int record_boot(idm_sfhost *h, int64_t resume, idm_error *err)
{
    int64_t target = 0, durable = 0;
    if (!idm_mark_want(h->mark, resume, true, &target))
        return IDM_OK;
    int rc = idm_mark_write(h->mark, resume, &durable, err);
    if (rc == IDM_OK)
        idm_mark_commit(h->mark, durable);
    else
        idm_mark_abort(h->mark);
    return rc;
}

static int open_parts(idm_sfhost *h, const idm_sfhost_config *cfg, idm_error *err)
{
    bool made = false;
    int rc = idm__os_make_dir("snowflake state directory", cfg->dir, &made, err);
    if (rc != IDM_OK)
        return rc;

    idm_mark_config mc;
    idm_mark_config_init(&mc);
    mc.reserve_ms = cfg->reserve_ms;
    mc.clock = cfg->clock;
    mc.allocator = cfg->allocator;
    /* Every opener shares the file; none waits inside a minting call's
     * handler: idm_sfhost_try_next advances the mark itself. */
    mc.flags = IDM_MARK_SHARED | IDM_MARK_SPLIT;
    rc = idm_mark_open(&h->mark, h->mark_path, &mc, err);
    if (rc != IDM_OK) {
        h->mark = NULL;
        return rc;
    }
    /* Whether the state exists is judged after the mark is read, never
     * before: every opener makes the state before it writes the mark, so
     * a mark of this boot read first means its state exists now. Looked at
     * first, a state that another opener made and minted from between the
     * look and the read would be taken for lost, and this opener would
     * resume it at that opener's reserve, ahead of the clock by more than
     * the tolerance, for every opener (test_sfhost's racing opener). Nor
     * is a directory this opener made proof that no state is in it: the
     * other opener may have made its state there since. */
    bool state_exists = idm__os_file_exists(h->state_path);
    uint8_t boot[IDM_MARK_TAG_BYTES], tag[IDM_MARK_TAG_BYTES];
    boot_tag(boot);
    idm_mark_tag(h->mark, tag);
    int64_t resume = idm_mark_resume_ms(h->mark);
    bool trusted = state_exists && resume > 0 && tag_known(boot) &&
                   memcmp(tag, boot, sizeof tag) == 0;
    if (cfg->floor_unix_ms > resume)
        resume = cfg->floor_unix_ms;

    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen.clock = cfg->clock;
    sc.gen.allocator = cfg->allocator;
    sc.gen.state_path = h->state_path;
    sc.layout = cfg->layout;
    sc.node = cfg->node;
    sc.max_rewind_ms = cfg->max_rewind_ms;
    sc.resume_unix_ms = trusted ? 0 : resume;
    rc = idm_snowflake_new(&h->g, &sc, err);
    if (rc != IDM_OK) {
        h->g = NULL;
        return rc;
    }
    if (trusted)
        idm_mark_trust_state(h->mark);
    /* Every write of this opener's carries this boot: one without it would
     * make the next opener distrust a state that holds every ID. */
    idm_mark_set_tag(h->mark, boot);
    rc = idm_mark_attach_snowflake(h->mark, h->g, err);
    if (rc == IDM_OK && !trusted)
        rc = record_boot(h, resume, err);
    return rc;
}

int idm_sfhost_open(idm_sfhost **out, const idm_sfhost_config *cfg, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no output pointer");
    *out = NULL;
    int rc = check_config(cfg, err);
    if (rc != IDM_OK)
        return rc;
    struct idm_env env;
    rc = idm__env_init_clock(&env, cfg->clock, cfg->allocator, err);
    if (rc != IDM_OK)
        return rc;
    idm_sfhost *h = idm__env_alloc(&env, sizeof *h, _Alignof(idm_sfhost));
    if (h == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for the host-wide snowflake");
    memset(h, 0, sizeof *h);
    h->env = env;
    h->unit_ms = cfg->layout.unit_ms;
    rc = idm_sfhost_path(cfg, "state", h->state_path, sizeof h->state_path, err);
    if (rc == IDM_OK)
        rc = idm_sfhost_path(cfg, "idmark", h->mark_path, sizeof h->mark_path, err);
    if (rc == IDM_OK)
        rc = open_parts(h, cfg, err);
    if (rc != IDM_OK) {
        idm_sfhost_close(h);
        return rc;
    }
    *out = h;
    return IDM_OK;
}

int idm_sfhost_try_next(idm_sfhost *h, uint64_t *id, int64_t *retry_unix_ns, idm_error *err)
{
    if (retry_unix_ns != NULL)
        *retry_unix_ns = 0;
    if (h == NULL || id == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no host-wide snowflake or no output");
    /* Two rounds: a ceiling raised by this call (or adopted from another
     * opener's write) admits the next try; a second refusal means the mark
     * could not move past what the call needs. */
    for (int round = 0;; round++) {
        size_t done = 0;
        int rc = idm_snowflake_try_next_n(h->g, id, 1, &done, retry_unix_ns, err);
        if (IDM_LIKELY(rc != IDM_ECEILING) || round == 2)
            return rc;
        int64_t now_ms = 0;
        rc = idm__env_now_ms(&h->env, &now_ms, err);
        if (rc != IDM_OK)
            return rc;
        int64_t used_ms = idm_snowflake_high_water_ms(h->g);
        rc = idm_mark_advance(h->mark, (now_ms > used_ms ? now_ms : used_ms) + h->unit_ms, err);
        if (rc != IDM_OK)
            return rc;
    }
}

int idm_sfhost_next(idm_sfhost *h, uint64_t *id, idm_error *err)
{
    for (;;) {
        int64_t retry_ns = 0;
        int rc = idm_sfhost_try_next(h, id, &retry_ns, err);
        if (rc != IDM_EAGAIN)
            return rc;
        int64_t now_ns = 0;
        rc = idm__env_now_ns(&h->env, &now_ns, err);
        if (rc != IDM_OK)
            return rc;
        h->env.clock.sleep_ns(h->env.clock.ctx, retry_ns > now_ns ? retry_ns - now_ns : 1000);
    }
}

idm_snowflake *idm_sfhost_generator(idm_sfhost *h)
{
    return h == NULL ? NULL : h->g;
}

const char *idm_sfhost_state_path(const idm_sfhost *h)
{
    return h == NULL ? NULL : h->state_path;
}

const char *idm_sfhost_mark_path(const idm_sfhost *h)
{
    return h == NULL ? NULL : h->mark_path;
}

void idm_sfhost_close(idm_sfhost *h)
{
    if (h == NULL)
        return;
    /* The mark first: it reads the generator's high water. A shared mark is
     * never lowered, so closing it writes nothing. */
    (void)idm_mark_close(h->mark, NULL);
    idm_snowflake_free(h->g);
    struct idm_env env = h->env;
    idm__env_free(&env, h);
}
