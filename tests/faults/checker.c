/*
 * checker.c - judges a fault run (tests/faults/run.sh): every ID the
 * clients received, the /v1/node polls and the fault log of one run
 * directory.
 *
 *   checker --dir DIR --layout LAYOUT [--seg-max N] [--json FILE]
 *
 * DIR holds:
 *   *.ids     faultclient's records (checker.h), *.idtxt the same as text
 *             lines "ID RECV_US CONN INST KIND" (the self-test's input);
 *   *.poll    faultclient poll's lines "RECV_US INST STATE NODE GEN LEFT";
 *   faults.log one line per fault: "START_US END_US NAME [inst=K]
 *             [slack_ms=M] ...": when it was injected and when it was
 *             undone; slack_ms, an instance's clock set back by up to M ms.
 *
 * The rules (any broken one makes the exit status 1):
 *   duplicates  an ID received twice, over every instance and connection
 *               (snowflakes one space, segment IDs another);
 *   order       an ID not above the previous one on the same connection
 *               (idmintd promises increasing IDs per connection);
 *   fencing     a snowflake of an instance with a coordinator stamped after
 *               the deadline of every lease of its node that instance held:
 *               each lease (node, generation) seen by the polls has its
 *               deadline bounded by max(RECV + LEFT) over its polls (the
 *               server answered before the client received), and could
 *               only have begun after the poll before its first, so an ID
 *               fits a lease when it was received after that poll, is
 *               stamped no earlier (less the instance's clock slack) and
 *               no later than the deadline (+1 ms for rounding);
 *   seg_range   a segment ID outside [1, --seg-max): past what the store
 *               has leased in all.
 * Figures: IDs checked, the longest pause (gap between two replies with
 * IDs) per instance and per fault (a pause belongs to the last fault that
 * started before it ended and ended less than 20 s before it began), and
 * every move of a node from one instance to another with its length.
 * Exit 0 clean, 1 on a violation, 2 on bad input.
 */
#include "checker.h"

#include <idmint/snowflake.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INST    256
#define MAX_FAULTS  4096
#define MAX_EPI     8192
#define SHOW        10
#define PAUSE_SHOWN_MS 250
#define SHARED_MS   1000 /* receive-time slack between two holders of a node */
#define FAULT_GRACE 20000000LL /* µs a pause may start after its fault's end */

typedef struct fault {
    int64_t start_us, end_us;
    char name[48];
    int inst;
    int64_t slack_ms;
    int64_t pause_us; /* the longest pause attributed to it */
    int pause_inst;
    int64_t by_inst[MAX_INST]; /* each instance's longest pause in it */
} fault;

typedef struct node_at {
    int64_t node, t;
    int64_t minted; /* at or before: the earlier of its receipt and its stamp */
    uint64_t id;
    int inst;
} node_at;

typedef struct episode {
    int inst;
    int64_t node;
    uint64_t gen;
    int64_t start_lo_us; /* the poll before its first */
    int64_t deadline_ms;
} episode;

static struct {
    fc_rec *r;
    size_t n, cap;
    fault f[MAX_FAULTS];
    int nf;
    episode e[MAX_EPI];
    int ne;
    int64_t slack_ms[MAX_INST];
    bool fenced[MAX_INST];
    int first_epi[MAX_INST]; /* the first of an instance's leases in e */
    idm_sf_layout layout;
    uint64_t seg_max;
} C;

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "checker: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void push(const fc_rec *x)
{
    if (C.n == C.cap) {
        C.cap = C.cap ? C.cap * 2 : 1 << 20;
        C.r = realloc(C.r, C.cap * sizeof *C.r);
        if (C.r == NULL)
            die("out of memory");
    }
    C.r[C.n++] = *x;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static FILE *open_input(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die("cannot open %s: %s", path, strerror(errno));
    return f;
}

static void read_ids(const char *path)
{
    FILE *f = open_input(path);
    fc_rec x;
    while (fread(&x, sizeof x, 1, f) == 1) {
        if (x.inst >= MAX_INST || (x.kind != FC_KIND_SF && x.kind != FC_KIND_SEG))
            die("%s: a record with instance or kind out of range", path);
        push(&x);
    }
    fclose(f);
}

static void read_idtxt(const char *path)
{
    FILE *f = open_input(path);
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long id;
        long long t;
        unsigned conn, inst, kind;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%llu %lld %u %u %u", &id, &t, &conn, &inst, &kind) != 5 ||
            inst >= MAX_INST || (kind != FC_KIND_SF && kind != FC_KIND_SEG))
            die("%s: expected \"ID RECV_US CONN INST KIND\", got: %s", path, line);
        fc_rec x = {id, t, conn, (uint16_t)inst, (uint8_t)kind, 0};
        push(&x);
    }
    fclose(f);
}

/* Polls of one instance (one file, in time order) into leases. */
static void read_poll(const char *path)
{
    FILE *f = open_input(path);
    char line[256];
    static int64_t prev_us[MAX_INST]; /* each instance's previous poll */
    while (fgets(line, sizeof line, f) != NULL) {
        long long t, node, left;
        unsigned inst;
        unsigned long long gen;
        char state[32];
        int k = sscanf(line, "%lld %u %31s %lld %llu %lld", &t, &inst, state, &node, &gen, &left);
        if (k < 3 || inst >= MAX_INST)
            die("%s: a poll line that does not read: %s", path, line);
        if (k == 6 && strcmp(state, "held") == 0 && gen > 0 && node >= 0) {
            C.fenced[inst] = true;
            int i;
            for (i = 0; i < C.ne; i++) {
                if (C.e[i].inst == (int)inst && C.e[i].node == node && C.e[i].gen == gen)
                    break;
            }
            if (i == C.ne) {
                if (C.ne == MAX_EPI)
                    die("%s: more than %d leases", path, MAX_EPI);
                C.e[C.ne++] = (episode){(int)inst, node, gen, prev_us[inst], 0};
            }
            int64_t d = (t + (left > 0 ? left : 0) * 1000) / 1000 + 1;
            if (d > C.e[i].deadline_ms)
                C.e[i].deadline_ms = d;
        }
        prev_us[inst] = t;
    }
    fclose(f);
}

/* The number after KEY (" KEY=N") in a fault line's details: true with
 * *v set, false when absent; a value that is not a whole number in
 * [lo, hi] is refused. */
static bool detail(const char *text, const char *key, long long lo, long long hi, long long *v,
                   const char *path)
{
    const char *p = strstr(text, key);
    if (p == NULL)
        return false;
    char *end;
    errno = 0;
    *v = strtoll(p + strlen(key), &end, 10);
    if (errno != 0 || end == p + strlen(key) || (*end != ' ' && *end != '\n' && *end != '\0') ||
        *v < lo || *v > hi)
        die("%s: %s needs a whole number from %lld to %lld: %s", path, key, lo, hi, text);
    return true;
}

static void read_faults(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return; /* no fault injected */
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (C.nf == MAX_FAULTS)
            die("%s: more than %d faults", path, MAX_FAULTS);
        fault *x = &C.f[C.nf];
        long long s, e;
        int used = 0;
        if (sscanf(line, "%lld %lld %47s %n", &s, &e, x->name, &used) != 3)
            die("%s: a fault line that does not read: %s", path, line);
        x->start_us = s;
        x->end_us = e;
        x->inst = -1;
        long long v;
        if (detail(line + used, "inst=", 0, MAX_INST - 1, &v, path))
            x->inst = (int)v;
        if (detail(line + used, "slack_ms=", 0, 3600000, &v, path)) {
            if (x->inst < 0)
                die("%s: slack_ms= without inst=: %s", path, line);
            if (v > C.slack_ms[x->inst])
                C.slack_ms[x->inst] = v;
        }
        C.nf++;
    }
    fclose(f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Records ordered by instance, then receive time. */
static int cmp_inst_time(const void *a, const void *b)
{
    const fc_rec *x = a, *y = b;
    if (x->inst != y->inst)
        return x->inst < y->inst ? -1 : 1;
    return x->recv_us < y->recv_us ? -1 : x->recv_us > y->recv_us;
}

static int cmp_node_id(const void *a, const void *b)
{
    const node_at *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int64_t node_of(uint64_t id, int64_t *unix_ms)
{
    idm_sf_parts p;
    if (idm_sf_decode(&C.layout, id, &p, NULL) != 0)
        return -1;
    *unix_ms = p.unix_ms;
    return (int64_t)p.node;
}

/* The fault a pause from a to b belongs to, or -1: of the faults that had
 * begun before it ended and had not ended FAULT_GRACE before it began,
 * the last one begun by a + 1 s (what was going on when the IDs stopped),
 * else the first one begun during it. */
static int fault_of(int64_t a, int64_t b)
{
    int before = -1, during = -1;
    for (int i = 0; i < C.nf; i++) {
        const fault *f = &C.f[i];
        if (f->start_us > b || f->end_us + FAULT_GRACE < a)
            continue;
        if (f->start_us <= a + 1000000) {
            if (before < 0 || f->start_us > C.f[before].start_us)
                before = i;
        } else if (during < 0 || f->start_us < C.f[during].start_us) {
            during = i;
        }
    }
    return before >= 0 ? before : during;
}

/* A pause of instance inst from a to b: its fault's figures, and the
 * instance's longest (*worst, from *at). */
static void note_pause(unsigned inst, int64_t a, int64_t b, int64_t *worst, int64_t *at)
{
    int64_t gap = b - a;
    if (gap > 1000) {
        int fi = fault_of(a, b);
        if (fi >= 0 && gap > C.f[fi].pause_us) {
            C.f[fi].pause_us = gap;
            C.f[fi].pause_inst = (int)inst;
        }
        if (fi >= 0 && gap > C.f[fi].by_inst[inst])
            C.f[fi].by_inst[inst] = gap;
    }
    if (gap > *worst) {
        *worst = gap;
        *at = a;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Per kind of fault (its name): how many, and the longest pause of each
 * occurrence: the median and the largest. */
static void print_by_kind(void)
{
    static bool done[MAX_FAULTS];
    static int64_t v[MAX_FAULTS];
    printf("faults injected: %d; by kind (occurrences; the longest pause of each: median, max, "
           "in ms):\n",
           C.nf);
    for (int i = 0; i < C.nf; i++) {
        if (done[i])
            continue;
        size_t m = 0;
        for (int j = i; j < C.nf; j++) {
            if (!done[j] && strcmp(C.f[j].name, C.f[i].name) == 0) {
                done[j] = true;
                v[m++] = C.f[j].pause_us;
            }
        }
        qsort(v, m, sizeof *v, cmp_i64);
        printf("  %-26s %4zu  median %8.1f  max %8.1f\n", C.f[i].name, m,
               (double)v[m / 2] / 1000, (double)v[m - 1] / 1000);
    }
}

static int cmp_episode(const void *a, const void *b)
{
    const episode *x = a, *y = b;
    return x->inst < y->inst ? -1 : x->inst > y->inst;
}

/* Whether snowflake x (of node, stamped ms) fits a lease its instance
 * held; *margin: how far below that lease's deadline it was stamped (the
 * largest, over the leases it fits). */
static bool fits_lease(const fc_rec *x, int64_t node, int64_t ms, int64_t *margin)
{
    bool fits = false;
    for (int i = C.first_epi[x->inst]; i < C.ne && C.e[i].inst == x->inst; i++) {
        const episode *e = &C.e[i];
        if (e->node == node && e->start_lo_us <= x->recv_us &&
            ms >= e->start_lo_us / 1000 - C.slack_ms[x->inst] && ms <= e->deadline_ms) {
            if (!fits || e->deadline_ms - ms > *margin)
                *margin = e->deadline_ms - ms;
            fits = true;
        }
    }
    return fits;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *json = NULL, *layout = "twitter";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: checker --dir DIR [--layout LAYOUT] [--seg-max N] [--json FILE]\n");
            return 0;
        }
        if (i + 1 >= argc)
            die("%s needs a value", argv[i]);
        if (strcmp(argv[i], "--dir") == 0)
            dir = argv[++i];
        else if (strcmp(argv[i], "--json") == 0)
            json = argv[++i];
        else if (strcmp(argv[i], "--layout") == 0)
            layout = argv[++i];
        else if (strcmp(argv[i], "--seg-max") == 0) {
            char *end;
            errno = 0;
            C.seg_max = strtoull(argv[++i], &end, 10);
            if (errno != 0 || *end != '\0' || end == argv[i])
                die("--seg-max: expected a whole number, got '%s'", argv[i]);
        } else
            die("unknown option %s (--dir, --layout, --seg-max, --json)", argv[i]);
    }
    if (dir == NULL)
        die("usage: checker --dir DIR [--layout LAYOUT] [--seg-max N] [--json FILE]");
    idm_error err;
    if (idm_sf_layout_parse(&C.layout, layout, strlen(layout), &err) != 0)
        die("--layout: %s", err.msg);

    DIR *d = opendir(dir);
    if (d == NULL)
        die("cannot open %s: %s", dir, strerror(errno));
    char path[4096];
    for (struct dirent *de = readdir(d); de != NULL; de = readdir(d)) {
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (ends_with(de->d_name, ".ids"))
            read_ids(path);
        else if (ends_with(de->d_name, ".idtxt"))
            read_idtxt(path);
        else if (ends_with(de->d_name, ".poll"))
            read_poll(path);
    }
    closedir(d);
    snprintf(path, sizeof path, "%s/faults.log", dir);
    read_faults(path);
    qsort(C.e, (size_t)C.ne, sizeof *C.e, cmp_episode);
    for (int i = C.ne - 1; i >= 0; i--)
        C.first_epi[C.e[i].inst] = i;

    uint64_t n_sf = 0, n_seg = 0, dups = 0, order = 0, fencing = 0, segrange = 0, fenced_ids = 0;
    int64_t min_margin = INT64_MAX;
    /* Order per connection: the records of one connection are in one file
     * in the order received; ordered by connection and time (a stable
     * order), each must be above the one before. */
    int64_t *ms_of = malloc(C.n * sizeof *ms_of);
    int64_t *node = malloc(C.n * sizeof *node);
    if ((ms_of == NULL || node == NULL) && C.n > 0)
        die("out of memory");
    for (size_t i = 0; i < C.n; i++) {
        const fc_rec *x = &C.r[i];
        node[i] = -1;
        if (x->kind == FC_KIND_SF) {
            n_sf++;
            node[i] = node_of(x->id, &ms_of[i]);
            if (node[i] < 0) {
                fencing++;
                printf("INVALID snowflake %" PRIu64 " from instance %u\n", x->id, x->inst);
                continue;
            }
            int64_t margin = 0;
            if (C.fenced[x->inst] && fits_lease(x, node[i], ms_of[i], &margin)) {
                fenced_ids++;
                if (margin < min_margin)
                    min_margin = margin;
            } else if (C.fenced[x->inst]) {
                if (fencing < SHOW)
                    printf("FENCING snowflake %" PRIu64 " (node %" PRId64 ", stamped %" PRId64
                           " ms) from instance %u received at %" PRId64
                           " us fits no lease that instance held for that node\n",
                           x->id, node[i], ms_of[i], x->inst, x->recv_us);
                fencing++;
            }
        } else {
            n_seg++;
            if (C.seg_max > 0 && (x->id == 0 || x->id >= C.seg_max)) {
                if (segrange < SHOW)
                    printf("SEGMENT %" PRIu64 " from instance %u is outside [1, %" PRIu64
                           "), what the store leased\n",
                           x->id, x->inst, C.seg_max);
                segrange++;
            }
        }
    }
    /* Per connection: a connection's records are contiguous in the order
     * received within each file, but files interleave; walk per conn via
     * a last-ID table keyed by conn. */
    {
        size_t cap = 1;
        while (cap < 4 * (C.n + 1) && cap < (1u << 24))
            cap <<= 1;
        uint32_t *key = calloc(cap, sizeof *key);
        uint64_t *last = calloc(cap, sizeof *last);
        uint8_t *used = calloc(cap, 1);
        if (key == NULL || last == NULL || used == NULL)
            die("out of memory");
        for (size_t i = 0; i < C.n; i++) {
            uint32_t k = C.r[i].conn * 2u + (C.r[i].kind == FC_KIND_SEG);
            size_t h = (k * 2654435761u) & (cap - 1);
            while (used[h] && key[h] != k)
                h = (h + 1) & (cap - 1);
            if (used[h] && C.r[i].id <= last[h]) {
                if (order < SHOW)
                    printf("ORDER %" PRIu64 " after %" PRIu64 " on connection %u of instance %u\n",
                           C.r[i].id, last[h], C.r[i].conn, C.r[i].inst);
                order++;
            }
            used[h] = 1;
            key[h] = k;
            last[h] = C.r[i].id;
        }
        free(key);
        free(last);
        free(used);
    }
    /* Duplicates: each space sorted. */
    for (int kind = FC_KIND_SF; kind <= FC_KIND_SEG; kind++) {
        uint64_t *ids = malloc((C.n + 1) * sizeof *ids);
        size_t m = 0;
        if (ids == NULL)
            die("out of memory");
        for (size_t i = 0; i < C.n; i++) {
            if (C.r[i].kind == kind)
                ids[m++] = C.r[i].id;
        }
        qsort(ids, m, sizeof *ids, cmp_u64);
        for (size_t i = 1; i < m; i++) {
            if (ids[i] == ids[i - 1]) {
                if (dups < SHOW) {
                    printf("DUPLICATE %s %" PRIu64 " received by:", kind == FC_KIND_SF ? "snowflake" : "segment", ids[i]);
                    for (size_t j = 0; j < C.n; j++) {
                        if (C.r[j].id == ids[i] && C.r[j].kind == kind)
                            printf(" instance %u conn %u at %" PRId64 " us;", C.r[j].inst, C.r[j].conn, C.r[j].recv_us);
                    }
                    printf("\n");
                }
                dups++;
            }
        }
        free(ids);
    }

    /* Pauses: per instance, the gaps between replies in receive order. */
    FILE *js = NULL;
    if (json != NULL) {
        js = fopen(json, "w");
        if (js == NULL)
            die("cannot write %s: %s", json, strerror(errno));
    }
    free(ms_of);
    free(node);
    qsort(C.r, C.n, sizeof *C.r, cmp_inst_time);
    printf("ids checked: %" PRIu64 " (%" PRIu64 " snowflakes, %" PRIu64 " segment IDs)\n",
           (uint64_t)C.n, n_sf, n_seg);
    printf("duplicates: %" PRIu64 "\norder violations: %" PRIu64 "\nfencing violations: %" PRIu64
           "\nsegment range violations: %" PRIu64 "\n",
           dups, order, fencing, segrange);
    printf("snowflakes checked against a lease: %" PRIu64 ", the closest %" PRId64
           " ms below its deadline\n",
           fenced_ids, fenced_ids ? min_margin : -1);
    if (js != NULL)
        fprintf(js,
                "{\"ids\": %zu, \"snowflakes\": %" PRIu64 ", \"segments\": %" PRIu64
                ", \"duplicates\": %" PRIu64 ", \"order\": %" PRIu64 ", \"fencing\": %" PRIu64
                ", \"segment_range\": %" PRIu64 ", \"fenced\": %" PRIu64
                ", \"closest_to_deadline_ms\": %" PRId64 ",\n \"instances\": [",
                C.n, n_sf, n_seg, dups, order, fencing, segrange, fenced_ids,
                fenced_ids ? min_margin : -1);
    int64_t end_us = 0;
    for (size_t i = 0; i < C.n; i++) {
        if (C.r[i].recv_us > end_us)
            end_us = C.r[i].recv_us;
    }
    printf("longest pause per instance (ms, between two replies with IDs, or from the last to "
           "the end of the run):\n");
    int first_inst = 1;
    for (size_t i = 0; i < C.n;) {
        size_t j = i;
        int64_t worst = 0, at = 0;
        while (j + 1 < C.n && C.r[j + 1].inst == C.r[i].inst) {
            note_pause(C.r[i].inst, C.r[j].recv_us, C.r[j + 1].recv_us, &worst, &at);
            j++;
        }
        /* An instance that never minted again paused until the end. */
        note_pause(C.r[i].inst, C.r[j].recv_us, end_us, &worst, &at);
        printf("  instance %u: %zu IDs, longest pause %.1f ms from %" PRId64 " us\n", C.r[i].inst,
               j - i + 1, (double)worst / 1000, at);
        if (js != NULL)
            fprintf(js, "%s\n  {\"inst\": %u, \"ids\": %zu, \"longest_pause_ms\": %.1f, \"at_us\": %" PRId64 "}",
                    first_inst ? "" : ",", C.r[i].inst, j - i + 1, (double)worst / 1000, at);
        first_inst = 0;
        i = j + 1;
    }
    printf("faults (the longest pause of any instance in each, then every pause over %d ms by "
           "instance):\n",
           PAUSE_SHOWN_MS);
    if (js != NULL)
        fprintf(js, "],\n \"faults\": [");
    for (int i = 0; i < C.nf; i++) {
        const fault *f = &C.f[i];
        printf("  %-26s %6.1f s long, pause %8.1f ms (instance %d)", f->name,
               (double)(f->end_us - f->start_us) / 1e6, (double)f->pause_us / 1000,
               f->pause_us > 0 ? f->pause_inst : -1);
        if (js != NULL)
            fprintf(js, "%s\n  {\"name\": \"%s\", \"start_us\": %" PRId64 ", \"end_us\": %" PRId64
                        ", \"inst\": %d, \"longest_pause_ms\": %.1f, \"pause_inst\": %d, \"pauses_ms\": {",
                    i ? "," : "", f->name, f->start_us, f->end_us, f->inst,
                    (double)f->pause_us / 1000, f->pause_us > 0 ? f->pause_inst : -1);
        int shown = 0, jn = 0;
        for (int k = 0; k < MAX_INST; k++) {
            if (f->by_inst[k] <= 0)
                continue;
            if (f->by_inst[k] > PAUSE_SHOWN_MS * 1000)
                printf("%s%d: %.0f", shown++ ? ", " : "; ", k, (double)f->by_inst[k] / 1000);
            if (js != NULL)
                fprintf(js, "%s\"%d\": %.1f", jn++ ? ", " : "", k,
                        (double)f->by_inst[k] / 1000);
        }
        printf("\n");
        if (js != NULL)
            fprintf(js, "}}");
    }
    print_by_kind();
    /* Node moves: each node's snowflakes in ID order (its time order), in
     * runs of one instance; a change of instance is a move, from the old
     * holder's last ID received to the new one's first. A new holder that
     * received IDs more than SHARED_MS before the old one's last is a node
     * minted by two instances at once (even in disjoint ranges: the
     * signature of a lease that did not fence). The old holder's last is
     * the last time it can have minted, the earlier of each ID's receipt
     * and its stamp: a reply minted in time but received late (a holder
     * stopped between minting and writing it, as SIGSTOP does) is no
     * second minter. */
    if (js != NULL)
        fprintf(js, "],\n \"moves\": [");
    printf("node moves (node: from -> to, ms from the old holder's last ID to the new one's first):\n");
    uint64_t shared = 0;
    {
        node_at *v = malloc((n_sf + 1) * sizeof *v);
        size_t m = 0;
        if (v == NULL)
            die("out of memory");
        for (size_t i = 0; i < C.n; i++) {
            int64_t ms;
            if (C.r[i].kind != FC_KIND_SF)
                continue;
            int64_t nd = node_of(C.r[i].id, &ms);
            int64_t stamp_us = ms * 1000;
            if (nd >= 0)
                v[m++] = (node_at){nd, C.r[i].recv_us,
                                   stamp_us < C.r[i].recv_us ? stamp_us : C.r[i].recv_us,
                                   C.r[i].id, C.r[i].inst};
        }
        qsort(v, m, sizeof *v, cmp_node_id);
        int moves = 0;
        int64_t longest = 0, run_last = m > 0 ? v[0].t : 0, run_minted = m > 0 ? v[0].minted : 0;
        for (size_t i = 1; i <= m; i++) {
            bool same = i < m && v[i].node == v[i - 1].node && v[i].inst == v[i - 1].inst;
            if (same || i == m) {
                if (i < m && v[i].t > run_last)
                    run_last = v[i].t;
                if (i < m && v[i].minted > run_minted)
                    run_minted = v[i].minted;
                continue;
            }
            if (v[i].node != v[i - 1].node) {
                run_last = v[i].t;
                run_minted = v[i].minted;
                continue;
            }
            /* The new run's first receipt: the earliest of its IDs. */
            int64_t first = v[i].t;
            size_t j = i;
            for (; j < m && v[j].node == v[i].node && v[j].inst == v[i].inst; j++) {
                if (v[j].t < first)
                    first = v[j].t;
            }
            int64_t gap = first - run_last;
            if (gap > longest)
                longest = gap;
            int fi = fault_of(run_last, first);
            printf("  node %" PRId64 ": %d -> %d, %.1f ms at %" PRId64 " us (%s)\n", v[i].node,
                   v[i - 1].inst, v[i].inst, (double)gap / 1000, run_last,
                   fi >= 0 ? C.f[fi].name : "no fault");
            if (first - run_minted < -SHARED_MS * 1000) {
                if (shared < SHOW)
                    printf("SHARED node %" PRId64 ": instance %d received %" PRIu64
                           " at %" PRId64 " us, %.1f ms before instance %d last minted an ID "
                           "below it\n",
                           v[i].node, v[i].inst, v[i].id, first,
                           (double)(run_minted - first) / 1000, v[i - 1].inst);
                shared++;
            }
            if (js != NULL)
                fprintf(js, "%s\n  {\"node\": %" PRId64 ", \"from\": %d, \"to\": %d, \"ms\": %.1f, \"at_us\": %" PRId64 ", \"fault\": \"%s\"}",
                        moves ? "," : "", v[i].node, v[i - 1].inst, v[i].inst,
                        (double)gap / 1000, run_last, fi >= 0 ? C.f[fi].name : "");
            moves++;
            /* The new run's latest receipt so far. */
            run_last = v[i].t;
            run_minted = v[i].minted;
        }
        printf("  %d moves, the longest %.1f ms; nodes minted by two instances at once: %" PRIu64
               "\n",
               moves, (double)longest / 1000, shared);
        free(v);
    }
    if (js != NULL) {
        fprintf(js, "],\n \"shared\": %" PRIu64 "}\n", shared);
        if (fclose(js) != 0)
            die("cannot write %s: %s", json, strerror(errno));
    }
    bool bad = dups || order || fencing || segrange || shared;
    printf("%s\n", bad ? "VIOLATIONS FOUND" : "no violation");
    free(C.r);
    return bad ? 1 : 0;
}
