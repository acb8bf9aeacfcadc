/*
 * mint.c - the mint service behind both protocols: count IDs of a format,
 * rendered as lines, a JSON array or a RESP reply, with the clock
 * discipline turned into statuses (503 + Retry-After while a rewind is
 * refused) and the time high-water mark reserved on disk before use.
 */
#include "idmintd.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char *const idms_format_names[IDMS_FMT_COUNT] = {
    "uuidv7", "uuidv4", "ulid", "ksuid", "snowflake", "typeid", "token", "traceparent"};

int idms_format_from_name(const char *s, size_t len)
{
    for (int i = 0; i < IDMS_FMT_COUNT; i++) {
        if (strlen(idms_format_names[i]) == len && memcmp(idms_format_names[i], s, len) == 0)
            return i;
    }
    return -1;
}

static void fail(idms_mint_result *r, int status, const char *message)
{
    r->status = status;
    snprintf(r->message, sizeof r->message, "%s", message);
}

/* Appends the ids in text[0..len) (newline-terminated lines) to out in the
 * requested style. */
static void render(const char *text, size_t len, uint64_t count, int style, idms_buf *out)
{
    if (style == IDMS_OUT_LINES) {
        idms_buf_append(out, text, len);
        return;
    }
    if (style == IDMS_OUT_JSON)
        idms_buf_puts(out, "[");
    else if (count != 1)
        idms_buf_printf(out, "*%" PRIu64 "\r\n", count);
    const char *p = text, *end = text + len;
    bool first = true;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)(nl - p);
        if (style == IDMS_OUT_JSON) {
            /* IDs are ASCII without quotes or backslashes: no escaping. */
            if (!first)
                idms_buf_puts(out, ",");
            idms_buf_puts(out, "\"");
            idms_buf_append(out, p, n);
            idms_buf_puts(out, "\"");
        } else {
            idms_buf_printf(out, "$%zu\r\n", n);
            idms_buf_append(out, p, n);
            idms_buf_puts(out, "\r\n");
        }
        first = false;
        p = nl + 1;
    }
    if (style == IDMS_OUT_JSON)
        idms_buf_puts(out, "]\n");
}

static int mint_text(idms_server *s, int format, const char *prefix, uint64_t count, idms_buf *tmp,
                     idm_error *err)
{
    size_t n = (size_t)count;
    int lib_format = format == IDMS_FMT_UUIDV7 ? IDM_FORMAT_UUIDV7
                     : format == IDMS_FMT_UUIDV4 ? IDM_FORMAT_UUIDV4
                     : format == IDMS_FMT_ULID   ? IDM_FORMAT_ULID
                     : format == IDMS_FMT_KSUID  ? IDM_FORMAT_KSUID
                                                 : 0;
    if (lib_format != 0) {
        size_t cap = n * (IDM_UUID_STRLEN + 1);
        char *p = idms_buf_reserve(tmp, cap);
        if (p == NULL)
            return IDM_ENOMEM;
        size_t len = 0;
        int rc = idm_gen_next_text_n(s->gen, lib_format, p, cap, n, IDM_TEXT_NEWLINE, &len, err);
        tmp->len += len;
        return rc;
    }
    if (format == IDMS_FMT_SNOWFLAKE) {
        int64_t now = 0;
        idm_clock clock = idm_clock_system();
        int64_t ns;
        if (clock.now_ns(clock.ctx, &ns) == IDM_OK)
            now = ns / 1000000;
        int rc = idms_hwm_reserve(s, now);
        if (rc != IDM_OK) {
            snprintf(err->msg, sizeof err->msg, "cannot persist the time high-water mark");
            return IDM_ESTATE;
        }
        size_t cap = n * 21 + 1;
        char *p = idms_buf_reserve(tmp, cap);
        if (p == NULL)
            return IDM_ENOMEM;
        size_t len = 0;
        rc = idm_snowflake_next_text_n(s->sf, p, cap, n, IDM_TEXT_NEWLINE, &len, err);
        tmp->len += len;
        return rc;
    }
    size_t prefix_len = prefix ? strlen(prefix) : 0;
    for (size_t i = 0; i < n; i++) {
        char *p = idms_buf_reserve(tmp, IDM_TYPEID_STRLEN_MAX + 2);
        if (p == NULL)
            return IDM_ENOMEM;
        int rc;
        if (format == IDMS_FMT_TYPEID) {
            idm_uuid u;
            rc = idm_uuidv7_next_n(s->gen, &u, 1, err);
            if (rc == IDM_OK)
                rc = idm_typeid_format(prefix, prefix_len, &u, p, IDM_TYPEID_STRLEN_MAX + 1, err);
        } else if (format == IDMS_FMT_TOKEN) {
            rc = idm_token_next(s->gen, prefix ? prefix : "", prefix_len, p, IDM_TOKEN_STRLEN_MAX + 1, err);
        } else {
            rc = idm_traceparent_next(s->gen, p, IDM_TRACEPARENT_STRLEN + 1, err);
        }
        if (rc != IDM_OK)
            return rc;
        size_t len = strlen(p);
        p[len] = '\n';
        tmp->len += len + 1;
    }
    return IDM_OK;
}

void idms_mint(idms_server *s, int format, const char *prefix, uint64_t count, int style,
               idms_buf *out, idms_mint_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
    if (count == 0 || count > s->opt.max_count) {
        char msg[64];
        snprintf(msg, sizeof msg, "count must be from 1 to %" PRIu64, s->opt.max_count);
        fail(r, 400, msg);
        return;
    }
    bool prefixed = format == IDMS_FMT_TYPEID || format == IDMS_FMT_TOKEN;
    if (prefix != NULL && !prefixed) {
        char msg[96];
        snprintf(msg, sizeof msg, "prefix applies only to typeid and token, not %s", idms_format_names[format]);
        fail(r, 400, msg);
        return;
    }
    if (format == IDMS_FMT_TYPEID && prefix == NULL) {
        fail(r, 400, "typeid needs a prefix (e.g. prefix=user)");
        return;
    }
    idm_error err = {0};
    if (prefix != NULL && idm_typeid_check_prefix(prefix, strlen(prefix), &err) != IDM_OK) {
        char msg[IDM_ERROR_MSG_CAP + 32];
        snprintf(msg, sizeof msg, "invalid prefix: %s", err.msg);
        fail(r, 400, msg);
        return;
    }
    idms_buf tmp;
    idms_buf_init(&tmp);
    int rc = mint_text(s, format, prefix, count, &tmp, &err);
    if (rc == IDM_OK && !tmp.failed) {
        s->metrics.minted[format] += count;
        render(tmp.data, tmp.len, count, style, out);
    } else if (rc == IDM_ECLOCK_REWIND) {
        s->metrics.clock_refusals++;
        s->metrics.clock_rewinds++;
        r->status = 503;
        r->retry_after_s = err.rewind_ms / 1000 + 1;
        snprintf(r->message, sizeof r->message, "%s", err.msg);
        /* One line per second at most: a refused clock under load would
         * otherwise write a line per request. */
        static time_t last_logged;
        time_t now = time(NULL);
        if (now != last_logged) {
            last_logged = now;
            idms_log(IDMS_LOG_WARN, "refusing to mint %s: %s (%" PRIu64 " refusals so far)",
                     idms_format_names[format], err.msg, s->metrics.clock_refusals);
        }
    } else if (rc == IDM_ETIME_RANGE) {
        r->status = 503;
        r->retry_after_s = 0;
        snprintf(r->message, sizeof r->message, "%s", err.msg);
    } else {
        r->status = 500;
        snprintf(r->message, sizeof r->message, "%s", rc == IDM_ENOMEM || tmp.failed ? "out of memory" : err.msg);
        idms_log(IDMS_LOG_ERROR, "cannot mint %s: %s", idms_format_names[format], r->message);
    }
    idms_buf_free(&tmp);
}

bool idms_ready(idms_server *s, char *why, size_t cap)
{
    idm_clock clock = idm_clock_system();
    int64_t ns;
    if (clock.now_ns(clock.ctx, &ns) != IDM_OK) {
        snprintf(why, cap, "the clock cannot be read");
        return false;
    }
    int64_t now = ns / 1000000, high = idm_snowflake_high_water_ms(s->sf);
    if (now < high - s->opt.max_rewind_ms) {
        snprintf(why, cap, "the clock is %" PRId64 " ms behind the latest time used (tolerance %" PRId64 " ms)",
                 high - now, s->opt.max_rewind_ms);
        return false;
    }
    snprintf(why, cap, "ready");
    return true;
}
