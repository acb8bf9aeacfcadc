/*
 * optparse.c - see optparse.h. All state lives in the caller's
 * idmx_optparse, so parsing is reentrant and restartable (getopt's optind,
 * optarg and opterr are the globals this avoids).
 */
#include "optparse.h"

#include <stdio.h>
#include <string.h>

void idmx_opt_init(idmx_optparse *p, int argc, char **argv, int start)
{
    memset(p, 0, sizeof *p);
    p->argc = argc;
    p->argv = argv;
    p->index = start;
}

static const idmx_option *find_long(const idmx_option *opts, const char *name, size_t len)
{
    for (; opts->id != 0; opts++) {
        if (opts->long_name != NULL && strlen(opts->long_name) == len &&
            memcmp(opts->long_name, name, len) == 0) {
            return opts;
        }
    }
    return NULL;
}

static const idmx_option *find_short(const idmx_option *opts, int c)
{
    for (; opts->id != 0; opts++) {
        if (opts->short_name != 0 && opts->short_name == c) {
            return opts;
        }
    }
    return NULL;
}

static int parse_long(idmx_optparse *p, const idmx_option *opts, const char *body)
{
    const char *eq = strchr(body, '=');
    size_t len = eq != NULL ? (size_t)(eq - body) : strlen(body);
    const idmx_option *o = find_long(opts, body, len);
    p->index++;
    if (o == NULL) {
        snprintf(p->errmsg, sizeof p->errmsg, "unknown option '--%.*s'", (int)(len > 64 ? 64 : len),
                 body);
        return IDMX_OPT_ERROR;
    }
    snprintf(p->name_buf, sizeof p->name_buf, "--%s", o->long_name);
    p->name = p->name_buf;
    if (o->has_arg == IDMX_NO_ARG) {
        if (eq != NULL) {
            snprintf(p->errmsg, sizeof p->errmsg, "option '%s' takes no value", p->name);
            return IDMX_OPT_ERROR;
        }
        return o->id;
    }
    if (eq != NULL) {
        p->arg = eq + 1;
        return o->id;
    }
    if (p->index >= p->argc) {
        snprintf(p->errmsg, sizeof p->errmsg, "option '%s' needs a value", p->name);
        return IDMX_OPT_ERROR;
    }
    p->arg = p->argv[p->index++];
    return o->id;
}

/* The option at argv[index][sub], inside a cluster such as "-jn5". */
static int parse_short(idmx_optparse *p, const idmx_option *opts)
{
    const char *word = p->argv[p->index];
    unsigned char c = (unsigned char)word[p->sub];
    const idmx_option *o = find_short(opts, c);
    const char *rest = word + p->sub + 1;
    if (o == NULL) {
        if (c >= 0x20 && c < 0x7f) {
            snprintf(p->errmsg, sizeof p->errmsg, "unknown option '-%c'", c);
        } else {
            snprintf(p->errmsg, sizeof p->errmsg, "unknown option in '%.64s'", word);
        }
        p->index++;
        p->sub = 0;
        return IDMX_OPT_ERROR;
    }
    snprintf(p->name_buf, sizeof p->name_buf, "-%c", c);
    p->name = p->name_buf;
    if (o->has_arg == IDMX_NO_ARG) {
        if (*rest == '\0') {
            p->index++;
            p->sub = 0;
        } else {
            p->sub++;
        }
        return o->id;
    }
    /* The value is the rest of this word (-n5) or the next word (-n 5). */
    p->index++;
    p->sub = 0;
    if (*rest != '\0') {
        p->arg = rest;
        return o->id;
    }
    if (p->index >= p->argc) {
        snprintf(p->errmsg, sizeof p->errmsg, "option '%s' needs a value", p->name);
        return IDMX_OPT_ERROR;
    }
    p->arg = p->argv[p->index++];
    return o->id;
}

int idmx_opt_next(idmx_optparse *p, const idmx_option *opts)
{
    p->arg = NULL;
    p->errmsg[0] = '\0';
    if (p->sub > 0) {
        return parse_short(p, opts);
    }
    if (p->index >= p->argc) {
        return IDMX_OPT_END;
    }
    const char *word = p->argv[p->index];
    if (p->operands_only || word[0] != '-' || word[1] == '\0') {
        p->arg = word;
        p->index++;
        return IDMX_OPT_OPERAND;
    }
    if (word[1] == '-') {
        if (word[2] == '\0') {
            p->operands_only = 1;
            p->index++;
            return idmx_opt_next(p, opts);
        }
        return parse_long(p, opts, word + 2);
    }
    p->sub = 1;
    return parse_short(p, opts);
}

int idmx_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (s == NULL || *s == '\0') {
        return -1;
    }
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9') {
            return -1;
        }
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return -1;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int idmx_parse_i64(const char *s, int64_t *out)
{
    uint64_t mag;
    int neg = s != NULL && s[0] == '-';
    if (idmx_parse_u64(neg ? s + 1 : s, &mag) != 0) {
        return -1;
    }
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1) {
            return -1;
        }
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX) {
            return -1;
        }
        *out = (int64_t)mag;
    }
    return 0;
}
