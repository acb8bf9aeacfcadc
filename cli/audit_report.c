/*
 * audit_report.c - what `idmint audit` prints (man/idmint.1, "audit"):
 * a summary for people (what was read, a table per node, each finding
 * with its first places, a verdict line), or one JSON object whose
 * members the man page lists.
 */
#include "audit.h"

#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nodes listed in the summary (the JSON lists all). */
#define TEXT_MAX_NODES 64

static void putf(idmx_outbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(idmx_outbuf *out, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) {
        idmx_outbuf_append(out, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
}

static void time_text(int64_t ms, char *dst, size_t cap)
{
    if (idm_time_format(ms, dst, cap) != IDM_OK) {
        snprintf(dst, cap, "%lld", (long long)ms);
    }
}

static bool is_sf(const audit *a)
{
    return a->o.fmt->id == IDM_FORMAT_SNOWFLAKE;
}

static const char *order_name(int order)
{
    return order == AUDIT_ORDER_NODE ? "node" : order == AUDIT_ORDER_INPUT ? "input" : "none";
}

static uint64_t peak(const audit *a, const audit_node *n)
{
    uint64_t p = 0;
    for (uint32_t i = 0; n->buckets != NULL && i < a->n_buckets; i++) {
        if (n->buckets[i] > p) {
            p = n->buckets[i];
        }
    }
    return p;
}

static double rate(const audit_node *n)
{
    if (n->first_ms > n->last_ms) {
        return 0.0;
    }
    double s = (double)(n->last_ms - n->first_ms + 1) / 1000.0;
    return s < 1.0 ? (double)n->count : (double)n->count / s;
}

static int node_cmp(const void *x, const void *y)
{
    const audit_node *const *s = x, *const *t = y;
    return (*s)->node < (*t)->node ? -1 : (*s)->node > (*t)->node;
}

/* The nodes in node order (an array of pointers the caller frees). */
static const audit_node **sorted_nodes(const audit *a)
{
    const audit_node **v = calloc(a->n_nodes + 1, sizeof *v);
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < a->n_nodes; i++) {
        v[i] = &a->nodes[i];
    }
    qsort(v, a->n_nodes, sizeof *v, node_cmp);
    return v;
}

/* ---- text ------------------------------------------------------------------ */

static void text_event(const audit *a, idmx_outbuf *out, int f, const audit_event *e)
{
    char at[512], at2[512], id[IDM_FORMAT_TEXT_MAX + 1], id2[IDM_FORMAT_TEXT_MAX + 1];
    audit_place(a, e->ord, at, sizeof at);
    audit_key_text(a, e->key, id, sizeof id);
    char node[48] = "";
    if (is_sf(a) && f != AUDIT_F_INVALID) {
        snprintf(node, sizeof node, " (node %llu)", (unsigned long long)e->node);
    }
    switch (f) {
    case AUDIT_F_DUPLICATE:
        audit_place(a, e->ord2, at2, sizeof at2);
        putf(out, "    %s at %s, first at %s%s, %lld times in all\n", id, at, at2, node,
             (long long)e->value);
        break;
    case AUDIT_F_SHARED_NODE:
    case AUDIT_F_OUT_OF_ORDER:
    case AUDIT_F_SEQ_OVERFLOW: {
        const char *how = f != AUDIT_F_SHARED_NODE ? " after"
                          : e->value == 3
                              ? ": in the range of the node's IDs of another input, up to"
                              : ": the unit minted again, below";
        audit_place(a, e->ord2, at2, sizeof at2);
        audit_key_text(a, e->key2, id2, sizeof id2);
        putf(out, "    %s at %s%s%s %s at %s\n", id, at, node, how, id2, at2);
        break;
    }
    case AUDIT_F_FUTURE:
        putf(out, "    %s at %s%s: %lld ms ahead of now\n", id, at, node, (long long)e->value);
        break;
    case AUDIT_F_BEFORE_EPOCH: {
        char t[IDM_RFC3339_CAP];
        time_text(e->value, t, sizeof t);
        putf(out, "    %s at %s%s: %s\n", id, at, node, t);
        break;
    }
    case AUDIT_F_INVALID:
        putf(out, "    %s: %s\n", at, e->why);
        break;
    }
}

static const char *const finding_titles[AUDIT_N_FINDINGS] = {
    "duplicates",      "shared node (two writers minting as one node)",
    "out of order",    "sequence overflow",
    "from the future", "before the epoch",
    "invalid lines"};

static void text_nodes(const audit *a, idmx_outbuf *out)
{
    const audit_node **v = sorted_nodes(a);
    if (v == NULL) {
        return;
    }
    char per_unit[32];
    if (is_sf(a)) {
        putf(out, "\n%10s %12s  %-24s  %-24s %10s %10s %9s  %s\n", "node", "IDs", "first", "last",
             "avg/s", "peak/s", "max/unit", "findings");
    } else {
        putf(out, "\n%12s  %-24s  %-24s %10s %10s  %s\n", "IDs", "first", "last", "avg/s", "peak/s",
             "findings");
    }
    for (size_t i = 0; i < a->n_nodes && i < TEXT_MAX_NODES; i++) {
        const audit_node *n = v[i];
        char first[IDM_RFC3339_CAP] = "-", last[IDM_RFC3339_CAP] = "-";
        if (n->first_ms <= n->last_ms) {
            time_text(n->first_ms, first, sizeof first);
            time_text(n->last_ms, last, sizeof last);
        }
        double pk = a->bucket_ms > 0 ? (double)peak(a, n) * 1000.0 / (double)a->bucket_ms : 0.0;
        char found[256] = "";
        size_t o = 0;
        const struct {
            uint64_t v;
            const char *what;
        } parts[] = {{n->dups, "duplicates"},
                     {n->restarts, "restarts"},
                     {n->overlaps, "overlapping inputs"},
                     {n->out_of_order, "out of order"},
                     {n->overflows, "overflows"}};
        for (size_t j = 0; j < sizeof parts / sizeof parts[0]; j++) {
            if (parts[j].v > 0 && o < sizeof found) {
                int w = snprintf(found + o, sizeof found - o, "%s%llu %s", o > 0 ? ", " : "",
                                 (unsigned long long)parts[j].v, parts[j].what);
                o += w > 0 ? (size_t)w : 0;
            }
        }
        if (is_sf(a)) {
            snprintf(per_unit, sizeof per_unit, "%llu", (unsigned long long)n->busiest);
            putf(out, "%10llu %12llu  %-24s  %-24s %10.0f %10.0f %9s  %s\n",
                 (unsigned long long)n->node, (unsigned long long)n->count, first, last, rate(n),
                 pk, per_unit, o > 0 ? found : "-");
        } else {
            putf(out, "%12llu  %-24s  %-24s %10.0f %10.0f  %s\n", (unsigned long long)n->count,
                 first, last, rate(n), pk, o > 0 ? found : "-");
        }
    }
    if (a->n_nodes > TEXT_MAX_NODES) {
        putf(out, "... and %zu more nodes (--json lists all)\n", a->n_nodes - TEXT_MAX_NODES);
    }
    free(v);
}

void audit_report_text(const audit *a, idmx_outbuf *out)
{
    char layout[IDM_SF_SPEC_CAP];
    putf(out, "format: %s", a->o.fmt->name);
    if (is_sf(a)) {
        if (idm_sf_layout_format(&a->o.layout, layout, sizeof layout) != IDM_OK) {
            snprintf(layout, sizeof layout, "?");
        }
        putf(out, ", layout %s (%llu IDs per node per %lld ms)", layout,
             (unsigned long long)a->seq_max + 1, (long long)a->o.layout.unit_ms);
    }
    putf(out, "; order checked: %s\n", order_name(a->o.order));
    putf(out, "read: %llu lines, %zu IDs, %llu invalid, from %u input%s",
         (unsigned long long)a->lines, a->n_recs, (unsigned long long)a->f[AUDIT_F_INVALID].count,
         a->n_inputs, a->n_inputs == 1 ? "" : "s");
    for (uint32_t i = 0; i < a->n_inputs && i < 8; i++) {
        putf(out, "%s%s", i == 0 ? ": " : ", ", a->inputs[i].name);
    }
    putf(out, "%s\n", a->n_inputs > 8 ? ", ..." : "");
    if (a->min_ms <= a->max_ms) {
        char t1[IDM_RFC3339_CAP], t2[IDM_RFC3339_CAP];
        time_text(a->min_ms, t1, sizeof t1);
        time_text(a->max_ms, t2, sizeof t2);
        putf(out, "time: %s to %s; rates over buckets of %lld s\n", t1, t2,
             (long long)(a->bucket_ms / 1000));
    }
    if (is_sf(a)) {
        putf(out, "nodes: %zu\n", a->n_nodes);
    }
    text_nodes(a, out);
    putf(out, "\nfindings:\n");
    for (int f = 0; f < AUDIT_N_FINDINGS; f++) {
        const audit_finding *F = &a->f[f];
        if (F->count == 0) {
            putf(out, "  %s: none\n", finding_titles[f]);
            continue;
        }
        if (f == AUDIT_F_DUPLICATE) {
            putf(out, "  %s: %llu IDs repeated, %llu extra copies; the first:\n", finding_titles[f],
                 (unsigned long long)a->distinct_dups, (unsigned long long)F->count);
        } else {
            putf(out, "  %s: %llu; the first:\n", finding_titles[f], (unsigned long long)F->count);
        }
        for (uint32_t i = 0; i < F->n_events; i++) {
            text_event(a, out, f, &F->events[i]);
        }
        if (F->n_events < F->count && f != AUDIT_F_DUPLICATE) {
            putf(out, "    ... %llu more\n", (unsigned long long)(F->count - F->n_events));
        }
    }
    if (a->spans_lost) {
        putf(out, "  (out of memory: the overlap check between inputs is incomplete)\n");
    }
    putf(out, "\nverdict: ");
    if (!audit_failed(a)) {
        putf(out, "OK: nothing that must not happen was found in %zu IDs\n", a->n_recs);
        return;
    }
    putf(out, "FAIL:");
    const char *sep = " ";
    for (int f = 0; f < AUDIT_N_FINDINGS; f++) {
        if (a->f[f].count > 0 && !(f == AUDIT_F_INVALID && a->o.skip_invalid)) {
            putf(out, "%s%s", sep, finding_titles[f]);
            sep = ", ";
        }
    }
    if (a->f[AUDIT_F_SHARED_NODE].count > 0) {
        putf(out, "; nodes with two writers:");
        const audit_node **v = sorted_nodes(a);
        size_t shown = 0;
        for (size_t i = 0; v != NULL && i < a->n_nodes; i++) {
            if (v[i]->restarts + v[i]->overlaps > 0 && shown++ < 16) {
                putf(out, " %llu", (unsigned long long)v[i]->node);
            }
        }
        if (shown > 16) {
            putf(out, " ...");
        }
        free(v);
    }
    putf(out, "\n");
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_str(idmx_outbuf *out, const char *s)
{
    idmx_json_string(out, s, strlen(s));
}

static void json_time(idmx_outbuf *out, int64_t ms, bool valid)
{
    if (!valid) {
        idmx_outbuf_puts(out, "null");
        return;
    }
    char t[IDM_RFC3339_CAP];
    time_text(ms, t, sizeof t);
    json_str(out, t);
}

static void json_event(const audit *a, idmx_outbuf *out, int f, const audit_event *e)
{
    char at[512], id[IDM_FORMAT_TEXT_MAX + 1];
    audit_place(a, e->ord, at, sizeof at);
    idmx_outbuf_puts(out, "{\"at\":");
    json_str(out, at);
    if (f == AUDIT_F_INVALID) {
        idmx_outbuf_puts(out, ",\"error\":");
        json_str(out, e->why);
        idmx_outbuf_putc(out, '}');
        return;
    }
    audit_key_text(a, e->key, id, sizeof id);
    idmx_outbuf_puts(out, ",\"id\":");
    json_str(out, id);
    if (is_sf(a)) {
        putf(out, ",\"node\":%llu", (unsigned long long)e->node);
    }
    if (e->ord2 != 0) {
        audit_place(a, e->ord2, at, sizeof at);
        audit_key_text(a, e->key2, id, sizeof id);
        idmx_outbuf_puts(out, f == AUDIT_F_DUPLICATE ? ",\"first_at\":" : ",\"previous_at\":");
        json_str(out, at);
        if (f != AUDIT_F_DUPLICATE) {
            idmx_outbuf_puts(out, ",\"previous\":");
            json_str(out, id);
        }
    }
    switch (f) {
    case AUDIT_F_DUPLICATE:
        putf(out, ",\"times\":%lld", (long long)e->value);
        break;
    case AUDIT_F_SHARED_NODE:
        putf(out, ",\"kind\":\"%s\"", e->value == 1 ? "restart" : "overlap");
        break;
    case AUDIT_F_FUTURE:
        putf(out, ",\"ahead_ms\":%lld", (long long)e->value);
        break;
    case AUDIT_F_BEFORE_EPOCH:
        idmx_outbuf_puts(out, ",\"time\":");
        json_time(out, e->value, true);
        break;
    }
    idmx_outbuf_putc(out, '}');
}

static void json_node(const audit *a, idmx_outbuf *out, const audit_node *n)
{
    idmx_outbuf_puts(out, "{\"node\":");
    if (is_sf(a)) {
        idmx_outbuf_u64(out, n->node);
    } else {
        idmx_outbuf_puts(out, "null");
    }
    putf(out, ",\"ids\":%llu,\"first_time\":", (unsigned long long)n->count);
    json_time(out, n->first_ms, n->first_ms <= n->last_ms);
    idmx_outbuf_puts(out, ",\"last_time\":");
    json_time(out, n->last_ms, n->first_ms <= n->last_ms);
    double pk = a->bucket_ms > 0 ? (double)peak(a, n) * 1000.0 / (double)a->bucket_ms : 0.0;
    putf(out, ",\"rate_per_s\":%.1f,\"peak_per_s\":%.1f", rate(n), pk);
    if (is_sf(a)) {
        putf(out, ",\"busiest_unit\":{\"ids\":%llu,\"time\":", (unsigned long long)n->busiest);
        json_time(out, n->busiest_unit_ms, n->busiest > 0);
        idmx_outbuf_putc(out, '}');
    }
    putf(out,
         ",\"duplicates\":%llu,\"restarts\":%llu,\"overlaps\":%llu,"
         "\"out_of_order\":%llu,\"sequence_overflows\":%llu,\"buckets\":[",
         (unsigned long long)n->dups, (unsigned long long)n->restarts,
         (unsigned long long)n->overlaps, (unsigned long long)n->out_of_order,
         (unsigned long long)n->overflows);
    for (uint32_t i = 0; n->buckets != NULL && i < a->n_buckets; i++) {
        if (i > 0) {
            idmx_outbuf_putc(out, ',');
        }
        idmx_outbuf_u64(out, n->buckets[i]);
    }
    idmx_outbuf_puts(out, "]}");
}

void audit_report_json(const audit *a, idmx_outbuf *out)
{
    idmx_outbuf_puts(out, "{\"format\":");
    json_str(out, a->o.fmt->name);
    idmx_outbuf_puts(out, ",\"layout\":");
    if (is_sf(a)) {
        char layout[IDM_SF_SPEC_CAP];
        if (idm_sf_layout_format(&a->o.layout, layout, sizeof layout) != IDM_OK) {
            snprintf(layout, sizeof layout, "?");
        }
        json_str(out, layout);
    } else {
        idmx_outbuf_puts(out, "null");
    }
    putf(out, ",\"order\":\"%s\",\"inputs\":[", order_name(a->o.order));
    for (uint32_t i = 0; i < a->n_inputs; i++) {
        if (i > 0) {
            idmx_outbuf_putc(out, ',');
        }
        json_str(out, a->inputs[i].name);
    }
    putf(out, "],\"lines\":%llu,\"ids\":%zu,\"now\":", (unsigned long long)a->lines, a->n_recs);
    json_time(out, a->o.now_ms, true);
    putf(out, ",\"max_ahead_ms\":%lld,\"not_before\":", (long long)a->o.max_ahead_ms);
    json_time(out, a->o.not_before_ms, a->o.not_before_ms != INT64_MIN);
    idmx_outbuf_puts(out, ",\"first_time\":");
    json_time(out, a->min_ms, a->min_ms <= a->max_ms);
    idmx_outbuf_puts(out, ",\"last_time\":");
    json_time(out, a->max_ms, a->min_ms <= a->max_ms);
    putf(out, ",\"bucket_ms\":%lld,\"bucket_start\":", (long long)a->bucket_ms);
    json_time(out, a->bucket_start_ms, a->bucket_ms > 0);
    idmx_outbuf_puts(out, ",\"nodes\":[");
    const audit_node **v = sorted_nodes(a);
    for (size_t i = 0; v != NULL && i < a->n_nodes; i++) {
        if (i > 0) {
            idmx_outbuf_putc(out, ',');
        }
        json_node(a, out, v[i]);
    }
    free(v);
    idmx_outbuf_puts(out, "],\"findings\":{");
    for (int f = 0; f < AUDIT_N_FINDINGS; f++) {
        const audit_finding *F = &a->f[f];
        putf(out, "%s\"%s\":{\"count\":%llu", f > 0 ? "," : "", audit_finding_name(f),
             (unsigned long long)F->count);
        if (f == AUDIT_F_DUPLICATE) {
            putf(out, ",\"distinct\":%llu", (unsigned long long)a->distinct_dups);
        }
        if (f == AUDIT_F_SHARED_NODE && is_sf(a)) {
            idmx_outbuf_puts(out, ",\"nodes\":[");
            const audit_node **w = sorted_nodes(a);
            int k = 0;
            for (size_t i = 0; w != NULL && i < a->n_nodes; i++) {
                if (w[i]->restarts + w[i]->overlaps > 0) {
                    if (k++ > 0) {
                        idmx_outbuf_putc(out, ',');
                    }
                    idmx_outbuf_u64(out, w[i]->node);
                }
            }
            free(w);
            idmx_outbuf_putc(out, ']');
        }
        idmx_outbuf_puts(out, ",\"first\":[");
        for (uint32_t i = 0; i < F->n_events; i++) {
            if (i > 0) {
                idmx_outbuf_putc(out, ',');
            }
            json_event(a, out, f, &F->events[i]);
        }
        idmx_outbuf_puts(out, "]}");
    }
    putf(out, "},\"ok\":%s}\n", audit_failed(a) ? "false" : "true");
}
