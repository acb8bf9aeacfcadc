/*
 * audit_check.c - the checks of `idmint audit` (audit.h; docs/audit.md
 * says what each finding means and where it can be wrong).
 *
 * Every ID is parsed by the library (idm_format_parse, idm_sf_decode) and
 * kept as a record: its bytes in the ID's own sort order (a snowflake's
 * 8 big-endian bytes, a UUID's or ULID's 16, a KSUID's 20) and the 32-bit
 * ordinal of its line. Duplicates are found at the end by sorting the
 * records in place (an MSD radix sort: no second array, so 10 M
 * snowflakes take 10 M x 12 bytes) and walking the runs of equal keys;
 * there the two earliest ordinals of a run are the first places.
 *
 * What needs the input's order (--order node or input):
 *
 *   - out of order, as the IDs arrive: an ID below its node's highest so
 *     far in the same input (with --order input: below the previous
 *     line's);
 *   - the shared-node signature, after the sort, when time is the
 *     layout's top field (then one unit's IDs are together): the IDs of
 *     one (node, unit) taken in input order, where a single writer's
 *     sequence only rises. A run that starts again below the highest
 *     sequence seen before it is a "restart": a second writer counting
 *     the same unit, in a block or woven between the first's IDs. A lone
 *     copy of an earlier ID (a run of one duplicate) is left to the
 *     duplicates. Across inputs, one node's ID ranges in two inputs that
 *     overlap are an "overlap" (two writers, one file each);
 *   - a sequence that overflowed: the same, when the highest sequence
 *     before the run was the layout's largest (the generator wrapped
 *     instead of waiting); or, as the IDs arrive, an ID that is the
 *     previous line's plus one sequence step carried out of a full
 *     sequence into the node field.
 *
 * No window limits these: a second writer whose clock lags by minutes is
 * seen as soon as both minted in one unit. docs/audit.md says where they
 * can be wrong.
 */
#include "audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- setup ---------------------------------------------------------------- */

int audit_init(audit *a, const audit_opts *o)
{
    memset(a, 0, sizeof *a);
    a->o = *o;
    a->key_len = o->fmt->id == IDM_FORMAT_SNOWFLAKE ? 8 : o->fmt->id == IDM_FORMAT_KSUID ? 20 : 16;
    a->stride = a->key_len + sizeof(uint32_t);
    a->min_ms = INT64_MAX;
    a->max_ms = INT64_MIN;
    a->next_ord = 1;
    if (o->fmt->id == IDM_FORMAT_SNOWFLAKE) {
        a->seq_max = (UINT64_C(1) << o->layout.bits[IDM_SF_SEQ]) - 1;
    }
    for (int f = 0; f < AUDIT_N_FINDINGS; f++) {
        if (o->show > 0) {
            a->f[f].events = calloc(o->show, sizeof(audit_event));
            if (a->f[f].events == NULL) {
                audit_free(a);
                return ENOMEM;
            }
        }
    }
    return 0;
}

void audit_free(audit *a)
{
    free(a->recs);
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        free(a->inputs[i].name);
    }
    free(a->inputs);
    for (size_t i = 0; i < a->n_nodes; i++) {
        free(a->nodes[i].buckets);
    }
    free(a->nodes);
    free(a->node_index);
    free(a->spans);
    for (int f = 0; f < AUDIT_N_FINDINGS; f++) {
        free(a->f[f].events);
    }
    memset(a, 0, sizeof *a);
}

/* Grows *p (elements of size, *cap of them) to hold one more. */
static int grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) {
        return 0;
    }
    size_t want = *cap < 16 ? 16 : *cap * 2;
    if (want > SIZE_MAX / size) {
        return ENOMEM;
    }
    void *q = realloc(*(void **)p, want * size);
    if (q == NULL) {
        return ENOMEM;
    }
    *(void **)p = q;
    *cap = want;
    return 0;
}

int audit_begin_input(audit *a, const char *name, bool db)
{
    size_t cap = a->cap_inputs;
    if (grow(&a->inputs, &cap, a->n_inputs, sizeof *a->inputs) != 0) {
        return ENOMEM;
    }
    a->cap_inputs = (uint32_t)cap;
    char *copy = strdup(name);
    if (copy == NULL) {
        return ENOMEM;
    }
    audit__flush_spans(a);
    if (a->n_inputs > 0 && a->next_ord == AUDIT_MAX_LINES) {
        free(copy);
        return EOVERFLOW;
    }
    audit_input *in = &a->inputs[a->n_inputs++];
    in->name = copy;
    in->base = a->next_ord - 1;
    in->db = db;
    a->in_have = false;
    return 0;
}

void audit_place(const audit *a, uint32_t ord, char *dst, size_t cap)
{
    uint32_t lo = 0, hi = a->n_inputs;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a->inputs[mid].base < ord) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    const audit_input *in = &a->inputs[lo];
    snprintf(dst, cap, in->db ? "%s row %lu" : "%s:%lu", in->name, (unsigned long)(ord - in->base));
}

/* ---- keys ----------------------------------------------------------------- */

uint64_t audit__be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

void audit__key_decode(const audit *a, const uint8_t *key, audit_key_info *k)
{
    memset(k, 0, sizeof *k);
    switch (a->o.fmt->id) {
    case IDM_FORMAT_SNOWFLAKE: {
        idm_error err;
        if (idm_sf_decode(&a->o.layout, audit__be64(key), &k->parts, &err) == IDM_OK) {
            k->has_time = true;
            k->ms = k->parts.unix_ms;
        }
        break;
    }
    case IDM_FORMAT_KSUID: {
        idm_ksuid ks;
        memcpy(ks.bytes, key, sizeof ks.bytes);
        k->has_time = true;
        k->ms = idm_ksuid_unix_ms(&ks);
        break;
    }
    case IDM_FORMAT_ULID: {
        idm_ulid u;
        memcpy(u.bytes, key, sizeof u.bytes);
        k->has_time = true;
        k->ms = idm_ulid_unix_ms(&u);
        break;
    }
    default: {
        idm_uuid u;
        idm_uuid_fields fl;
        memcpy(u.bytes, key, sizeof u.bytes);
        idm_uuid_decode(&u, &fl);
        k->has_time = fl.has_time != 0;
        k->ms = fl.unix_ms;
        break;
    }
    }
}

/* The text of a key (prefix: a TypeID's). Returns an IDM_* code. */
static int format_key(const audit *a, const uint8_t *key, const char *prefix, char *dst, size_t cap)
{
    switch (a->o.fmt->id) {
    case IDM_FORMAT_SNOWFLAKE:
        return idm_sf_format_decimal(audit__be64(key), dst, cap) > 0 ? IDM_OK : IDM_ENOSPC;
    case IDM_FORMAT_KSUID: {
        idm_ksuid ks;
        memcpy(ks.bytes, key, sizeof ks.bytes);
        return idm_ksuid_format(&ks, dst, cap);
    }
    case IDM_FORMAT_ULID: {
        idm_ulid u;
        memcpy(u.bytes, key, sizeof u.bytes);
        return idm_ulid_format(&u, dst, cap);
    }
    case IDM_FORMAT_TYPEID: {
        idm_uuid u;
        memcpy(u.bytes, key, sizeof u.bytes);
        return idm_typeid_format(prefix, strlen(prefix), &u, dst, cap, NULL);
    }
    default: {
        idm_uuid u;
        memcpy(u.bytes, key, sizeof u.bytes);
        return idm_uuid_format(&u, dst, cap);
    }
    }
}

void audit_key_text(const audit *a, const uint8_t *key, char *dst, size_t cap)
{
    if (format_key(a, key, a->typeid_prefix, dst, cap) != IDM_OK) {
        snprintf(dst, cap, "?");
    }
}

/* The text of binary column bytes, so that one parser (the library's, by
 * format) judges both. */
static int binary_text(const audit *a, const uint8_t *b, size_t len, char *dst, size_t cap,
                       char *why, size_t why_cap)
{
    if (len != a->key_len) {
        snprintf(why, why_cap, "a %s is %zu bytes in binary, got %zu", a->o.fmt->name, a->key_len,
                 len);
        return -1;
    }
    int rc = format_key(a, b, "", dst, cap);
    if (rc != IDM_OK) {
        snprintf(why, why_cap, "%s", idm_strerror(rc));
        return -1;
    }
    return 0;
}

/* ---- nodes ---------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return x;
}

audit_node *audit__find_node(const audit *a, uint64_t node)
{
    if (a->index_cap == 0) {
        return NULL;
    }
    for (size_t i = mix(node) & (a->index_cap - 1);; i = (i + 1) & (a->index_cap - 1)) {
        uint32_t v = a->node_index[i];
        if (v == 0) {
            return NULL;
        }
        if (a->nodes[v - 1].node == node) {
            return &a->nodes[v - 1];
        }
    }
}

static int index_put(uint32_t *index, size_t cap, uint64_t node, uint32_t value)
{
    size_t i = mix(node) & (cap - 1);
    while (index[i] != 0) {
        i = (i + 1) & (cap - 1);
    }
    index[i] = value;
    return 0;
}

static audit_node *get_node(audit *a, uint64_t node)
{
    audit_node *n = audit__find_node(a, node);
    if (n != NULL) {
        return n;
    }
    if (a->n_nodes >= UINT32_MAX - 1 ||
        grow(&a->nodes, &a->cap_nodes, a->n_nodes, sizeof *a->nodes) != 0) {
        return NULL;
    }
    if ((a->n_nodes + 1) * 2 > a->index_cap) {
        size_t cap = a->index_cap == 0 ? 64 : a->index_cap * 2;
        uint32_t *index = calloc(cap, sizeof *index);
        if (index == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < a->n_nodes; i++) {
            index_put(index, cap, a->nodes[i].node, (uint32_t)i + 1);
        }
        free(a->node_index);
        a->node_index = index;
        a->index_cap = cap;
    }
    n = &a->nodes[a->n_nodes];
    memset(n, 0, sizeof *n);
    n->node = node;
    n->first_ms = INT64_MAX;
    n->last_ms = INT64_MIN;
    index_put(a->node_index, a->index_cap, node, (uint32_t)a->n_nodes + 1);
    a->n_nodes++;
    return n;
}

/* ---- findings ------------------------------------------------------------- */

/* Counts one occurrence of finding f at ord; returns the event to fill
 * when it is among the --show earliest places (by ordinal: the checks
 * done after the sort find them in another order), else NULL. */
audit_event *audit__note(audit *a, int f, uint32_t ord)
{
    audit_finding *F = &a->f[f];
    F->count++;
    if (a->o.show == 0) {
        return NULL;
    }
    uint32_t i = F->n_events;
    if (i == a->o.show) {
        if (F->events[i - 1].ord <= ord) {
            return NULL;
        }
        i--;
    } else {
        F->n_events++;
    }
    while (i > 0 && F->events[i - 1].ord > ord) {
        F->events[i] = F->events[i - 1];
        i--;
    }
    audit_event *e = &F->events[i];
    memset(e, 0, sizeof *e);
    e->ord = ord;
    return e;
}

/* The earlier place an event conflicts with. */
void audit__note_prev(const audit *a, audit_event *e, uint32_t ord2, const uint8_t *key2)
{
    e->ord2 = ord2;
    memcpy(e->key2, key2, a->key_len);
}

static void flush_span(audit *a, audit_node *n)
{
    if (!n->have || a->o.fmt->id != IDM_FORMAT_SNOWFLAKE || a->o.order == AUDIT_ORDER_NONE) {
        return;
    }
    if (grow(&a->spans, &a->cap_spans, a->n_spans, sizeof *a->spans) != 0) {
        a->spans_lost = true; /* reported: the overlap check is then incomplete */
        return;
    }
    audit_span *s = &a->spans[a->n_spans++];
    s->node = (uint32_t)(n - a->nodes);
    s->input = n->input;
    memcpy(s->min_key, n->min_key, 8);
    memcpy(s->max_key, n->max_key, 8);
    s->min_ord = n->min_ord;
    s->max_ord = n->max_ord;
}

void audit__flush_spans(audit *a)
{
    for (size_t i = 0; i < a->n_nodes; i++) {
        flush_span(a, &a->nodes[i]);
        a->nodes[i].have = false;
    }
}

/* A snowflake's order in its node: the node's frontier (last_key,
 * last_ord) is its highest ID so far in this input. Returns whether the
 * ID is below it (equal IDs are duplicates, counted at the end). */
static bool snowflake_order(audit_node *n, const uint8_t *key, uint32_t ord)
{
    int cmp = memcmp(key, n->last_key, 8);
    if (cmp > 0) {
        memcpy(n->last_key, key, 8);
        n->last_ord = ord;
    }
    return cmp < 0;
}

/* Records the ID for its node: counts, times, and the order checks. */
static int node_add(audit *a, const uint8_t *key, const audit_key_info *k, uint32_t ord,
                    bool in_range)
{
    bool sf = a->o.fmt->id == IDM_FORMAT_SNOWFLAKE;
    audit_node *n = get_node(a, sf ? k->parts.node : 0);
    if (n == NULL) {
        return ENOMEM;
    }
    uint32_t input = a->n_inputs - 1;
    if (n->have && n->input != input) {
        flush_span(a, n);
        n->have = false;
    }
    n->count++;
    if (k->has_time && in_range) {
        if (k->ms < n->first_ms) {
            n->first_ms = k->ms;
        }
        if (k->ms > n->last_ms) {
            n->last_ms = k->ms;
        }
    }
    bool back = false;
    if (!n->have) {
        n->have = true;
        n->input = input;
        memcpy(n->min_key, key, a->key_len < 8 ? a->key_len : 8);
        memcpy(n->max_key, key, a->key_len < 8 ? a->key_len : 8);
        n->min_ord = n->max_ord = ord;
        memcpy(n->last_key, key, a->key_len);
        n->last_ord = ord;
    } else if (sf) {
        if (a->o.order != AUDIT_ORDER_NONE) {
            back = snowflake_order(n, key, ord);
        }
        if (memcmp(key, n->min_key, 8) < 0) {
            memcpy(n->min_key, key, 8);
            n->min_ord = ord;
        }
        if (memcmp(key, n->max_key, 8) > 0) {
            memcpy(n->max_key, key, 8);
            n->max_ord = ord;
        }
    }
    /* Out of order within the input as a whole (--order input), else per
     * node (snowflakes). Equal keys are duplicates, counted at the end. */
    if (a->o.order == AUDIT_ORDER_INPUT && a->in_have) {
        back = memcmp(key, a->in_last_key, a->key_len) < 0;
    }
    if (back) {
        n->out_of_order++;
        audit_event *e = audit__note(a, AUDIT_F_OUT_OF_ORDER, ord);
        if (e != NULL) {
            memcpy(e->key, key, a->key_len);
            e->node = n->node;
            if (a->o.order == AUDIT_ORDER_INPUT) {
                audit__note_prev(a, e, a->in_last_ord, a->in_last_key);
            } else {
                audit__note_prev(a, e, n->last_ord, n->last_key);
            }
        }
    }
    return 0;
}

/* A full sequence carried into the field above: this ID is the previous
 * line's plus one sequence step, and the previous line's sequence was the
 * largest (a generator that adds 1 to the whole ID instead of waiting). */
static void check_carry(audit *a, uint64_t id, const idm_sf_parts *p, uint32_t ord,
                        const uint8_t *key)
{
    const idm_sf_layout *l = &a->o.layout;
    /* Only a carry into the node field is seen: where the time field sits
     * right above the sequence, the carry is the next unit's first ID -
     * what a generator that waits mints too. */
    if (a->in_have && a->in_last_seq == a->seq_max && p->node != a->in_last_node &&
        id - a->in_last_id == UINT64_C(1) << l->shift[IDM_SF_SEQ] && p->sequence == 0) {
        audit_event *e = audit__note(a, AUDIT_F_SEQ_OVERFLOW, ord);
        if (e != NULL) {
            memcpy(e->key, key, 8);
            e->node = p->node;
            audit__note_prev(a, e, a->in_last_ord, a->in_last_key);
        }
        audit_node *n = audit__find_node(a, p->node);
        if (n != NULL) {
            n->overflows++;
        }
    }
    a->in_last_id = id;
    a->in_last_seq = p->sequence;
    a->in_last_node = p->node;
}

/* ---- one line ------------------------------------------------------------- */

int audit_skip_line(audit *a)
{
    if (a->next_ord == AUDIT_MAX_LINES) {
        return EOVERFLOW;
    }
    a->next_ord++;
    return 0;
}

static void note_invalid(audit *a, uint32_t ord, const char *why)
{
    audit_event *e = audit__note(a, AUDIT_F_INVALID, ord);
    if (e != NULL) {
        snprintf(e->why, sizeof e->why, "%s", why);
    }
}

int audit_add(audit *a, const char *text, size_t len, bool binary, bool *invalid, char *why,
              size_t why_cap)
{
    *invalid = false;
    if (a->next_ord == AUDIT_MAX_LINES) {
        return EOVERFLOW;
    }
    uint32_t ord = a->next_ord++;
    a->lines++;
    char buf[IDM_FORMAT_TEXT_MAX + 1];
    if (binary) {
        if (binary_text(a, (const uint8_t *)text, len, buf, sizeof buf, why, why_cap) != 0) {
            *invalid = true;
            note_invalid(a, ord, why);
            return 0;
        }
        text = buf;
        len = strlen(buf);
    }
    idm_format_value v;
    idm_error err = {0};
    int rc = idm_format_parse(a->o.fmt, text, len, &v, &err);
    uint8_t key[AUDIT_KEY_MAX];
    audit_key_info k;
    if (rc == IDM_OK && a->o.fmt->id == IDM_FORMAT_SNOWFLAKE) {
        put_be64(key, v.number);
        memset(&k, 0, sizeof k);
        rc = idm_sf_decode(&a->o.layout, v.number, &k.parts, &err);
        k.has_time = true;
        k.ms = k.parts.unix_ms;
    } else if (rc == IDM_OK) {
        memcpy(key, v.bytes, a->key_len);
        audit__key_decode(a, key, &k);
    }
    if (rc != IDM_OK) {
        snprintf(why, why_cap, "%s", err.msg[0] != '\0' ? err.msg : idm_strerror(rc));
        *invalid = true;
        note_invalid(a, ord, why);
        return 0;
    }
    if (a->o.fmt->id == IDM_FORMAT_TYPEID && !a->have_prefix) {
        snprintf(a->typeid_prefix, sizeof a->typeid_prefix, "%s", v.prefix);
        a->have_prefix = true;
    }
    if (grow(&a->recs, &a->cap_recs, a->n_recs, a->stride) != 0) {
        return ENOMEM;
    }
    uint8_t *rec = a->recs + a->n_recs * a->stride;
    memcpy(rec, key, a->key_len);
    memcpy(rec + a->key_len, &ord, sizeof ord);
    a->n_recs++;

    /* Times: from the future, or before the epoch (docs/audit.md). */
    bool in_range = true;
    if (k.has_time) {
        if (k.ms > a->o.now_ms && k.ms - a->o.now_ms > a->o.max_ahead_ms) {
            in_range = false;
            audit_event *e = audit__note(a, AUDIT_F_FUTURE, ord);
            if (e != NULL) {
                memcpy(e->key, key, a->key_len);
                e->node = k.parts.node;
                e->value = k.ms - a->o.now_ms;
            }
        }
        bool zero = (a->o.fmt->id == IDM_FORMAT_SNOWFLAKE && k.parts.time_units == 0) ||
                    (a->o.fmt->id == IDM_FORMAT_KSUID && k.ms == (int64_t)IDM_KSUID_EPOCH_S * 1000);
        if (zero || k.ms < a->o.not_before_ms) {
            in_range = false;
            audit_event *e = audit__note(a, AUDIT_F_BEFORE_EPOCH, ord);
            if (e != NULL) {
                memcpy(e->key, key, a->key_len);
                e->node = k.parts.node;
                e->value = k.ms;
            }
        }
        if (in_range) {
            if (k.ms < a->min_ms) {
                a->min_ms = k.ms;
            }
            if (k.ms > a->max_ms) {
                a->max_ms = k.ms;
            }
        }
    }
    if (node_add(a, key, &k, ord, in_range) != 0) {
        return ENOMEM;
    }
    if (a->o.fmt->id == IDM_FORMAT_SNOWFLAKE && a->o.order != AUDIT_ORDER_NONE) {
        check_carry(a, v.number, &k.parts, ord, key);
    }
    memcpy(a->in_last_key, key, a->key_len);
    a->in_last_ord = ord;
    a->in_have = true;
    return 0;
}

bool audit_failed(const audit *a)
{
    for (int f = 0; f < AUDIT_N_FINDINGS; f++) {
        if (f == AUDIT_F_INVALID && a->o.skip_invalid) {
            continue;
        }
        if (a->f[f].count > 0) {
            return true;
        }
    }
    return false;
}

const char *audit_finding_name(int f)
{
    static const char *const names[AUDIT_N_FINDINGS] = {
        "duplicates", "shared_node",  "out_of_order", "sequence_overflow",
        "future",     "before_epoch", "invalid"};
    return f >= 0 && f < AUDIT_N_FINDINGS ? names[f] : "?";
}
