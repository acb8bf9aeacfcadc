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
/* Registers (once per process) the pthread_atfork handlers behind
 * idm__fork_generation and the fork gate. IDM_OK or IDM_ENOMEM. Every generator's _new calls
 * it before reading the generation. */
int idm__fork_watch(void);
/* A counter that increases in every child process after fork(); one
 * relaxed load. */
uint64_t idm__fork_generation(void);
extern _Atomic uint64_t idm__fork_generation_counter;
/* The fork gate: a region fork() waits for. fork() in a threaded process
 * copies every lock as it stands, and a lock that another thread held at
 * that instant stays held in the child for ever. The library's own locks
 * are fork-proof words (randsrc.c), but OpenSSL's DRBG locks are not: a
 * child whose parent forked while another thread was inside RAND_bytes
 * hung in its first RAND_bytes (Python binding, test_fork.py). A thread
 * calls RAND_bytes between _enter and _leave; idm__fork_watch's prepare
 * handler closes the gate and waits until no thread is inside (a fill of
 * 4 KiB, microseconds), and the parent and child handlers open it again.
 * Guards only the library's calls: another component of the process that
 * calls OpenSSL from a thread while a third forks is that component's
 * affair. Two atomic operations per entry (once per 4 KiB pool). */
void idm__fork_gate_enter(void);
void idm__fork_gate_leave(void);

#endif
