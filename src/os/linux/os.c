/*
 * os.c - the Linux boundary: the real-time and monotonic clocks, sleeping,
 * memory wiping and fork detection. The only file that includes Linux/POSIX time and
 * process headers; errno becomes an IDM_E* code here, once.
 */
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

int idm__os_clock_now_ns(void *ctx, int64_t *unix_ns)
{
    (void)ctx;
    struct timespec ts;
    /* CLOCK_REALTIME goes through the vDSO (about 26 ns here, no system
     * call). IDs carry wall-clock time, so a monotonic clock would not do;
     * the generators themselves guard against it stepping back. */
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return IDM_ECLOCK;
    *unix_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return IDM_OK;
}

int idm__os_monotonic_ns(void *ctx, int64_t *ns)
{
    (void)ctx;
    struct timespec ts;
    /* Durations only (the segment step): a wall-clock step must not make a
     * range look as if it lasted a day, or no time at all. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return IDM_ECLOCK;
    *ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return IDM_OK;
}

void idm__os_sleep_ns(void *ctx, int64_t ns)
{
    (void)ctx;
    if (ns <= 0)
        ns = 1;
    struct timespec req = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)};
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}

void idm__wipe(void *p, size_t n)
{
    explicit_bzero(p, n);
}

/* Incremented in every child after fork(). Generators compare it with the
 * value they saw last: one relaxed load per call instead of a getpid()
 * system call (about 1 us on these machines). */
_Atomic uint64_t idm__fork_generation_counter;
static atomic_bool fork_watched;
static pthread_mutex_t fork_watch_lock = PTHREAD_MUTEX_INITIALIZER;

/* The fork gate (os.h). Sequentially consistent: a thread counts itself
 * inside, then looks for a fork; a fork counts itself, then looks for
 * threads inside. One of the two sees the other. */
static atomic_uint gate_inside;  /* threads between _enter and _leave */
static atomic_uint gate_forking; /* forks between prepare and parent */
/* This thread is inside: a fork from a signal handler that interrupted
 * this thread's fill waits for the others only, not for itself. */
static _Thread_local unsigned gate_mine;

void idm__fork_gate_enter(void)
{
    for (;;) {
        while (atomic_load(&gate_forking) != 0)
            sched_yield();
        atomic_fetch_add(&gate_inside, 1);
        if (atomic_load(&gate_forking) == 0) {
            gate_mine = 1;
            return;
        }
        atomic_fetch_sub(&gate_inside, 1);
    }
}

void idm__fork_gate_leave(void)
{
    gate_mine = 0;
    atomic_fetch_sub(&gate_inside, 1);
}

static void on_fork_prepare(void)
{
    atomic_fetch_add(&gate_forking, 1);
    while (atomic_load(&gate_inside) != gate_mine)
        sched_yield();
}

static void on_fork_parent(void)
{
    atomic_fetch_sub(&gate_forking, 1);
}

static void on_fork_child(void)
{
    /* Only the forking thread lives on: nobody else is inside (it may be,
     * if it forked from a signal handler in the middle of a fill, and will
     * leave), and another thread's fork under way in the parent is not
     * this process's. */
    atomic_store(&gate_inside, gate_mine);
    atomic_store(&gate_forking, 0);
    atomic_fetch_add_explicit(&idm__fork_generation_counter, 1, memory_order_relaxed);
}

int idm__fork_watch(void)
{
    if (atomic_load_explicit(&fork_watched, memory_order_acquire))
        return IDM_OK;
    int rc = IDM_OK;
    pthread_mutex_lock(&fork_watch_lock);
    if (!atomic_load_explicit(&fork_watched, memory_order_relaxed)) {
        if (pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child) != 0)
            rc = IDM_ENOMEM;
        else
            atomic_store_explicit(&fork_watched, true, memory_order_release);
    }
    pthread_mutex_unlock(&fork_watch_lock);
    return rc;
}

uint64_t idm__fork_generation(void)
{
    return atomic_load_explicit(&idm__fork_generation_counter, memory_order_relaxed);
}
