/*
 * os/os.h - the OS boundary: clocks, sleep, wipe, fork generation (src/os/linux).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_OS_H
#define IDM_OS_H

#include "base.h"

/* ---- OS boundary (src/os/linux) ------------------------------------------ */

int idm__os_clock_now_ns(void *ctx, int64_t *unix_ns);
void idm__os_sleep_ns(void *ctx, int64_t ns);
/* CLOCK_MONOTONIC in nanoseconds (an arbitrary origin), for durations;
 * shaped as an idm_clock's now_ns. IDM_OK or IDM_ECLOCK. */
int idm__os_monotonic_ns(void *ctx, int64_t *ns);
/* Wipes memory in a way the compiler may not elide. */
void idm__wipe(void *p, size_t n);
/* Registers (once per process) the pthread_atfork handler behind
 * idm__fork_generation. IDM_OK or IDM_ENOMEM. Every generator's _new calls
 * it before reading the generation. */
int idm__fork_watch(void);
/* A counter that increases in every child process after fork(); one
 * relaxed load. */
uint64_t idm__fork_generation(void);
extern _Atomic uint64_t idm__fork_generation_counter;

#endif
