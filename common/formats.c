/*
 * formats.c - see formats.h. Every fact is read from the library's table
 * (idm_format_at); nothing about a format is written here.
 */
#include "formats.h"

#include <idmint/inspect.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static idmx_format table[IDMX_FMT_COUNT];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
/* The table once filled (release after the fill, acquire before use): the
 * lookups on a server's every request skip pthread_once's call. */
static _Atomic(const idmx_format *) table_ready;

static void fill_table(void)
{
    for (size_t i = 0; i < IDMX_FMT_COUNT; i++) {
        const idm_format *f = idm_format_at(i);
        if (f == NULL) {
            break; /* test_formats fails: the library has fewer rows */
        }
        table[i].id = (int)i;
        table[i].name = f->name;
        table[i].name_len = strlen(f->name);
        /* idm_gen_next_text_n writes the formats numbered up to KSUID's. */
        table[i].lib_format =
            f->minted_by == IDM_FORMAT_BY_GEN && f->id <= IDM_FORMAT_KSUID ? f->id : 0;
        table[i].text_len = f->text_len;
        table[i].text_max = f->text_max;
        table[i].time_ordered = f->time_ordered != 0;
        table[i].prefix = f->prefix;
        table[i].lib = f;
    }
    atomic_store_explicit(&table_ready, table, memory_order_release);
}

const idmx_format *idmx_format_table(void)
{
    const idmx_format *t = atomic_load_explicit(&table_ready, memory_order_acquire);
    if (t != NULL) {
        return t;
    }
    (void)pthread_once(&table_once, fill_table);
    return table;
}

const idmx_format *idmx_format_by_name(const char *s, size_t len)
{
    const idmx_format *t = idmx_format_table();
    for (size_t i = 0; s != NULL && i < IDMX_FMT_COUNT; i++) {
        if (t[i].name_len == len && memcmp(t[i].name, s, len) == 0) {
            return &t[i];
        }
    }
    return NULL;
}

static bool selected(const idm_format *f, unsigned flags)
{
    if ((flags & IDMX_LIST_PREFIXED) != 0 && f->prefix == IDM_PREFIX_NONE) {
        return false;
    }
    if ((flags & IDMX_LIST_TIME_ORDERED) != 0 && !f->time_ordered) {
        return false;
    }
    return true;
}

/* Appends name, the k-th (from 1) of n items, to the list at dst (len
 * bytes so far): ", " between items, " conj " before the last. false
 * when cap is too small. */
static bool list_add(char *dst, size_t cap, size_t *len, size_t k, size_t n, const char *conj,
                     const char *name)
{
    const char *sep = k == 1 ? "" : k < n ? ", " : " ";
    const char *word = k > 1 && k == n ? conj : "";
    int w =
        snprintf(dst + *len, cap - *len, "%s%s%s%s", sep, word, word[0] != '\0' ? " " : "", name);
    if (w < 0 || (size_t)w >= cap - *len) {
        dst[0] = '\0';
        return false;
    }
    *len += (size_t)w;
    return true;
}

size_t idmx_format_list(char *dst, size_t cap, unsigned flags, const char *conj)
{
    size_t n = 0, k = 0, len = 0;
    if (cap == 0) {
        return (size_t)-1;
    }
    dst[0] = '\0';
    for (size_t i = 0; i < idm_format_count(); i++) {
        n += selected(idm_format_at(i), flags);
    }
    for (size_t i = 0; i < idm_format_count(); i++) {
        const idm_format *f = idm_format_at(i);
        if (selected(f, flags) && !list_add(dst, cap, &len, ++k, n, conj, f->name)) {
            return (size_t)-1;
        }
    }
    return len;
}

size_t idmx_kind_list(char *dst, size_t cap, const char *conj)
{
    size_t n = 0, len = 0;
    if (cap == 0) {
        return (size_t)-1;
    }
    dst[0] = '\0';
    while (idm_kind_name((int)n + 1) != NULL) {
        n++;
    }
    for (size_t k = 1; k <= n; k++) {
        if (!list_add(dst, cap, &len, k, n, conj, idm_kind_name((int)k))) {
            return (size_t)-1;
        }
    }
    return len;
}
