/*
 * addon.c - the Node-API addon of the idmint package (bindings/node): thin
 * wrappers over libidmint, in Node's idiom (strings, Uint8Array, bigint,
 * TypeError/RangeError). No ID logic lives here.
 *
 * Threads: the process has one idm_gen, shared by every isolate that loads
 * the addon (the main thread and each worker_threads Worker): it is made
 * without IDM_GEN_UNSHARED, so it is thread-safe and every time-ordered ID
 * of the process is strictly greater than the one before, whichever thread
 * minted it. Each isolate counts as a user (napi instance data); the last
 * one to go frees the generator, keeping its high-water mark so that one
 * made later in the same process resumes above it (the addon is linked with
 * -z nodelete, so that Node, which unloads an addon when the last worker
 * that loaded it exits, cannot drop that mark with the library's statics).
 * A Snowflake belongs to
 * the isolate that made it (objects cannot cross isolates).
 *
 * Snowflake options: node N or 'auto' (a free node leased from this
 * host's registry, coord/local.c, as idmintd and `idmint gen --node auto`
 * do; a node N is registered there too, as idmintd's --node N, and the
 * slot's mark kept by the slots' rule, idmc_slot_keep), mark PATH (the durable mark, mark.h, in blocking mode as `idmint
 * gen --mark FILE`).
 */
#include "idmint_coord.h"
#include "inspect_render.h"

#include <idmint/idmint.h>
#include <node_api.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INPUT_CAP     256  /* inputs longer than this are copied to the heap */

/* ---- the process's generator ---------------------------------------------- */

static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;
static idm_gen *shared_gen;    /* NULL while no isolate uses the addon */
static size_t gen_users;       /* isolates holding shared_gen */
static int64_t gen_high_water; /* of a generator freed before (0: none) */

static int gen_acquire(idm_gen **out, idm_error *err)
{
    int rc = IDM_OK;
    pthread_mutex_lock(&gen_lock);
    if (shared_gen == NULL) {
        rc = idm_gen_new(&shared_gen, NULL, err);
        if (rc == IDM_OK && gen_high_water > 0) {
            rc = idm_gen_resume_after(shared_gen, gen_high_water, err);
            if (rc != IDM_OK) {
                idm_gen_free(shared_gen);
                shared_gen = NULL;
            }
        }
    }
    if (rc == IDM_OK) {
        gen_users++;
        *out = shared_gen;
    }
    pthread_mutex_unlock(&gen_lock);
    return rc;
}

static void gen_release(void)
{
    pthread_mutex_lock(&gen_lock);
    if (gen_users > 0 && --gen_users == 0) {
        int64_t hw = idm_gen_high_water_ms(shared_gen);
        if (hw > gen_high_water) {
            gen_high_water = hw;
        }
        idm_gen_free(shared_gen);
        shared_gen = NULL;
    }
    pthread_mutex_unlock(&gen_lock);
}

/* One per isolate (napi instance data). */
typedef struct addon {
    idm_gen *gen;
} addon;

static void addon_finalize(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    gen_release();
    free(data);
}

static const idm_format *fmt_typeid;
static const idm_format *fmt_token;
static const idm_format *fmt_traceparent;

/* ---- errors ---------------------------------------------------------------- */

static const char *code_name(int rc)
{
    static const char *const names[] = {
        "IDM_OK",         "IDM_EINVAL",   "IDM_EPARSE",        "IDM_ENOMEM",
        "IDM_ENOENTROPY", "IDM_ECLOCK",   "IDM_ECLOCK_REWIND", "IDM_ETIME_RANGE",
        "IDM_ENOSPC",     "IDM_EFORKED",  "IDM_EUNSUPPORTED",  "IDM_ESTATE",
        "IDM_EAGAIN",     "IDM_ECEILING", "IDM_EOFFSET",       "IDM_EFORGED",
        "IDM_EEXPIRED"};
    if (rc >= 0 && (size_t)rc < sizeof names / sizeof names[0]) {
        return names[rc];
    }
    return "IDM_EUNKNOWN";
}

enum { ERR_PLAIN, ERR_TYPE, ERR_RANGE };

/* Throws an error of class cls with message msg and code code; returns
 * NULL for the caller to return. */
static napi_value throw_as(napi_env env, int cls, const char *code, const char *msg)
{
    napi_value c, m, e;
    napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &c);
    napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m);
    if (cls == ERR_TYPE) {
        napi_create_type_error(env, c, m, &e);
    } else if (cls == ERR_RANGE) {
        napi_create_range_error(env, c, m, &e);
    } else {
        napi_create_error(env, c, m, &e);
    }
    napi_throw(env, e);
    return NULL;
}

/* A usage error of the JavaScript caller: TypeError, code ERR_INVALID_ARG_TYPE
 * or ERR_INVALID_ARG_VALUE (the codes Node's own functions use). */
static napi_value throw_arg(napi_env env, bool type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static napi_value throw_arg(napi_env env, bool type, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return throw_as(env, ERR_TYPE, type ? "ERR_INVALID_ARG_TYPE" : "ERR_INVALID_ARG_VALUE", msg);
}

/* A library failure: the reason from err (idm_strerror's text when err has
 * none), suffix appended. Text that is not an ID or a value the library
 * refuses is a TypeError (as Node and npm uuid's parse treat bad input);
 * a value outside a format's range a RangeError; anything else an Error.
 * The error carries code (IDM_E*), and offset for parse errors. */
static napi_value throw_idm(napi_env env, int rc, const idm_error *err, const char *suffix)
{
    char msg[IDM_ERROR_MSG_CAP + 256];
    const char *reason =
        err != NULL && err->code == rc && err->msg[0] != '\0' ? err->msg : idm_strerror(rc);
    snprintf(msg, sizeof msg, "%s%s", reason, suffix != NULL ? suffix : "");
    int cls = ERR_PLAIN;
    if (rc == IDM_EPARSE || rc == IDM_EINVAL || rc == IDM_EUNSUPPORTED) {
        cls = ERR_TYPE;
    } else if (rc == IDM_ETIME_RANGE || rc == IDM_EOFFSET) {
        cls = ERR_RANGE;
    }
    throw_as(env, cls, code_name(rc), msg);
    if (rc == IDM_EPARSE && err != NULL && err->code == rc) {
        napi_value exc, off;
        if (napi_get_and_clear_last_exception(env, &exc) == napi_ok) {
            napi_create_double(env, (double)err->offset, &off);
            napi_set_named_property(env, exc, "offset", off);
            napi_throw(env, exc);
        }
    }
    return NULL;
}

/* ---- arguments ------------------------------------------------------------- */

/* A string argument as UTF-8: into buf when it fits (cap bytes with the
 * NUL), else into a heap copy left in *heap (free it). *len: its bytes.
 * Returns the text, or NULL with a TypeError thrown. */
static const char *arg_string(napi_env env, napi_value v, const char *what, char *buf, size_t cap,
                              char **heap, size_t *len)
{
    *heap = NULL;
    napi_valuetype t;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_string) {
        throw_arg(env, true, "%s must be a string", what);
        return NULL;
    }
    size_t n = 0;
    if (napi_get_value_string_utf8(env, v, buf, cap, &n) != napi_ok) {
        return NULL;
    }
    if (n + 1 < cap) {
        *len = n;
        return buf;
    }
    /* Perhaps cut short: ask for the whole length. */
    if (napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok) {
        return NULL;
    }
    if (n + 1 <= cap) {
        *len = n;
        return buf;
    }
    *heap = malloc(n + 1);
    if (*heap == NULL) {
        throw_as(env, ERR_PLAIN, "IDM_ENOMEM", idm_strerror(IDM_ENOMEM));
        return NULL;
    }
    napi_get_value_string_utf8(env, v, *heap, n + 1, &n);
    *len = n;
    return *heap;
}

static bool is_undefined(napi_env env, napi_value v)
{
    napi_valuetype t;
    return napi_typeof(env, v, &t) == napi_ok && (t == napi_undefined || t == napi_null);
}

/* Member name of an options object (undefined when absent or v is not an
 * object). */
static napi_value option(napi_env env, napi_value obj, const char *name)
{
    napi_value r;
    napi_valuetype t;
    if (napi_typeof(env, obj, &t) != napi_ok || t != napi_object) {
        napi_get_undefined(env, &r);
        return r;
    }
    if (napi_get_named_property(env, obj, name, &r) != napi_ok) {
        napi_get_undefined(env, &r);
    }
    return r;
}

/* Checks that v is undefined, null or an object. */
static bool options_ok(napi_env env, napi_value v, const char *what)
{
    napi_valuetype t;
    napi_typeof(env, v, &t);
    if (t != napi_undefined && t != napi_null && t != napi_object) {
        throw_arg(env, true, "%s must be an object", what);
        return false;
    }
    return true;
}

static addon *cb_args(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv)
{
    void *data = NULL;
    napi_get_cb_info(env, info, argc, argv, NULL, &data);
    return data;
}

/* ---- minting --------------------------------------------------------------- */

/* A minting call's answer: the text s[0..len) as a string, or the
 * library's error thrown. */
static napi_value text_result(napi_env env, int rc, const idm_error *err, const char *s, size_t len)
{
    if (rc != IDM_OK) {
        return throw_idm(env, rc, err, NULL);
    }
    napi_value r;
    napi_create_string_latin1(env, s, len, &r);
    return r;
}

/* One ID of format (uuidv4 .. ksuid) as a string. */
static napi_value mint_text(napi_env env, napi_callback_info info, int format)
{
    addon *a = cb_args(env, info, NULL, NULL);
    char s[IDM_FORMAT_TEXT_MAX];
    size_t len = 0;
    idm_error err;
    int rc = idm_gen_next_text_n(a->gen, format, s, sizeof s, 1, 0, &len, &err);
    return text_result(env, rc, &err, s, len);
}

static napi_value js_uuidv7(napi_env env, napi_callback_info info)
{
    return mint_text(env, info, IDM_FORMAT_UUIDV7);
}

static napi_value js_uuidv4(napi_env env, napi_callback_info info)
{
    return mint_text(env, info, IDM_FORMAT_UUIDV4);
}

static napi_value js_ulid(napi_env env, napi_callback_info info)
{
    return mint_text(env, info, IDM_FORMAT_ULID);
}

static napi_value js_ksuid(napi_env env, napi_callback_info info)
{
    return mint_text(env, info, IDM_FORMAT_KSUID);
}

/* uuidv4Text(n): n UUIDv4 in one string, 36 characters each, for the
 * JavaScript side to hand out one by one (UUIDv4 carries no time, so
 * minting ahead changes nothing but speed; crypto.randomUUID() buffers
 * its randomness the same way). */
static napi_value js_uuidv4_text(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    addon *a = cb_args(env, info, &argc, argv);
    uint32_t n = 0;
    if (argc < 1 || napi_get_value_uint32(env, argv[0], &n) != napi_ok || n == 0 || n > 256) {
        return throw_arg(env, false, "n must be 1 .. 256");
    }
    char s[256 * IDM_UUID_STRLEN];
    size_t len = 0;
    idm_error err;
    int rc = idm_gen_next_text_n(a->gen, IDM_FORMAT_UUIDV4, s, sizeof s, n, 0, &len, &err);
    if (rc != IDM_OK) {
        return throw_idm(env, rc, &err, NULL);
    }
    napi_value r;
    napi_create_string_latin1(env, s, len, &r);
    return r;
}

static napi_value js_uuidv7_bytes(napi_env env, napi_callback_info info)
{
    addon *a = cb_args(env, info, NULL, NULL);
    void *data = NULL;
    napi_value ab, r;
    if (napi_create_arraybuffer(env, sizeof(idm_uuid), &data, &ab) != napi_ok) {
        return NULL;
    }
    idm_error err;
    int rc = idm_uuidv7_next_n(a->gen, data, 1, &err);
    if (rc != IDM_OK) {
        return throw_idm(env, rc, &err, NULL);
    }
    napi_create_typedarray(env, napi_uint8_array, sizeof(idm_uuid), ab, 0, &r);
    return r;
}

/* One ID of a format that takes a prefix (typeid, token): argv[0] is the
 * prefix, undefined for none (a TypeID's bare suffix). */
static napi_value mint_prefixed(napi_env env, napi_callback_info info, const idm_format *f)
{
    size_t argc = 1;
    napi_value argv[1];
    addon *a = cb_args(env, info, &argc, argv);
    char buf[INPUT_CAP];
    char *heap = NULL;
    const char *prefix = f->prefix == IDM_PREFIX_REQUIRED ? "" : NULL;
    size_t plen = 0;
    if (argc >= 1 && !is_undefined(env, argv[0])) {
        prefix = arg_string(env, argv[0], "prefix", buf, sizeof buf, &heap, &plen);
        if (prefix == NULL) {
            return NULL;
        }
    }
    char s[IDM_FORMAT_TEXT_MAX + 1];
    size_t len = 0;
    idm_error err;
    int rc = idm_format_next_text_n(f, a->gen, prefix, plen, s, sizeof s, 1, 0, &len, &err);
    free(heap);
    return text_result(env, rc, &err, s, len);
}

static napi_value js_typeid(napi_env env, napi_callback_info info)
{
    return mint_prefixed(env, info, fmt_typeid);
}

static napi_value js_token(napi_env env, napi_callback_info info)
{
    return mint_prefixed(env, info, fmt_token);
}

static napi_value js_traceparent(napi_env env, napi_callback_info info)
{
    addon *a = cb_args(env, info, NULL, NULL);
    char s[IDM_TRACEPARENT_STRLEN + 1];
    size_t len = 0;
    idm_error err;
    int rc =
        idm_format_next_text_n(fmt_traceparent, a->gen, NULL, 0, s, sizeof s, 1, 0, &len, &err);
    return text_result(env, rc, &err, s, len);
}

/* ---- inspect and convert --------------------------------------------------- */

/* options.layout (a preset or a spec) into *l; false with an error thrown.
 * *given says whether there was one. */
static bool layout_option(napi_env env, napi_value options, idm_sf_layout *l, bool *given)
{
    napi_value v = option(env, options, "layout");
    *given = false;
    if (is_undefined(env, v)) {
        idm_error err;
        return idm_sf_layout_preset(l, "twitter", 7, &err) == IDM_OK;
    }
    char buf[INPUT_CAP];
    char *heap = NULL;
    size_t len = 0;
    const char *text = arg_string(env, v, "layout", buf, sizeof buf, &heap, &len);
    if (text == NULL) {
        return false;
    }
    idm_error err;
    int rc = idm_sf_layout_parse(l, text, len, &err);
    free(heap);
    if (rc != IDM_OK) {
        char msg[IDM_ERROR_MSG_CAP + 16];
        snprintf(msg, sizeof msg, "layout: %s", err.code == rc ? err.msg : idm_strerror(rc));
        throw_as(env, ERR_TYPE, code_name(rc), msg);
        return false;
    }
    *given = true;
    return true;
}

/* inspect(text, { layout, kind }): the JSON object `idmint inspect --json`
 * prints (common/inspect_render.c), as a string for index.js to parse. */
static napi_value js_inspect_json(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    cb_args(env, info, &argc, argv);
    if (argc < 1) {
        return throw_arg(env, true, "text must be a string");
    }
    napi_value options = NULL;
    if (argc >= 2) {
        options = argv[1];
        if (!options_ok(env, options, "options")) {
            return NULL;
        }
    }
    idm_sf_layout layout;
    bool given = false;
    if (!layout_option(env, options, &layout, &given)) {
        return NULL;
    }
    int kind = IDM_KIND_AUTO;
    napi_value kv = option(env, options, "kind");
    if (!is_undefined(env, kv)) {
        char kb[32];
        char *kheap = NULL;
        size_t klen = 0;
        const char *k = arg_string(env, kv, "kind", kb, sizeof kb, &kheap, &klen);
        if (k == NULL) {
            return NULL;
        }
        kind = idm_kind_from_name(k, klen);
        free(kheap);
        if (kind < 0) {
            return throw_arg(env, false,
                             "kind must be one of uuid, ulid, ksuid, typeid, snowflake");
        }
    }
    char buf[INPUT_CAP];
    char *heap = NULL;
    size_t len = 0;
    const char *text = arg_string(env, argv[0], "text", buf, sizeof buf, &heap, &len);
    if (text == NULL) {
        return NULL;
    }
    idm_inspection in;
    idm_error err;
    int rc = idm_inspect(text, len, kind, &layout, &in, &err);
    if (rc != IDM_OK) {
        free(heap);
        return throw_idm(env, rc, &err, NULL);
    }
    char out[2048];
    idmx_outbuf b;
    idmx_outbuf_init(&b, out, sizeof out, NULL, NULL);
    rc = idmx_inspect_json(&b, text, len, &in, &layout);
    free(heap);
    if (rc != 0 || idmx_outbuf_flush(&b) != 0) {
        return throw_as(env, ERR_PLAIN, code_name(IDM_ENOSPC), "inspect: the result is too long");
    }
    napi_value r;
    napi_create_string_utf8(env, b.data, b.len, &r);
    return r;
}

/* convert(text, to, prefix?): as `idmint convert --to TO [--prefix P]`. */
static napi_value js_convert(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    cb_args(env, info, &argc, argv);
    napi_value undef;
    napi_get_undefined(env, &undef);
    for (size_t i = argc; i < 3; i++) {
        argv[i] = undef;
    }
    char tb[16];
    char *theap = NULL;
    size_t tlen = 0;
    const char *to = arg_string(env, argv[1], "to", tb, sizeof tb, &theap, &tlen);
    if (to == NULL) {
        return NULL;
    }
    enum { TO_UUID = 1, TO_ULID, TO_TYPEID } target = 0;
    if (strcmp(to, "uuid") == 0) {
        target = TO_UUID;
    } else if (strcmp(to, "ulid") == 0) {
        target = TO_ULID;
    } else if (strcmp(to, "typeid") == 0) {
        target = TO_TYPEID;
    }
    free(theap);
    if (target == 0) {
        return throw_arg(env, false, "to must be 'uuid', 'ulid' or 'typeid'");
    }
    char pb[INPUT_CAP];
    char *pheap = NULL;
    const char *prefix = "";
    size_t plen = 0;
    if (!is_undefined(env, argv[2])) {
        if (target != TO_TYPEID) {
            return throw_arg(env, false, "a prefix applies only to typeid");
        }
        prefix = arg_string(env, argv[2], "prefix", pb, sizeof pb, &pheap, &plen);
        if (prefix == NULL) {
            return NULL;
        }
    }
    char buf[INPUT_CAP];
    char *heap = NULL;
    size_t len = 0;
    const char *text = arg_string(env, argv[0], "text", buf, sizeof buf, &heap, &len);
    if (text == NULL) {
        free(pheap);
        return NULL;
    }
    idm_uuid u;
    idm_error err;
    char s[IDM_TYPEID_STRLEN_MAX + 1];
    int rc = idm_parse_128(text, len, &u, NULL, &err);
    free(heap);
    if (rc == IDM_OK) {
        if (target == TO_UUID) {
            rc = idm_uuid_format(&u, s, sizeof s);
        } else if (target == TO_ULID) {
            idm_ulid l;
            memcpy(l.bytes, u.bytes, sizeof l.bytes);
            rc = idm_ulid_format(&l, s, sizeof s);
        } else {
            rc = idm_typeid_format(prefix, plen, &u, s, sizeof s, &err);
        }
    }
    free(pheap);
    if (rc != IDM_OK) {
        return throw_idm(env, rc, &err, NULL);
    }
    napi_value r;
    napi_create_string_latin1(env, s, strlen(s), &r);
    return r;
}

/* ---- Snowflake ------------------------------------------------------------- */

typedef struct snowflake_obj {
    idm_snowflake *g;
    idm_mark *mark;   /* NULL: none */
    idmc_slot *slot;  /* the node's slot in the host's registry */
    int64_t recorded; /* the slot's mark recorded by us: the ceiling while leased */
    int64_t claim_mark;
    uint64_t node;
    char layout[IDM_SF_SPEC_CAP];
} snowflake_obj;

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A mark a moment ahead of the clock (a killed predecessor's reserve, up
 * to a second) is waited out, as `idmint gen` does; one further ahead
 * means the clock was set back, which the generator refuses (or waits up
 * to maxRewind). */
static void wait_short(int64_t resume_ms)
{
    int64_t ahead = resume_ms - wall_ms();
    if (ahead >= 0 && ahead <= IDM_MARK_DEFAULT_RESERVE_MS + 10) {
        struct timespec ts = {(time_t)((ahead + 1) / 1000), (long)((ahead + 1) % 1000) * 1000000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

/* Ends everything the object holds: the mark is lowered to what was used
 * and closed, the slot's mark shrunk to what was used and released, then
 * the generator freed (mark.h: after idm_mark_close). */
static void snowflake_end(snowflake_obj *o)
{
    int64_t used = o->g != NULL ? idm_snowflake_high_water_ms(o->g) : 0;
    (void)idm_mark_close(o->mark, NULL);
    o->mark = NULL;
    idmc_slot_end(o->slot, o->claim_mark, o->recorded, used);
    o->slot = NULL;
    idm_snowflake_free(o->g);
    o->g = NULL;
}

/* At the isolate's teardown (a Worker's end, the process's exit), before
 * the finalizers: everything held is given back then. */
static void snowflake_cleanup(void *data)
{
    snowflake_end(data);
}

static void snowflake_finalize(napi_env env, void *data, void *hint)
{
    (void)hint;
    napi_remove_env_cleanup_hook(env, snowflake_cleanup, data);
    snowflake_end(data);
    free(data);
}

/* The leased node's ceiling: the slot's recorded mark (through the mark's
 * limit when there is a mark, which takes min(durable, limit)). */
static void apply_slot_ceiling(snowflake_obj *o)
{
    if (o->mark != NULL) {
        idm_mark_set_limit(o->mark, o->recorded);
    } else {
        idm_snowflake_set_ceiling(o->g, o->recorded);
    }
}

/* Records a mark in the node's slot, a reserve past the later of the
 * clock and the time used (the slots' rule: coord/idmint_coord.h,
 * idmc_slot_keep; the file put back first if it was removed), so that the
 * next holder resumes above everything minted up to it. */
static int record_slot(snowflake_obj *o, idm_error *err)
{
    idmc_error cerr;
    int64_t used = o->g != NULL ? idm_snowflake_high_water_ms(o->g) : 0;
    int crc = idmc_slot_keep(o->slot, &o->recorded, used, wall_ms(), true, &cerr);
    if (crc != 0) {
        err->code = IDM_ESTATE;
        snprintf(err->msg, sizeof err->msg, "cannot record the mark in the node's slot %s: %s",
                 idmc_slot_path(o->slot),
                 crc == IDMC_LOST ? "the slot was taken by another process" : cerr.msg);
        return IDM_ESTATE;
    }
    return IDM_OK;
}

/* options.node: a number or bigint in 0 .. max, or 'auto' (*is_auto). */
static bool node_option(napi_env env, napi_value options, const idm_sf_layout *l, const char *lname,
                        uint64_t *node, bool *is_auto)
{
    napi_value v = option(env, options, "node");
    uint64_t max = idm_sf_layout_max_node(l);
    napi_valuetype t;
    napi_typeof(env, v, &t);
    *is_auto = false;
    if (t == napi_string) {
        char buf[8];
        size_t len = 0;
        napi_get_value_string_utf8(env, v, buf, sizeof buf, &len);
        if (strcmp(buf, "auto") == 0) {
            *is_auto = true;
            return true;
        }
    } else if (t == napi_number) {
        double d = 0;
        napi_get_value_double(env, v, &d);
        if (d >= 0 && d <= (double)max && d == (double)(uint64_t)d) {
            *node = (uint64_t)d;
            return true;
        }
    } else if (t == napi_bigint) {
        uint64_t n = 0;
        bool lossless = false;
        napi_get_value_bigint_uint64(env, v, &n, &lossless);
        if (lossless && n <= max) {
            *node = n;
            return true;
        }
    } else if (t == napi_undefined) {
        throw_arg(env, true, "node is required: an integer 0 .. %" PRIu64 " (layout %s) or 'auto'",
                  max, lname);
        return false;
    }
    if (t == napi_number || t == napi_bigint) {
        char msg[256];
        snprintf(msg, sizeof msg, "node must be an integer 0 .. %" PRIu64 " for layout %s", max,
                 lname);
        throw_as(env, ERR_RANGE, "ERR_OUT_OF_RANGE", msg);
        return false;
    }
    throw_arg(env, t != napi_string, "node must be an integer 0 .. %" PRIu64 " or 'auto'", max);
    return false;
}

/* The optional string option name into buf (NULL when absent); false with
 * an error thrown. */
static bool string_option(napi_env env, napi_value options, const char *name, char *buf, size_t cap,
                          const char **out)
{
    napi_value v = option(env, options, name);
    *out = NULL;
    if (is_undefined(env, v)) {
        return true;
    }
    char *heap = NULL;
    size_t len = 0;
    const char *s = arg_string(env, v, name, buf, cap, &heap, &len);
    if (s == NULL) {
        return false;
    }
    if (heap != NULL) {
        free(heap);
        throw_arg(env, false, "%s is too long", name);
        return false;
    }
    if (len == 0 || strlen(s) != len) {
        throw_arg(env, false, "%s must be a non-empty path without NUL", name);
        return false;
    }
    *out = s;
    return true;
}

/* new Snowflake({ node, layout, mark, maxRewind, registry }) */
static napi_value snowflake_ctor(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], self, target;
    napi_get_cb_info(env, info, &argc, argv, &self, NULL);
    if (napi_get_new_target(env, info, &target) != napi_ok || target == NULL) {
        return throw_arg(env, true, "Class constructor Snowflake cannot be invoked without 'new'");
    }
    napi_value options = argc >= 1 ? argv[0] : NULL;
    if (options != NULL && !options_ok(env, options, "options")) {
        return NULL;
    }
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    bool given = false;
    if (!layout_option(env, options, &cfg.layout, &given)) {
        return NULL;
    }
    char lname[IDM_SF_SPEC_CAP];
    if (cfg.layout.name[0] != '\0') {
        snprintf(lname, sizeof lname, "%s", cfg.layout.name);
    } else if (idm_sf_layout_format(&cfg.layout, lname, sizeof lname) != IDM_OK) {
        snprintf(lname, sizeof lname, "?");
    }
    bool is_auto = false;
    if (!node_option(env, options, &cfg.layout, lname, &cfg.node, &is_auto)) {
        return NULL;
    }
    napi_value mr = option(env, options, "maxRewind");
    if (!is_undefined(env, mr)) {
        double d = -1;
        napi_valuetype t;
        napi_typeof(env, mr, &t);
        if (t != napi_number) {
            return throw_arg(env, true, "maxRewind must be a number of milliseconds");
        }
        napi_get_value_double(env, mr, &d);
        if (!(d >= 0 && d <= 86400000.0) || d != (double)(int64_t)d) {
            return throw_as(env, ERR_RANGE, "ERR_OUT_OF_RANGE",
                            "maxRewind must be an integer 0 .. 86400000 (ms)");
        }
        cfg.max_rewind_ms = (int64_t)d;
    }
    char mark_buf[1024], reg_buf[1024];
    const char *mark_path = NULL, *registry = NULL;
    if (!string_option(env, options, "mark", mark_buf, sizeof mark_buf, &mark_path) ||
        !string_option(env, options, "registry", reg_buf, sizeof reg_buf, &registry)) {
        return NULL;
    }

    snowflake_obj *o = calloc(1, sizeof *o);
    if (o == NULL) {
        return throw_as(env, ERR_PLAIN, "IDM_ENOMEM", idm_strerror(IDM_ENOMEM));
    }
    snprintf(o->layout, sizeof o->layout, "%s", lname);
    idm_error err = {0};
    int rc = IDM_OK;
    const char *suffix = NULL;
    /* A node given is registered too (exactly that slot), as idmintd's
     * --node N is: two processes of this host minting as one node would
     * repeat IDs, whichever program they are. */
    {
        char dir[1024];
        if (registry != NULL) {
            snprintf(dir, sizeof dir, "%s", registry);
        } else if (idmc_local_default_dir(dir, sizeof dir) != 0) {
            free(o);
            return throw_as(env, ERR_PLAIN, "IDM_ESTATE", "cannot name this host's node registry");
        }
        char holder[IDMC_SLOT_BYTES - IDMC_HOLDER_AT];
        snprintf(holder, sizeof holder, "pid=%d program=node(idmint)", (int)getpid());
        idmc_error cerr;
        uint64_t lo = is_auto ? 0 : cfg.node;
        uint64_t hi = is_auto ? idm_sf_layout_max_node(&cfg.layout) : cfg.node;
        int crc = idmc_local_claim(dir, lname, lo, hi, idm_sf_layout_max_unix_ms(&cfg.layout),
                                   holder, &o->slot, &cerr);
        if (crc != 0) {
            char msg[IDMC_MSG_CAP + 160];
            if (crc == IDMC_BUSY && !is_auto)
                snprintf(msg, sizeof msg,
                         "node %llu is held on this host (registry %s): %s; two processes "
                         "minting as one node would repeat IDs",
                         (unsigned long long)cfg.node, dir, cerr.msg);
            else
                snprintf(msg, sizeof msg, "%s%s",
                         crc == IDMC_BUSY ? "no free snowflake node on this host: " : "", cerr.msg);
            free(o);
            return throw_as(env, ERR_PLAIN, crc == IDMC_BUSY ? "IDMC_BUSY" : "IDMC_ERROR", msg);
        }
        cfg.node = idmc_slot_node(o->slot);
        o->claim_mark = idmc_slot_mark_ms(o->slot);
        o->recorded = o->claim_mark;
        cfg.resume_unix_ms = o->claim_mark;
        wait_short(o->claim_mark);
        rc = record_slot(o, &err);
    }
    o->node = cfg.node;
    if (rc == IDM_OK && mark_path != NULL) {
        rc = idm_mark_open(&o->mark, mark_path, NULL, &err);
        if (rc == IDM_OK) {
            int64_t resume = idm_mark_resume_ms(o->mark);
            if (resume > cfg.resume_unix_ms) {
                cfg.resume_unix_ms = resume;
            }
            wait_short(resume);
        } else {
            suffix = NULL;
        }
    }
    if (rc == IDM_OK) {
        rc = idm_snowflake_new(&o->g, &cfg, &err);
    }
    if (rc == IDM_OK && o->mark != NULL) {
        rc = idm_mark_attach_snowflake(o->mark, o->g, &err);
    }
    if (rc == IDM_OK && o->slot != NULL) {
        apply_slot_ceiling(o);
    }
    if (rc == IDM_OK && napi_wrap(env, self, o, snowflake_finalize, NULL, NULL) != napi_ok) {
        rc = IDM_ENOMEM;
    }
    if (rc == IDM_OK) {
        napi_add_env_cleanup_hook(env, snowflake_cleanup, o);
    }
    if (rc != IDM_OK) {
        snowflake_end(o);
        free(o);
        return throw_idm(env, rc, &err, suffix);
    }
    return self;
}

/* The object behind this; NULL with an error thrown when this is not a
 * Snowflake, or (open_only) when it is closed. */
static snowflake_obj *snowflake_get(napi_env env, napi_callback_info info, bool open_only)
{
    napi_value self;
    void *data = NULL;
    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    if (napi_unwrap(env, self, &data) != napi_ok || data == NULL) {
        throw_arg(env, true, "not a Snowflake");
        return NULL;
    }
    snowflake_obj *o = data;
    if (open_only && o->g == NULL) {
        throw_as(env, ERR_PLAIN, "ERR_IDMINT_CLOSED", "the Snowflake is closed");
        return NULL;
    }
    return o;
}

static snowflake_obj *snowflake_this(napi_env env, napi_callback_info info)
{
    return snowflake_get(env, info, true);
}

/* One ID; false with an error thrown. */
static bool snowflake_mint(napi_env env, snowflake_obj *o, uint64_t *id)
{
    idm_error err;
    for (;;) {
        int rc = idm_snowflake_next_n(o->g, id, 1, NULL, &err);
        if (rc == IDM_OK) {
            return true;
        }
        if (rc == IDM_ECEILING && o->slot != NULL) {
            /* The slot's promise is used up: extend it, then go on. */
            rc = record_slot(o, &err);
            if (rc == IDM_OK) {
                apply_slot_ceiling(o);
                continue;
            }
        }
        throw_idm(env, rc, &err,
                  rc == IDM_ECLOCK_REWIND && o->mark != NULL
                      ? " (the clock is behind the time the mark file says was used; mint again "
                        "once it has passed that, or allow the wait with maxRewind)"
                      : NULL);
        return false;
    }
}

static napi_value snowflake_next(napi_env env, napi_callback_info info)
{
    snowflake_obj *o = snowflake_this(env, info);
    uint64_t id;
    if (o == NULL || !snowflake_mint(env, o, &id)) {
        return NULL;
    }
    napi_value r;
    napi_create_bigint_uint64(env, id, &r);
    return r;
}

static napi_value snowflake_next_string(napi_env env, napi_callback_info info)
{
    snowflake_obj *o = snowflake_this(env, info);
    uint64_t id;
    if (o == NULL || !snowflake_mint(env, o, &id)) {
        return NULL;
    }
    char s[21];
    size_t len = idm_sf_format_decimal(id, s, sizeof s);
    napi_value r;
    napi_create_string_latin1(env, s, len, &r);
    return r;
}

static napi_value snowflake_close(napi_env env, napi_callback_info info)
{
    napi_value self, r;
    void *data = NULL;
    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    if (napi_unwrap(env, self, &data) == napi_ok && data != NULL) {
        snowflake_end(data);
    }
    napi_get_undefined(env, &r);
    return r;
}

static napi_value snowflake_node(napi_env env, napi_callback_info info)
{
    snowflake_obj *o = snowflake_get(env, info, false);
    if (o == NULL) {
        return NULL;
    }
    napi_value r;
    napi_create_double(env, (double)o->node, &r);
    return r;
}

static napi_value snowflake_layout(napi_env env, napi_callback_info info)
{
    snowflake_obj *o = snowflake_get(env, info, false);
    if (o == NULL) {
        return NULL;
    }
    napi_value r;
    napi_create_string_utf8(env, o->layout, NAPI_AUTO_LENGTH, &r);
    return r;
}

/* ---- the module ------------------------------------------------------------ */

NAPI_MODULE_INIT()
{
    fmt_typeid = idm_format_by_id(IDM_FORMAT_TYPEID);
    fmt_token = idm_format_by_id(IDM_FORMAT_TOKEN);
    fmt_traceparent = idm_format_by_id(IDM_FORMAT_TRACEPARENT);
    addon *a = calloc(1, sizeof *a);
    if (a == NULL) {
        throw_as(env, ERR_PLAIN, "IDM_ENOMEM", idm_strerror(IDM_ENOMEM));
        return NULL;
    }
    idm_error err;
    int rc = gen_acquire(&a->gen, &err);
    if (rc != IDM_OK) {
        free(a);
        return throw_idm(env, rc, &err, NULL);
    }
    if (napi_set_instance_data(env, a, addon_finalize, NULL) != napi_ok) {
        gen_release();
        free(a);
        return NULL;
    }
    static const struct {
        const char *name;
        napi_callback fn;
    } fns[] = {
        {"uuidv7", js_uuidv7},
        {"uuidv4", js_uuidv4},
        {"uuidv4Text", js_uuidv4_text},
        {"uuidv7Bytes", js_uuidv7_bytes},
        {"ulid", js_ulid},
        {"ksuid", js_ksuid},
        {"typeid", js_typeid},
        {"token", js_token},
        {"traceparent", js_traceparent},
        {"inspectJson", js_inspect_json},
        {"convert", js_convert},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        napi_value f;
        napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, a, &f);
        napi_set_named_property(env, exports, fns[i].name, f);
    }
    napi_property_descriptor props[] = {
        {"next", NULL, snowflake_next, NULL, NULL, NULL, napi_default_method, NULL},
        {"nextString", NULL, snowflake_next_string, NULL, NULL, NULL, napi_default_method, NULL},
        {"close", NULL, snowflake_close, NULL, NULL, NULL, napi_default_method, NULL},
        {"node", NULL, NULL, snowflake_node, NULL, NULL, napi_default_jsproperty, NULL},
        {"layout", NULL, NULL, snowflake_layout, NULL, NULL, napi_default_jsproperty, NULL},
    };
    napi_value cls;
    napi_define_class(env, "Snowflake", NAPI_AUTO_LENGTH, snowflake_ctor, a,
                      sizeof props / sizeof props[0], props, &cls);
    napi_set_named_property(env, exports, "Snowflake", cls);
    napi_value v;
    napi_create_string_utf8(env, IDM_VERSION_STRING, NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, exports, "libraryVersion", v);
    return exports;
}
