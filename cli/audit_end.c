/*
 * audit_end.c - the checks of `idmint audit` made once everything is read
 * (audit.h, audit_finish): the records sorted in place, the duplicates,
 * the shared-node signature and wrapped sequences of each (node, unit),
 * the overlaps of one node's ranges across inputs, and the rate buckets.
 * audit_check.c's file comment says what each check means.
 */
#include "audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- records -------------------------------------------------------------- */

static uint32_t rec_ord(const audit *a, const uint8_t *rec)
{
    uint32_t ord;
    memcpy(&ord, rec + a->key_len, sizeof ord);
    return ord;
}

static void swap_rec(uint8_t *x, uint8_t *y, size_t stride)
{
    uint8_t t[AUDIT_KEY_MAX + 4];
    memcpy(t, x, stride);
    memcpy(x, y, stride);
    memcpy(y, t, stride);
}

/* Sorts n records by their key bytes from depth on: American flag sort
 * (in place, one byte per level), insertion sort for small runs. */
static void sort_recs(uint8_t *base, size_t n, size_t stride, size_t depth, size_t key_len)
{
    while (n > 32 && depth < key_len) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) {
            count[base[i * stride + depth]]++;
        }
        if (count[base[depth]] == n) {
            depth++;
            continue;
        }
        size_t start[256], next[256];
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            start[b] = sum;
            next[b] = sum;
            sum += count[b];
        }
        for (int b = 0; b < 256; b++) {
            while (next[b] < start[b] + count[b]) {
                uint8_t v = base[next[b] * stride + depth];
                if (v == b) {
                    next[b]++;
                } else {
                    swap_rec(base + next[b] * stride, base + next[v] * stride, stride);
                    next[v]++;
                }
            }
        }
        for (int b = 0; b < 256; b++) {
            if (count[b] > 1) {
                sort_recs(base + start[b] * stride, count[b], stride, depth + 1, key_len);
            }
        }
        return;
    }
    if (depth >= key_len) {
        return;
    }
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0; j--) {
            uint8_t *p = base + (j - 1) * stride;
            if (memcmp(p + depth, p + stride + depth, key_len - depth) <= 0) {
                break;
            }
            swap_rec(p, p + stride, stride);
        }
    }
}

/* ---- the end -------------------------------------------------------------- */

/* A duplicate run found by the sort: listed by the place of its second
 * occurrence (where it became a duplicate). */
static void note_duplicate(audit *a, const uint8_t *key, uint32_t first, uint32_t second,
                           uint64_t times)
{
    a->distinct_dups++;
    a->f[AUDIT_F_DUPLICATE].count += times - 2; /* audit__note() counts one */
    audit_event *e = audit__note(a, AUDIT_F_DUPLICATE, second);
    if (e == NULL) {
        return;
    }
    e->ord2 = first;
    memcpy(e->key, key, a->key_len);
    memcpy(e->key2, key, a->key_len);
    e->value = (int64_t)times;
    if (a->o.fmt->id == IDM_FORMAT_SNOWFLAKE) {
        audit_key_info k;
        audit__key_decode(a, key, &k);
        e->node = k.parts.node;
    }
}

static void find_duplicates(audit *a)
{
    sort_recs(a->recs, a->n_recs, a->stride, 0, a->key_len);
    size_t i = 0;
    while (i < a->n_recs) {
        const uint8_t *r = a->recs + i * a->stride;
        size_t j = i + 1;
        uint32_t first = rec_ord(a, r), second = UINT32_MAX;
        while (j < a->n_recs && memcmp(a->recs + j * a->stride, r, a->key_len) == 0) {
            uint32_t o = rec_ord(a, a->recs + j * a->stride);
            if (o < first) {
                second = first;
                first = o;
            } else if (o < second) {
                second = o;
            }
            j++;
        }
        if (j - i > 1) {
            note_duplicate(a, r, first, second, j - i);
            if (a->o.fmt->id == IDM_FORMAT_SNOWFLAKE) {
                audit_key_info k;
                audit__key_decode(a, r, &k);
                audit_node *n = audit__find_node(a, k.parts.node);
                if (n != NULL) {
                    n->dups += j - i - 1;
                }
            } else if (a->n_nodes > 0) {
                a->nodes[0].dups += j - i - 1;
            }
        }
        i = j;
    }
}

/* One ID of a time unit, for check_units. */
typedef struct unit_rec {
    uint64_t node, seq;
    uint32_t ord;
    bool dup;   /* an ID seen earlier in the input */
    size_t idx; /* the record's index in recs */
} unit_rec;

static int unit_rec_cmp(const void *x, const void *y)
{
    const unit_rec *s = x, *t = y;
    if (s->node != t->node) {
        return s->node < t->node ? -1 : 1;
    }
    return s->ord < t->ord ? -1 : s->ord > t->ord;
}

/* The IDs of one (node, unit) in input order, g[0..n-1]: the unit's
 * size, and (when the input promises order) each run of IDs that starts
 * below the highest sequence before it - the unit minted again, by a
 * second writer, or, after the largest sequence, an overflow that
 * wrapped. A lone copy of an earlier ID (a run of one duplicate) is only
 * a duplicate: a line logged twice or a retried insert looks so. */
static void check_group(audit *a, const unit_rec *g, size_t n, uint64_t unit)
{
    audit_node *nd = audit__find_node(a, g[0].node);
    if (nd == NULL) {
        return;
    }
    if (n > nd->busiest) {
        nd->busiest = n;
        nd->busiest_unit_ms = a->o.layout.epoch_ms + (int64_t)unit * a->o.layout.unit_ms;
    }
    if (a->o.order == AUDIT_ORDER_NONE) {
        return;
    }
    size_t top = 0; /* the earlier ID with the highest sequence */
    size_t i = 1;
    while (i < n) {
        if (g[i].seq >= g[top].seq) {
            if (g[i].seq > g[top].seq) {
                top = i;
            }
            i++;
            continue;
        }
        size_t end = i + 1; /* the run: increasing from i */
        while (end < n && g[end].seq > g[end - 1].seq) {
            end++;
        }
        if (end - i > 1 || !g[i].dup) {
            int f = g[top].seq == a->seq_max ? AUDIT_F_SEQ_OVERFLOW : AUDIT_F_SHARED_NODE;
            if (f == AUDIT_F_SEQ_OVERFLOW) {
                nd->overflows++;
            } else {
                nd->restarts++;
            }
            audit_event *e = audit__note(a, f, g[i].ord);
            if (e != NULL) {
                memcpy(e->key, a->recs + g[i].idx * a->stride, 8);
                e->node = nd->node;
                e->value = 1;
                audit__note_prev(a, e, g[top].ord, a->recs + g[top].idx * a->stride);
            }
        }
        if (g[end - 1].seq > g[top].seq) {
            top = end - 1;
        }
        i = end;
    }
}

/* Marks in g[0..n-1] (in key order) every copy of a key but its
 * earliest. */
static void mark_copies(const audit *a, unit_rec *g, size_t n)
{
    size_t s = 0;
    while (s < n) {
        size_t e = s + 1;
        size_t first = s;
        while (e < n &&
               memcmp(a->recs + g[e].idx * a->stride, a->recs + g[s].idx * a->stride, 8) == 0) {
            if (g[e].ord < g[first].ord) {
                first = e;
            }
            e++;
        }
        for (size_t k = s; k < e; k++) {
            g[k].dup = k != first;
        }
        s = e;
    }
}

/* After the sort, the records of one time unit are together when time is
 * the layout's top field (all presets): each unit's IDs go to
 * check_group, node by node, in input order. */
static int check_units(audit *a)
{
    const idm_sf_layout *l = &a->o.layout;
    if (a->o.fmt->id != IDM_FORMAT_SNOWFLAKE || l->order[0] != IDM_SF_TIME) {
        return 0;
    }
    unit_rec *g = NULL;
    size_t cap = 0;
    size_t i = 0;
    while (i < a->n_recs) {
        uint64_t unit = audit__be64(a->recs + i * a->stride) >> l->shift[IDM_SF_TIME];
        size_t j = i + 1;
        while (j < a->n_recs &&
               audit__be64(a->recs + j * a->stride) >> l->shift[IDM_SF_TIME] == unit) {
            j++;
        }
        if (j - i > cap) {
            unit_rec *q = realloc(g, (j - i) * sizeof *g);
            if (q == NULL) {
                free(g);
                return ENOMEM;
            }
            g = q;
            cap = j - i;
        }
        for (size_t k = i; k < j; k++) {
            idm_sf_parts p;
            idm_error err;
            const uint8_t *r = a->recs + k * a->stride;
            if (idm_sf_decode(l, audit__be64(r), &p, &err) != IDM_OK) {
                memset(&p, 0, sizeof p); /* cannot happen: checked when read */
            }
            g[k - i] = (unit_rec){p.node, p.sequence, rec_ord(a, r), false, k};
        }
        mark_copies(a, g, j - i);
        qsort(g, j - i, sizeof *g, unit_rec_cmp);
        size_t k = 0;
        while (k < j - i) {
            size_t m = k + 1;
            while (m < j - i && g[m].node == g[k].node) {
                m++;
            }
            check_group(a, g + k, m - k, unit);
            k = m;
        }
        i = j;
    }
    free(g);
    return 0;
}

static int span_cmp(const void *x, const void *y)
{
    const audit_span *s = x, *t = y;
    if (s->node != t->node) {
        return s->node < t->node ? -1 : 1;
    }
    int c = memcmp(s->min_key, t->min_key, 8);
    if (c != 0) {
        return c;
    }
    return s->min_ord < t->min_ord ? -1 : s->min_ord > t->min_ord;
}

/* One node's ID ranges in two inputs that overlap: two writers. */
static void find_overlaps(audit *a)
{
    audit__flush_spans(a);
    if (a->n_spans == 0) {
        return;
    }
    qsort(a->spans, a->n_spans, sizeof *a->spans, span_cmp);
    size_t i = 0;
    while (i < a->n_spans) {
        const audit_span *top = &a->spans[i]; /* the span reaching highest so far */
        size_t j = i + 1;
        for (; j < a->n_spans && a->spans[j].node == a->spans[i].node; j++) {
            const audit_span *s = &a->spans[j];
            if (s->input != top->input && memcmp(s->min_key, top->max_key, 8) <= 0) {
                audit_node *n = &a->nodes[s->node];
                n->overlaps++;
                audit_event *e = audit__note(a, AUDIT_F_SHARED_NODE, s->min_ord);
                if (e != NULL) {
                    memcpy(e->key, s->min_key, 8);
                    e->node = n->node;
                    e->value = 3;
                    audit__note_prev(a, e, top->max_ord, top->max_key);
                }
            }
            if (memcmp(s->max_key, top->max_key, 8) > 0) {
                top = s;
            }
        }
        i = j;
    }
}

/* A whole bucket width of 1 s, 2 s, 5 s, 10 s ... with at most
 * AUDIT_MAX_BUCKETS buckets over the span. */
static int64_t bucket_width(int64_t span_ms)
{
    static const int64_t widths[] = {1000,    2000,    5000,     10000,    15000,   30000,
                                     60000,   120000,  300000,   600000,   900000,  1800000,
                                     3600000, 7200000, 21600000, 43200000, 86400000};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        if (span_ms / widths[i] < AUDIT_MAX_BUCKETS) {
            return widths[i];
        }
    }
    int64_t day = 86400000;
    return (span_ms / AUDIT_MAX_BUCKETS / day + 1) * day;
}

static int count_buckets(audit *a)
{
    if (a->min_ms > a->max_ms) {
        return 0;
    }
    a->bucket_ms = bucket_width(a->max_ms - a->min_ms);
    int64_t start = a->min_ms - (a->min_ms % a->bucket_ms + a->bucket_ms) % a->bucket_ms;
    a->bucket_start_ms = start;
    a->n_buckets = (uint32_t)((a->max_ms - start) / a->bucket_ms + 1);
    for (size_t i = 0; i < a->n_nodes; i++) {
        a->nodes[i].buckets = calloc(a->n_buckets, sizeof(uint64_t));
        if (a->nodes[i].buckets == NULL) {
            return ENOMEM;
        }
    }
    bool sf = a->o.fmt->id == IDM_FORMAT_SNOWFLAKE;
    for (size_t i = 0; i < a->n_recs; i++) {
        audit_key_info k;
        audit__key_decode(a, a->recs + i * a->stride, &k);
        if (!k.has_time || k.ms < a->min_ms || k.ms > a->max_ms) {
            continue;
        }
        audit_node *n = sf ? audit__find_node(a, k.parts.node) : &a->nodes[0];
        if (n != NULL) {
            n->buckets[(k.ms - start) / a->bucket_ms]++;
        }
    }
    return 0;
}

int audit_finish(audit *a)
{
    find_duplicates(a);
    if (check_units(a) != 0) {
        return ENOMEM;
    }
    find_overlaps(a);
    a->finished = true;
    return count_buckets(a);
}
