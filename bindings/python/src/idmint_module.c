/*
 * idmint_module.c - idmint._idmint, the CPython extension under the idmint
 * package: libidmint's minting, parsing and inspection as Python calls.
 *
 * One shared generator (idm_gen, made without IDM_GEN_UNSHARED: the
 * library's thread-safe kind) serves every module-level call of the
 * process, so the time-ordered formats are strictly increasing per process
 * across threads. Single IDs are minted with the GIL held (the call is far
 * shorter than a GIL round trip); bulk calls release it while the library
 * fills a buffer, then build the Python objects. fork(): the library
 * notices a child by itself (gen.h: a pthread_atfork generation counter)
 * and reseeds, so parent and child never share an ID; a Snowflake made in
 * the parent refuses to mint in the child (IDM_EFORKED), and its node
 * lease and mark file are left to the parent (see snowflake_dealloc).
 *
 * uuid.UUID objects are made directly: the instance is allocated from the
 * class and its two slots ("int", "is_safe") are set through the offsets
 * their member descriptors name, which skips UUID.__init__'s argument
 * checks (the value is known to be 128 bits). Should the class ever stop
 * having those slots, UUID(int=...) is called instead.
 *
 * Left out: HLC stamps, segments and keyed IDs (the library has them; the
 * binding does not offer them yet), coordinators for several hosts (etcd,
 * ZooKeeper): Snowflake(node="auto") leases from this host's registry only.
 * A node given is registered there too (as idmintd's --node N), and the
 * slot's mark is kept by the slots' rule (coord/idmint_coord.h:
 * idmc_slot_keep, idmc_slot_end), as the CLI keeps it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <idmint/idmint.h>

#include "host.h"
#include "idmint_coord.h"
#include "inspect_render.h"
#include "outbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_BULK         ((Py_ssize_t)100000000) /* one bulk call's largest n */
#define INSPECT_JSON_CAP 2048
#define CEILING_RETRIES  3

/* ---- the module's state (one per process: CPython loads the module once) ---- */

static idm_gen *shared_gen;     /* the module-level generator */
static PyObject *Error;         /* idmint.Error */
static PyObject *ParseError;    /* idmint.ParseError (Error, ValueError) */
static PyObject *ClockError;    /* idmint.ClockError (Error) */
static PyTypeObject *uuid_type; /* uuid.UUID */
static PyObject *safe_unknown;  /* uuid.SafeUUID.unknown */
static Py_ssize_t uuid_int_at;  /* offset of UUID's "int" slot, or -1 */
static Py_ssize_t uuid_safe_at; /* offset of UUID's "is_safe" slot, or -1 */
static PyObject *json_loads;    /* json.loads */

/* ---- errors ----------------------------------------------------------------- */

static const char *reason(int rc, const idm_error *err)
{
    return err->msg[0] != '\0' ? err->msg : idm_strerror(rc);
}

/* Sets attributes on a freshly made exception; failures here leave the
 * exception without them rather than replacing it. */
static void set_int_attr(PyObject *exc, const char *name, long long v)
{
    PyObject *o = PyLong_FromLongLong(v);
    if (o == NULL || PyObject_SetAttrString(exc, name, o) != 0) {
        PyErr_Clear();
    }
    Py_XDECREF(o);
}

/* Raises the exception for a library error: ParseError (a ValueError) for
 * bad input or arguments, ClockError with rewind_ms for a refused clock
 * rewind, MemoryError, or Error; each carries the code and the library's
 * message. Returns NULL. */
static PyObject *raise_idm(int rc, const idm_error *err)
{
    if (rc == IDM_ENOMEM) {
        return PyErr_NoMemory();
    }
    PyObject *type = Error;
    if (rc == IDM_EPARSE || rc == IDM_EINVAL || rc == IDM_EUNSUPPORTED) {
        type = ParseError;
    } else if (rc == IDM_ECLOCK_REWIND) {
        type = ClockError;
    }
    PyObject *exc = PyObject_CallFunction(type, "s", reason(rc, err));
    if (exc == NULL) {
        return NULL;
    }
    set_int_attr(exc, "code", rc);
    if (type == ParseError) {
        set_int_attr(exc, "offset", (long long)err->offset);
    }
    if (type == ClockError) {
        set_int_attr(exc, "rewind_ms", (long long)err->rewind_ms);
    }
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    return NULL;
}

/* A binding-level refusal of an argument (no library code). */
static PyObject *raise_arg(const char *fmt, ...)
{
    idm_error err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.msg, sizeof err.msg, fmt, ap);
    va_end(ap);
    err.offset = 0;
    err.rewind_ms = 0;
    return raise_idm(IDM_EINVAL, &err);
}

static void error_clear(idm_error *err)
{
    err->code = 0;
    err->offset = 0;
    err->rewind_ms = 0;
    err->msg[0] = '\0';
}

/* ---- value builders --------------------------------------------------------- */

static PyObject *int_from_be128(const uint8_t b[16])
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(b, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
#else
    return _PyLong_FromByteArray(b, 16, 0, 0);
#endif
}

static PyObject *make_uuid(const idm_uuid *u)
{
    PyObject *v = int_from_be128(u->bytes);
    if (v == NULL) {
        return NULL;
    }
    if (uuid_int_at < 0) {
        PyObject *args = PyTuple_New(0);
        PyObject *kw = Py_BuildValue("{sO}", "int", v);
        PyObject *o =
            args != NULL && kw != NULL ? PyObject_Call((PyObject *)uuid_type, args, kw) : NULL;
        Py_XDECREF(args);
        Py_XDECREF(kw);
        Py_DECREF(v);
        return o;
    }
    PyObject *o = uuid_type->tp_alloc(uuid_type, 0);
    if (o == NULL) {
        Py_DECREF(v);
        return NULL;
    }
    *(PyObject **)((char *)o + uuid_int_at) = v; /* takes the reference */
    Py_INCREF(safe_unknown);
    *(PyObject **)((char *)o + uuid_safe_at) = safe_unknown;
    return o;
}

/* ASCII text the library wrote, as a str. */
static PyObject *ascii_str(const char *s, size_t len)
{
    PyObject *o = PyUnicode_New((Py_ssize_t)len, 127);
    if (o != NULL) {
        memcpy(PyUnicode_1BYTE_DATA(o), s, len);
    }
    return o;
}

/* A Python int in 0 .. Py_ssize_t max as a count for the bulk calls. */
static int take_count(PyObject *arg, Py_ssize_t *n)
{
    Py_ssize_t v = PyLong_AsSsize_t(arg);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < 0 || v > MAX_BULK) {
        raise_arg("n must be 0 .. %zd, got %zd", MAX_BULK, v);
        return -1;
    }
    *n = v;
    return 0;
}

/* A str argument as UTF-8 (a pointer into the str object). */
static int take_text(PyObject *arg, const char *what, const char **s, Py_ssize_t *len)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what, Py_TYPE(arg)->tp_name);
        return -1;
    }
    *s = PyUnicode_AsUTF8AndSize(arg, len);
    return *s == NULL ? -1 : 0;
}

/* ---- module-level minting ---------------------------------------------------- */

PyDoc_STRVAR(
    uuid7_doc,
    "uuid7($module, /)\n--\n\n"
    "-> uuid.UUID: a new UUIDv7 (RFC 9562: 48-bit Unix ms, a counter, random bits), strictly\n"
    "greater than every one this process minted before, across threads.");

/* One UUID of the shared generator by next (idm_uuidv7_next_n or
 * idm_uuidv4_next_n) as a uuid.UUID. */
static PyObject *mint_uuid(int (*next)(idm_gen *, idm_uuid *, size_t, idm_error *))
{
    idm_uuid u;
    idm_error err;
    error_clear(&err);
    int rc = next(shared_gen, &u, 1, &err);
    if (rc != IDM_OK) {
        return raise_idm(rc, &err);
    }
    return make_uuid(&u);
}

static PyObject *py_uuid7(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return mint_uuid(idm_uuidv7_next_n);
}

PyDoc_STRVAR(
    uuid4_doc,
    "uuid4($module, /)\n--\n\n-> uuid.UUID: a new random UUIDv4 (122 bits from the CSPRNG).");

static PyObject *py_uuid4(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return mint_uuid(idm_uuidv4_next_n);
}

PyDoc_STRVAR(
    uuid7_n_doc,
    "uuid7_n($module, n, /)\n--\n\n"
    "-> list[uuid.UUID]: n new UUIDv7 in increasing order, minted in one call with the GIL\n"
    "released (one clock read); they sort after every UUIDv7 of the process\n"
    "minted before.");

static PyObject *py_uuid7_n(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_ssize_t n;
    if (take_count(arg, &n) != 0) {
        return NULL;
    }
    idm_uuid *buf = PyMem_RawMalloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (buf == NULL) {
        return PyErr_NoMemory();
    }
    idm_error err;
    error_clear(&err);
    int rc = IDM_OK;
    if (n > 0) {
        PyThreadState *ts = PyEval_SaveThread();
        rc = idm_uuidv7_next_n(shared_gen, buf, (size_t)n, &err);
        PyEval_RestoreThread(ts);
    }
    PyObject *list = NULL;
    if (rc != IDM_OK) {
        raise_idm(rc, &err);
    } else if ((list = PyList_New(n)) != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *o = make_uuid(&buf[i]);
            if (o == NULL) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, i, o);
        }
    }
    PyMem_RawFree(buf);
    return list;
}

/* One ID of a text format of the table (format.h) from the shared
 * generator; prefix NULL: none. */
static PyObject *mint_text(int format, const char *prefix, size_t prefix_len)
{
    const idm_format *f = idm_format_by_id(format);
    char buf[IDM_FORMAT_TEXT_MAX + 1];
    size_t len = 0;
    idm_error err;
    error_clear(&err);
    int rc = idm_format_next_text_n(f, shared_gen, prefix, prefix_len, buf, sizeof buf, 1, 0, &len,
                                    &err);
    if (rc != IDM_OK) {
        return raise_idm(rc, &err);
    }
    return ascii_str(buf, len);
}

PyDoc_STRVAR(ulid_doc,
             "ulid($module, /)\n--\n\n"
             "-> str: a new ULID (26 characters of Crockford base32, uppercase), strictly\n"
             "greater than every one this process minted before.");

static PyObject *py_ulid(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return mint_text(IDM_FORMAT_ULID, NULL, 0);
}

PyDoc_STRVAR(ksuid_doc,
             "ksuid($module, /)\n--\n\n"
             "-> str: a new KSUID (27 characters of base62), strictly greater than every one\n"
             "this process minted before.");

static PyObject *py_ksuid(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return mint_text(IDM_FORMAT_KSUID, NULL, 0);
}

PyDoc_STRVAR(typeid_doc,
             "typeid($module, prefix, /)\n--\n\n"
             "-> str: a new TypeID: prefix, '_' and a UUIDv7 in 26 characters of base32 (the bare\n"
             "suffix when prefix is ''). The prefix is up to 63 of [a-z_], neither starting\n"
             "nor ending with '_'; another raises ValueError saying why.");

static PyObject *py_typeid(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *p;
    Py_ssize_t len;
    if (take_text(arg, "prefix", &p, &len) != 0) {
        return NULL;
    }
    return mint_text(IDM_FORMAT_TYPEID, p, (size_t)len);
}

PyDoc_STRVAR(token_doc,
             "token($module, /, prefix=None)\n--\n\n"
             "-> str: a new opaque token: 128 random bits in 22 base62 characters, after\n"
             "prefix + '_' when a prefix is given (the TypeID prefix rule). Tokens carry\n"
             "no time; treat them as secrets.");

static PyObject *py_token(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"prefix", NULL};
    PyObject *prefix = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:token", names, &prefix)) {
        return NULL;
    }
    if (prefix == Py_None) {
        return mint_text(IDM_FORMAT_TOKEN, NULL, 0);
    }
    const char *p;
    Py_ssize_t len;
    if (take_text(prefix, "prefix", &p, &len) != 0) {
        return NULL;
    }
    return mint_text(IDM_FORMAT_TOKEN, p, (size_t)len);
}

PyDoc_STRVAR(traceparent_doc,
             "traceparent($module, /)\n--\n\n"
             "-> str: a new W3C traceparent value: '00-' 32 hex trace-id '-' 16 hex parent-id\n"
             "'-01' (random, never all-zero ids; sampled).");

static PyObject *py_traceparent(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return mint_text(IDM_FORMAT_TRACEPARENT, NULL, 0);
}

/* ---- inspect and convert ------------------------------------------------------ */

/* A layout argument (None, a preset name or a spec) into *l; *lp is NULL
 * for None (twitter). */
static int take_layout(PyObject *arg, idm_sf_layout *l, const idm_sf_layout **lp)
{
    *lp = NULL;
    if (arg == NULL || arg == Py_None) {
        return 0;
    }
    const char *s;
    Py_ssize_t len;
    if (take_text(arg, "layout", &s, &len) != 0) {
        return -1;
    }
    idm_error err;
    error_clear(&err);
    int rc = idm_sf_layout_parse(l, s, (size_t)len, &err);
    if (rc != IDM_OK) {
        raise_idm(rc, &err);
        return -1;
    }
    *lp = l;
    return 0;
}

PyDoc_STRVAR(
    inspect_doc,
    "inspect($module, /, text, layout=None, *, kind=None)\n--\n\n"
    "-> dict: decodes an ID's text, as `idmint inspect --json` does, into a dict with the\n"
    "same members and values: input, kind, unix_ms, time, then by kind\n"
    "  uuid       uuid, version, variant [, clock_seq, node for v1 and v6]\n"
    "  ulid       uuid, ulid, random\n"
    "  ksuid      ksuid, payload\n"
    "  typeid     uuid, typeid, prefix\n"
    "  snowflake  id (a decimal str), layout, node, sequence\n"
    "The kind is recognised from the text unless kind names one ('uuid', 'ulid',\n"
    "'ksuid', 'typeid', 'snowflake'); layout is the snowflake layout (a preset\n"
    "name or a spec; default twitter). Bad input raises ValueError with the\n"
    "reason.");

static PyObject *py_inspect(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"text", "layout", "kind", NULL};
    PyObject *text_o;
    PyObject *layout_o = Py_None;
    PyObject *kind_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$O:inspect", names, &text_o, &layout_o,
                                     &kind_o)) {
        return NULL;
    }
    const char *text;
    Py_ssize_t len;
    if (take_text(text_o, "text", &text, &len) != 0) {
        return NULL;
    }
    idm_sf_layout layout;
    const idm_sf_layout *lp;
    if (take_layout(layout_o, &layout, &lp) != 0) {
        return NULL;
    }
    int kind = IDM_KIND_AUTO;
    if (kind_o != Py_None) {
        const char *k;
        Py_ssize_t klen;
        if (take_text(kind_o, "kind", &k, &klen) != 0) {
            return NULL;
        }
        kind = idm_kind_from_name(k, (size_t)klen);
        if (kind <= IDM_KIND_AUTO) {
            return raise_arg("invalid kind '%.64s' (expected uuid, ulid, ksuid, typeid or "
                             "snowflake)",
                             k);
        }
    }
    idm_inspection in;
    idm_error err;
    error_clear(&err);
    int rc = idm_inspect(text, (size_t)len, kind, lp, &in, &err);
    if (rc != IDM_OK) {
        return raise_idm(rc, &err);
    }
    /* The CLI's renderer makes the JSON, so the members cannot drift from
     * `idmint inspect --json`; json.loads turns it into the dict. */
    char buf[INSPECT_JSON_CAP];
    idmx_outbuf b;
    idmx_outbuf_init(&b, buf, sizeof buf, NULL, NULL);
    if (idmx_inspect_json(&b, text, (size_t)len, &in, lp) != 0) {
        return raise_arg("the input is too long to render (%zd bytes)", len);
    }
    PyObject *s = PyUnicode_DecodeUTF8(b.data, (Py_ssize_t)b.len, "strict");
    if (s == NULL) {
        return NULL;
    }
    PyObject *d = PyObject_CallOneArg(json_loads, s);
    Py_DECREF(s);
    return d;
}

PyDoc_STRVAR(convert_doc,
             "convert($module, /, text, to, prefix=None)\n--\n\n"
             "-> str: re-encodes a 128-bit ID (any UUID form, a ULID or a TypeID) as to: 'uuid'\n"
             "(canonical lowercase), 'ulid' (uppercase) or 'typeid' (with prefix, or the\n"
             "bare suffix without one), as `idmint convert` does; the bits are unchanged.\n"
             "KSUIDs and snowflakes are not 128-bit IDs: ValueError, as for bad input.");

enum { TO_UUID = 1, TO_ULID, TO_TYPEID };

static PyObject *py_convert(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"text", "to", "prefix", NULL};
    PyObject *text_o;
    PyObject *to_o;
    PyObject *prefix_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:convert", names, &text_o, &to_o, &prefix_o)) {
        return NULL;
    }
    const char *text;
    const char *to_s;
    Py_ssize_t len;
    Py_ssize_t to_len;
    if (take_text(text_o, "text", &text, &len) != 0 || take_text(to_o, "to", &to_s, &to_len) != 0) {
        return NULL;
    }
    int to;
    if (strcmp(to_s, "uuid") == 0) {
        to = TO_UUID;
    } else if (strcmp(to_s, "ulid") == 0) {
        to = TO_ULID;
    } else if (strcmp(to_s, "typeid") == 0) {
        to = TO_TYPEID;
    } else {
        return raise_arg("invalid to '%.64s' (expected uuid, ulid or typeid)", to_s);
    }
    const char *prefix = "";
    Py_ssize_t prefix_len = 0;
    idm_error err;
    error_clear(&err);
    if (prefix_o != Py_None) {
        if (to != TO_TYPEID) {
            return raise_arg("prefix applies only to to='typeid'");
        }
        if (take_text(prefix_o, "prefix", &prefix, &prefix_len) != 0) {
            return NULL;
        }
        int rc = idm_typeid_check_prefix(prefix, (size_t)prefix_len, &err);
        if (rc != IDM_OK) {
            return raise_idm(rc, &err);
        }
    }
    idm_uuid u;
    int rc = idm_parse_128(text, (size_t)len, &u, NULL, &err);
    if (rc != IDM_OK) {
        return raise_idm(rc, &err);
    }
    char s[IDM_TYPEID_STRLEN_MAX + 1];
    if (to == TO_UUID) {
        rc = idm_uuid_format(&u, s, sizeof s);
    } else if (to == TO_ULID) {
        idm_ulid l;
        memcpy(l.bytes, u.bytes, sizeof l.bytes);
        rc = idm_ulid_format(&l, s, sizeof s);
    } else {
        rc = idm_typeid_format(prefix, (size_t)prefix_len, &u, s, sizeof s, &err);
    }
    if (rc != IDM_OK) {
        return raise_idm(rc, &err);
    }
    return ascii_str(s, strlen(s));
}

/* ---- Snowflake ------------------------------------------------------------------ */

typedef struct snowflake_object {
    PyObject_HEAD idm_snowflake *sf; /* NULL once closed */
    idm_mark *mark;                  /* mark=PATH, or NULL */
    idmc_slot *slot;                 /* the node's slot in the host's registry */
    pthread_mutex_t slot_mu;         /* orders the slot's mark writes (threads at the ceiling) */
    int64_t slot_claim_ms;           /* the slot's mark at the claim: earlier holders' */
    int64_t slot_recorded;           /* the mark recorded for this holder (guarded by slot_mu) */
    uint64_t node;
    pid_t pid;  /* the process that made it */
    int active; /* calls running with the GIL released (guarded by the GIL) */
    char layout[IDM_SF_SPEC_CAP];
} snowflake_object;

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Records in the node's slot that this holder may mint up to a second past
 * max(clock, what the generator has used), and raises the generator's
 * ceiling to it (through the mark's limit when there is a mark: it
 * computes min(durable, limit)). The slot file is put back first if it was
 * removed, as the CLI does. Runs without the GIL. */
static int slot_raise(snowflake_object *s, idm_error *err)
{
    int rc = IDM_OK;
    pthread_mutex_lock(&s->slot_mu);
    /* The slots' rule (coord/idmint_coord.h: idmc_slot_keep): at the
     * ceiling, a mark a reserve past the later of the clock and the time
     * used, the file put back first if it was removed. */
    idmc_error cerr;
    int crc = idmc_slot_keep(s->slot, &s->slot_recorded, idm_snowflake_high_water_ms(s->sf),
                             wall_ms(), true, &cerr);
    if (crc != 0) {
        snprintf(err->msg, sizeof err->msg,
                 "node %" PRIu64 ": cannot record the time high-water mark in its slot "
                 "(%.150s); not minting past the mark recorded there",
                 s->node, crc == IDMC_LOST ? "the slot was taken by another process" : cerr.msg);
        err->code = IDM_ECEILING;
        rc = IDM_ECEILING;
    }
    if (rc == IDM_OK) {
        if (s->mark != NULL) {
            idm_mark_set_limit(s->mark, s->slot_recorded);
        } else {
            idm_snowflake_set_ceiling(s->sf, s->slot_recorded);
        }
    }
    pthread_mutex_unlock(&s->slot_mu);
    return rc;
}

/* The blocking mint: waits out an exhausted unit or a small rewind, and
 * raises a node slot's mark at the ceiling. Runs without the GIL. */
static int sf_mint_blocking(snowflake_object *s, uint64_t *out, size_t n, size_t *got,
                            idm_error *err)
{
    int retries = 0;
    for (;;) {
        size_t done = 0;
        int rc = idm_snowflake_next_n(s->sf, out + *got, n - *got, &done, err);
        *got += done;
        if (done > 0) {
            retries = 0; /* a raise that let IDs through worked */
        }
        if (rc == IDM_ECEILING && s->slot != NULL && retries++ < CEILING_RETRIES) {
            error_clear(err);
            rc = slot_raise(s, err);
            if (rc == IDM_OK) {
                continue;
            }
        }
        return rc;
    }
}

static int sf_usable(snowflake_object *s)
{
    if (s->sf == NULL) {
        PyErr_SetString(Error, "the Snowflake generator is closed");
        return -1;
    }
    return 0;
}

/* Mints n IDs into out: first without waiting and with the GIL held (the
 * common case, a few tens of ns), then, if the library would have to wait,
 * with the GIL released. Returns 0, or -1 with the exception set. */
static int sf_mint(snowflake_object *s, uint64_t *out, size_t n, int release_always)
{
    if (sf_usable(s) != 0) {
        return -1;
    }
    idm_error err;
    error_clear(&err);
    size_t got = 0;
    int rc = IDM_EAGAIN;
    if (!release_always) {
        int64_t retry_ns = 0;
        rc = idm_snowflake_try_next_n(s->sf, out, n, &got, &retry_ns, &err);
    }
    if (rc == IDM_EAGAIN || rc == IDM_ECEILING) {
        error_clear(&err);
        s->active++;
        PyThreadState *ts = PyEval_SaveThread();
        rc = sf_mint_blocking(s, out, n, &got, &err);
        PyEval_RestoreThread(ts);
        s->active--;
    }
    if (rc != IDM_OK) {
        if (rc == IDM_ECLOCK_REWIND && s->mark != NULL) {
            size_t l = strlen(err.msg);
            snprintf(err.msg + l, sizeof err.msg - l, "%s",
                     " (the clock is behind the time the mark file says was used)");
        }
        raise_idm(rc, &err);
        return -1;
    }
    return 0;
}

/* Gives back what a Snowflake holds: the node slot (its mark lowered to
 * the last time used) and the mark file (lowered likewise). Without the
 * GIL: both may write and fsync. */
static void sf_release(idm_snowflake *sf, idm_mark *mark, idmc_slot *slot, int64_t claim_ms,
                       int64_t recorded)
{
    idmc_slot_end(slot, claim_ms, recorded, sf != NULL ? idm_snowflake_high_water_ms(sf) : 0);
    (void)idm_mark_close(mark, NULL);
    idm_snowflake_free(sf);
}

static int sf_take_node(PyObject *node_o, int *is_auto, uint64_t *node)
{
    *is_auto = 0;
    if (PyUnicode_Check(node_o)) {
        if (PyUnicode_CompareWithASCIIString(node_o, "auto") == 0) {
            *is_auto = 1;
            return 0;
        }
        raise_arg("node must be an int or 'auto'");
        return -1;
    }
    if (!PyLong_Check(node_o) || PyBool_Check(node_o)) {
        PyErr_Format(PyExc_TypeError, "node must be int or 'auto', not %.100s",
                     Py_TYPE(node_o)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(node_o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0 || v < 0) {
        raise_arg("node must be 0 or more, within the layout's range");
        return -1;
    }
    *node = (uint64_t)v;
    return 0;
}

static PyObject *snowflake_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"node", "layout", "max_rewind_ms", "mark", "registry", NULL};
    PyObject *node_o;
    PyObject *layout_o = NULL;
    long long max_rewind_ms = IDM_SF_DEFAULT_MAX_REWIND_MS;
    PyObject *mark_o = Py_None;
    PyObject *registry_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$LOO:Snowflake", names, &node_o, &layout_o,
                                     &max_rewind_ms, &mark_o, &registry_o)) {
        return NULL;
    }
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    idm_error err;
    error_clear(&err);
    if (layout_o != NULL && layout_o != Py_None) {
        const idm_sf_layout *lp;
        if (take_layout(layout_o, &cfg.layout, &lp) != 0) {
            return NULL;
        }
    }
    if (max_rewind_ms < 0) {
        return raise_arg("max_rewind_ms must be 0 or more, got %lld", max_rewind_ms);
    }
    cfg.max_rewind_ms = (int64_t)max_rewind_ms;
    int is_auto;
    if (sf_take_node(node_o, &is_auto, &cfg.node) != 0) {
        return NULL;
    }
    PyObject *mark_path = NULL;
    PyObject *registry_path = NULL;
    if (mark_o != Py_None && !PyUnicode_FSConverter(mark_o, &mark_path)) {
        return NULL;
    }
    if (registry_o != Py_None && !PyUnicode_FSConverter(registry_o, &registry_path)) {
        Py_XDECREF(mark_path);
        return NULL;
    }

    snowflake_object *s = (snowflake_object *)type->tp_alloc(type, 0);
    if (s == NULL) {
        Py_XDECREF(mark_path);
        Py_XDECREF(registry_path);
        return NULL;
    }
    pthread_mutex_init(&s->slot_mu, NULL);
    s->pid = getpid();
    if (idm_sf_layout_format(&cfg.layout, s->layout, sizeof s->layout) != IDM_OK) {
        snprintf(s->layout, sizeof s->layout, "?");
    }

    /* Claim, open and wait without the GIL: file I/O, and maybe a sleep. */
    int rc = IDM_OK;
    int crc = 0;
    idmc_error cerr;
    cerr.msg[0] = '\0';
    char dir[1024];
    dir[0] = '\0';
    PyThreadState *ts = PyEval_SaveThread();
    /* A node given is registered too (exactly that slot), as idmintd's
     * --node N is: two processes of this host minting as one node would
     * repeat IDs, whichever program they are. */
    {
        if (registry_path != NULL) {
            snprintf(dir, sizeof dir, "%s", PyBytes_AS_STRING(registry_path));
        } else if (idmc_local_default_dir(dir, sizeof dir) != 0) {
            dir[0] = '\0';
        }
        char holder[IDMC_SLOT_BYTES - IDMC_HOLDER_AT];
        idmx_host_holder(holder, sizeof holder, "python-idmint");
        /* The namespace is the layout: node 7 of one layout is not node 7
         * of another (as idmintd and `idmint gen` name it). */
        crc =
            dir[0] == '\0'
                ? IDMC_ERROR
                : idmc_local_claim(dir, s->layout, is_auto ? 0 : cfg.node,
                                   is_auto ? idm_sf_layout_max_node(&cfg.layout) : cfg.node,
                                   idm_sf_layout_max_unix_ms(&cfg.layout), holder, &s->slot, &cerr);
        if (crc == 0) {
            cfg.node = idmc_slot_node(s->slot);
            s->slot_claim_ms = idmc_slot_mark_ms(s->slot);
            s->slot_recorded = s->slot_claim_ms;
            cfg.resume_unix_ms = s->slot_claim_ms;
        }
    }
    if (crc == 0 && mark_path != NULL) {
        rc = idm_mark_open(&s->mark, PyBytes_AS_STRING(mark_path), NULL, &err);
        if (rc == IDM_OK && idm_mark_resume_ms(s->mark) > cfg.resume_unix_ms) {
            cfg.resume_unix_ms = idm_mark_resume_ms(s->mark);
        }
    }
    if (crc == 0 && rc == IDM_OK) {
        /* A run killed a moment ago leaves its marks up to a reserve ahead
         * of the clock: wait that out. Further ahead means the clock was
         * set back, which the generator refuses (ClockError) beyond
         * max_rewind_ms. */
        int64_t ahead = cfg.resume_unix_ms - wall_ms();
        if (ahead >= 0 && ahead <= IDM_MARK_DEFAULT_RESERVE_MS) {
            sleep_ms(ahead + 1);
        }
        rc = idm_snowflake_new(&s->sf, &cfg, &err);
        if (rc == IDM_OK && s->mark != NULL) {
            rc = idm_mark_attach_snowflake(s->mark, s->sf, &err);
        }
    }
    PyEval_RestoreThread(ts);
    Py_XDECREF(mark_path);
    Py_XDECREF(registry_path);

    if (crc != 0) {
        if (crc == IDMC_BUSY && !is_auto) {
            PyErr_Format(Error,
                         "node %llu is held on this host (registry %s): %s; two processes "
                         "minting as one node would repeat IDs",
                         (unsigned long long)cfg.node, dir, cerr.msg);
        } else if (crc == IDMC_BUSY) {
            PyErr_Format(Error, "no free snowflake node on this host (registry %s): %s", dir,
                         cerr.msg);
        } else if (dir[0] == '\0') {
            PyErr_SetString(Error, "cannot name this host's node registry; pass registry=DIR");
        } else {
            PyErr_SetString(Error, cerr.msg);
        }
        Py_DECREF(s);
        return NULL;
    }
    if (rc != IDM_OK) {
        raise_idm(rc, &err);
        Py_DECREF(s);
        return NULL;
    }
    s->node = cfg.node;
    if (s->slot != NULL) {
        /* The first mark of ours, before anything is minted. */
        error_clear(&err);
        ts = PyEval_SaveThread();
        rc = slot_raise(s, &err);
        PyEval_RestoreThread(ts);
        if (rc != IDM_OK) {
            raise_idm(rc, &err);
            Py_DECREF(s);
            return NULL;
        }
    }
    return (PyObject *)s;
}

static void snowflake_dealloc(snowflake_object *s)
{
    if (s->pid != getpid()) {
        /* Inherited across fork(): the node slot's locks and the mark file
         * are the parent's (their open file descriptions are shared), so
         * the child neither lowers nor unlocks them; the handles stay
         * allocated until the child exits. */
        s->sf = NULL;
        s->mark = NULL;
        s->slot = NULL;
    }
    idm_snowflake *sf = s->sf;
    idm_mark *mark = s->mark;
    idmc_slot *slot = s->slot;
    s->sf = NULL;
    s->mark = NULL;
    s->slot = NULL;
    if (sf != NULL || mark != NULL || slot != NULL) {
        PyThreadState *ts = PyEval_SaveThread();
        sf_release(sf, mark, slot, s->slot_claim_ms, s->slot_recorded);
        PyEval_RestoreThread(ts);
    }
    if (s->pid == getpid()) {
        /* In a child, another thread of the parent may have held it. */
        pthread_mutex_destroy(&s->slot_mu);
    }
    Py_TYPE(s)->tp_free((PyObject *)s);
}

PyDoc_STRVAR(sf_next_doc,
             "next($self, /)\n--\n\n-> int: the next ID, greater than every one before.");

static PyObject *snowflake_next(snowflake_object *s, PyObject *noargs)
{
    (void)noargs;
    uint64_t id;
    if (sf_mint(s, &id, 1, 0) != 0) {
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(id);
}

PyDoc_STRVAR(sf_next_n_doc,
             "next_n($self, n, /)\n--\n\n"
             "-> list[int]: n IDs in increasing order, minted with the GIL released.");

static PyObject *snowflake_next_n(snowflake_object *s, PyObject *arg)
{
    Py_ssize_t n;
    if (take_count(arg, &n) != 0) {
        return NULL;
    }
    uint64_t *buf = PyMem_RawMalloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    if (buf == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *list = NULL;
    if (n == 0 || sf_mint(s, buf, (size_t)n, 1) == 0) {
        list = PyList_New(n);
        for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
            PyObject *o = PyLong_FromUnsignedLongLong(buf[i]);
            if (o == NULL) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, i, o);
        }
    }
    PyMem_RawFree(buf);
    return list;
}

PyDoc_STRVAR(sf_close_doc,
             "close($self, /)\n--\n\n"
             "Gives back the node slot (node='auto') and closes the mark file, each\n"
             "lowered to the last time used, so that the next holder need not wait.\n"
             "Later calls raise idmint.Error. Called by the with statement and when the\n"
             "object is collected; closing twice does nothing.");

static PyObject *snowflake_close(snowflake_object *s, PyObject *noargs)
{
    (void)noargs;
    if (s->active > 0) {
        PyErr_SetString(Error, "the Snowflake generator is in use by another thread");
        return NULL;
    }
    if (s->pid != getpid()) {
        s->sf = NULL; /* the parent's: see snowflake_dealloc */
        s->mark = NULL;
        s->slot = NULL;
        Py_RETURN_NONE;
    }
    idm_snowflake *sf = s->sf;
    idm_mark *mark = s->mark;
    idmc_slot *slot = s->slot;
    s->sf = NULL;
    s->mark = NULL;
    s->slot = NULL;
    PyThreadState *ts = PyEval_SaveThread();
    sf_release(sf, mark, slot, s->slot_claim_ms, s->slot_recorded);
    PyEval_RestoreThread(ts);
    Py_RETURN_NONE;
}

static PyObject *snowflake_enter(PyObject *s, PyObject *noargs)
{
    (void)noargs;
    Py_INCREF(s);
    return s;
}

static PyObject *snowflake_exit(snowflake_object *s, PyObject *args)
{
    (void)args;
    return snowflake_close(s, NULL);
}

static PyObject *snowflake_get_layout(snowflake_object *s, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(s->layout);
}

static PyObject *snowflake_get_node(snowflake_object *s, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(s->node);
}

static PyObject *snowflake_get_high_water_ms(snowflake_object *s, void *closure)
{
    (void)closure;
    if (sf_usable(s) != 0) {
        return NULL;
    }
    return PyLong_FromLongLong(idm_snowflake_high_water_ms(s->sf));
}

static PyObject *snowflake_repr(snowflake_object *s)
{
    return PyUnicode_FromFormat("idmint.Snowflake(%llu, layout='%s'%s)",
                                (unsigned long long)s->node, s->layout,
                                s->sf == NULL ? ", closed" : "");
}

static PyMethodDef snowflake_methods[] = {
    {"next", (PyCFunction)snowflake_next, METH_NOARGS, sf_next_doc},
    {"next_n", (PyCFunction)snowflake_next_n, METH_O, sf_next_n_doc},
    {"close", (PyCFunction)snowflake_close, METH_NOARGS, sf_close_doc},
    {"__enter__", snowflake_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)snowflake_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef snowflake_getset[] = {
    {"layout", (getter)snowflake_get_layout, NULL,
     "The layout: its preset name, or the canonical spec.", NULL},
    {"node", (getter)snowflake_get_node, NULL, "The node number the IDs carry.", NULL},
    {"high_water_ms", (getter)snowflake_get_high_water_ms, NULL,
     "The latest clock reading used, in Unix ms.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(
    snowflake_doc,
    "Snowflake(node, layout='twitter', *, max_rewind_ms=10, mark=None, registry=None)\n--\n\n"
    "A 64-bit Snowflake ID generator for one node. layout is a preset (twitter,\n"
    "discord, instagram, sonyflake, sonyflake2, baidu, safe53) or a spec such as\n"
    "'time=41,node=10,seq=12,unit=1ms,epoch=1735689600000'. IDs are strictly\n"
    "increasing; the object may be shared by threads.\n\n"
    "node: an int within the layout's range, or 'auto' to lease a free node from\n"
    "this host's registry (/run/idmint/nodes, or registry=DIR) as idmintd and\n"
    "`idmint gen --node auto` do. A node given is registered there too: either\n"
    "way no two processes on the host hold one node (a node held by another\n"
    "raises idmint.Error naming its holder), and the IDs start above everything\n"
    "earlier holders of the node minted.\n\n"
    "max_rewind_ms: a clock that steps back by at most this much is waited out;\n"
    "further raises idmint.ClockError (its rewind_ms says how far).\n\n"
    "mark: a file path: the library's durable time mark (crash safety). No ID is\n"
    "returned before a mark at or above its time is on disk, and a new generator\n"
    "on the same file starts above it, so a process killed and restarted with its\n"
    "clock set back never repeats an ID (it raises ClockError until the clock has\n"
    "passed the mark, or waits when max_rewind_ms allows). One process at a time\n"
    "uses a mark file.\n\n"
    "Use it as a context manager, or call close(), to give back the node and\n"
    "lower the mark at once. A generator inherited across fork() refuses to mint\n"
    "in the child (idmint.Error): parent and child would share its node.");

static PyTypeObject snowflake_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "idmint.Snowflake",
    .tp_basicsize = sizeof(snowflake_object),
    .tp_dealloc = (destructor)snowflake_dealloc,
    .tp_repr = (reprfunc)snowflake_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = snowflake_doc,
    .tp_methods = snowflake_methods,
    .tp_getset = snowflake_getset,
    .tp_new = snowflake_new,
};

/* ---- the module -------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    {"uuid7", py_uuid7, METH_NOARGS, uuid7_doc},
    {"uuid4", py_uuid4, METH_NOARGS, uuid4_doc},
    {"uuid7_n", py_uuid7_n, METH_O, uuid7_n_doc},
    {"ulid", py_ulid, METH_NOARGS, ulid_doc},
    {"ksuid", py_ksuid, METH_NOARGS, ksuid_doc},
    {"typeid", py_typeid, METH_O, typeid_doc},
    {"token", (PyCFunction)(void (*)(void))py_token, METH_VARARGS | METH_KEYWORDS, token_doc},
    {"traceparent", py_traceparent, METH_NOARGS, traceparent_doc},
    {"inspect", (PyCFunction)(void (*)(void))py_inspect, METH_VARARGS | METH_KEYWORDS, inspect_doc},
    {"convert", (PyCFunction)(void (*)(void))py_convert, METH_VARARGS | METH_KEYWORDS, convert_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "idmint._idmint",
    .m_doc = "The C extension of the idmint package (libidmint); import idmint instead.",
    .m_size = -1,
    .m_methods = module_methods,
};

/* The offset of a slot of uuid.UUID (a T_OBJECT_EX member descriptor), or
 * -1 when the class is not laid out that way. */
static Py_ssize_t slot_offset(const char *name)
{
    PyObject *d = PyDict_GetItemString(uuid_type->tp_dict, name); /* borrowed */
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    return m->type == T_OBJECT_EX && (m->flags & READONLY) == 0 ? m->offset : -1;
}

static int load_uuid(void)
{
    PyObject *mod = PyImport_ImportModule("uuid");
    if (mod == NULL) {
        return -1;
    }
    PyObject *t = PyObject_GetAttrString(mod, "UUID");
    PyObject *safe = PyObject_GetAttrString(mod, "SafeUUID");
    Py_DECREF(mod);
    if (t == NULL || safe == NULL || !PyType_Check(t)) {
        Py_XDECREF(t);
        Py_XDECREF(safe);
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ImportError, "uuid.UUID is not a class");
        }
        return -1;
    }
    uuid_type = (PyTypeObject *)t;
    safe_unknown = PyObject_GetAttrString(safe, "unknown");
    Py_DECREF(safe);
    if (safe_unknown == NULL) {
        return -1;
    }
    uuid_int_at = slot_offset("int");
    uuid_safe_at = slot_offset("is_safe");
    if (uuid_int_at < 0 || uuid_safe_at < 0) {
        uuid_int_at = -1; /* UUID(int=...) then */
    }
    return 0;
}

static PyObject *new_exception(PyObject *m, const char *name, const char *doc, PyObject *bases,
                               const char *attrs)
{
    PyObject *dict = PyDict_New();
    if (dict == NULL) {
        return NULL;
    }
    /* Class-level defaults for the attributes each instance gets. */
    for (const char *a = attrs; *a != '\0'; a += strlen(a) + 1) {
        PyObject *zero = PyLong_FromLong(0);
        if (zero == NULL || PyDict_SetItemString(dict, a, zero) != 0) {
            Py_XDECREF(zero);
            Py_DECREF(dict);
            return NULL;
        }
        Py_DECREF(zero);
    }
    char full[64];
    snprintf(full, sizeof full, "idmint.%s", name);
    PyObject *e = PyErr_NewExceptionWithDoc(full, doc, bases, dict);
    Py_DECREF(dict);
    if (e == NULL) {
        return NULL;
    }
    Py_INCREF(e);
    if (PyModule_AddObject(m, name, e) != 0) {
        Py_DECREF(e);
        Py_DECREF(e);
        return NULL;
    }
    return e;
}

PyMODINIT_FUNC PyInit__idmint(void);

PyMODINIT_FUNC PyInit__idmint(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    Error = new_exception(m, "Error",
                          "An idmint failure: .code is the library's IDM_E* code, the message "
                          "its reason.",
                          PyExc_Exception, "code\0");
    if (Error == NULL) {
        goto fail;
    }
    PyObject *bases = PyTuple_Pack(2, Error, PyExc_ValueError);
    if (bases == NULL) {
        goto fail;
    }
    ParseError = new_exception(m, "ParseError",
                               "Bad input: text that is not a valid ID, or a bad argument (a "
                               "ValueError). .offset is the 0-based byte offset of the "
                               "offending character for parse errors.",
                               bases, "code\0offset\0");
    Py_DECREF(bases);
    if (ParseError == NULL) {
        goto fail;
    }
    ClockError = new_exception(m, "ClockError",
                               "The clock moved back further than the generator tolerates: "
                               ".rewind_ms says how far.",
                               Error, "code\0rewind_ms\0");
    if (ClockError == NULL) {
        goto fail;
    }
    if (load_uuid() != 0) {
        goto fail;
    }
    PyObject *json = PyImport_ImportModule("json");
    if (json == NULL) {
        goto fail;
    }
    json_loads = PyObject_GetAttrString(json, "loads");
    Py_DECREF(json);
    if (json_loads == NULL) {
        goto fail;
    }
    if (PyType_Ready(&snowflake_type) != 0) {
        goto fail;
    }
    Py_INCREF(&snowflake_type);
    if (PyModule_AddObject(m, "Snowflake", (PyObject *)&snowflake_type) != 0) {
        Py_DECREF(&snowflake_type);
        goto fail;
    }
    idm_error err;
    error_clear(&err);
    int rc = idm_gen_new(&shared_gen, NULL, &err);
    if (rc != IDM_OK) {
        PyErr_Format(PyExc_ImportError, "idmint: cannot make the generator: %s", reason(rc, &err));
        goto fail;
    }
    return m;

fail:
    Py_DECREF(m);
    return NULL;
}
