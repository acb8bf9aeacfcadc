/*
 * hwm_loop.c - the mark's executor over libuv (hwm_loop.h).
 */
#include "hwm_loop.h"

#define CHECK_MS 1000

static void on_work(uv_work_t *w)
{
    idms_hwm_loop *l = w->data;
    idms_hwm_work(l->hwm);
}

static void on_work_done(uv_work_t *w, int status)
{
    idms_hwm_loop *l = w->data;
    idms_hwm_work_done(l->hwm, status != 0);
}

static int queue(void *ctx)
{
    idms_hwm_loop *l = ctx;
    l->work.data = l;
    return uv_queue_work(l->loop, &l->work, on_work, on_work_done) == 0 ? 0 : -1;
}

static void on_retry(uv_timer_t *t)
{
    idms_hwm_loop *l = t->data;
    idms_hwm_retry(l->hwm);
}

static void retry_in(void *ctx, uint64_t ms)
{
    idms_hwm_loop *l = ctx;
    uv_timer_start(&l->retry, on_retry, ms, 0);
}

static void on_check(uv_timer_t *t)
{
    idms_hwm_loop *l = t->data;
    idms_hwm_check(l->hwm);
}

idms_hwm_exec idms_hwm_loop_exec(idms_hwm_loop *l, idms_hwm *h)
{
    l->hwm = h;
    idms_hwm_exec e = {l, queue, retry_in};
    return e;
}

void idms_hwm_loop_start(idms_hwm_loop *l, uv_loop_t *loop)
{
    l->loop = loop;
    uv_timer_init(loop, &l->retry);
    l->retry.data = l;
    uv_unref((uv_handle_t *)&l->retry);
    uv_timer_init(loop, &l->check);
    l->check.data = l;
    if (idms_hwm_enabled(l->hwm))
        uv_timer_start(&l->check, on_check, CHECK_MS, CHECK_MS);
    uv_unref((uv_handle_t *)&l->check);
}
