/*
 * hwm_loop.h - the mark's executor on the loop (hwm_loop.c): its writes
 * and looks on libuv's thread pool, its retry timer and the look every
 * second, for hwm.c (which has no libuv: idms_hwm_exec). Not installed.
 */
#ifndef IDMS_HWM_LOOP_H
#define IDMS_HWM_LOOP_H

#include "hwm.h"

#include <uv.h>

typedef struct idms_hwm_loop {
    idms_hwm *hwm;
    uv_loop_t *loop; /* set by idms_hwm_loop_start */
    uv_work_t work;
    uv_timer_t retry; /* after a failure, every second */
    uv_timer_t check; /* every second: is the mark still there? */
} idms_hwm_loop;

/* The executor for h's configuration (idms_hwm_config.exec), before
 * idms_hwm_open: its functions run on loop once idms_hwm_loop_start has
 * been called (h's first write, idms_hwm_commit, runs before, on the
 * caller's thread). */
idms_hwm_exec idms_hwm_loop_exec(idms_hwm_loop *l, idms_hwm *h);
/* Starts the timers on loop (the look every second when h has a state
 * directory); neither keeps the loop alive. */
void idms_hwm_loop_start(idms_hwm_loop *l, uv_loop_t *loop);

#endif
