/*
 * waitlist.h - keyed wait lists: parked requests wait on the list of what
 * they wait for, and waking that key wakes exactly its waiters (as Redis's
 * blocked.c keeps blocked clients per key instead of scanning them all).
 *
 * A key is whatever owns an idms_waitq: the generators' ceiling (one list,
 * the server's), a segment tag (a list in each tag: segments.h). A point in
 * time is a key too, but its list is libuv's timer heap: a request parked
 * until a time has a timer of its own (conn.c), which wakes it alone.
 *
 * The waiter is intrusive (a member of the waiting object), so waiting
 * allocates nothing and cannot fail; it carries the function that wakes
 * it, set by its owner, so whoever raises a key (a service, a thread's
 * result on the loop) wakes requests without knowing what they are. It is
 * three words (a connection holds one), so it does not know its list:
 * taking it off needs only its neighbours. No libuv, no locks: one thread
 * (the loop) owns every list. Not installed.
 */
#ifndef IDMS_WAITLIST_H
#define IDMS_WAITLIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct idms_waiter idms_waiter;
/* Wakes w, which is already off its list (it may wait again at once). */
typedef void idms_wake_fn(idms_waiter *w);

struct idms_waiter {
    idms_waiter *prev, *next; /* in its list's ring; NULL: not waiting */
    idms_wake_fn *wake;
};

/* One key's waiters, oldest first: a ring through head. */
typedef struct idms_waitq {
    idms_waiter head;
} idms_waitq;

/* An empty list. */
void idms_waitq_init(idms_waitq *q);
/* A waiter that waits for nothing yet, woken by wake. */
void idms_waiter_init(idms_waiter *w, idms_wake_fn *wake);
/* Whether w is on a list. */
static inline bool idms_waiter_waiting(const idms_waiter *w)
{
    return w->next != NULL;
}
static inline bool idms_waitq_empty(const idms_waitq *q)
{
    return q->head.next == &q->head;
}
/* How many wait on q (a walk of the list: for tests and assertions). */
size_t idms_waitq_count(const idms_waitq *q);
/* Puts w at the end of q; a w already waiting moves there (from any list). */
void idms_waitq_add(idms_waitq *q, idms_waiter *w);
/* Takes w off its list; nothing when it is not waiting. */
void idms_waiter_remove(idms_waiter *w);
/* Moves every waiter of from to the end of to, in their order (to collect
 * the waiters of several keys and wake them together, after the keys'
 * owner is done changing them). */
void idms_waitq_move(idms_waitq *to, idms_waitq *from);
/* Wakes every waiter on q, oldest first, each taken off q before its wake
 * runs. A wake may make waiters wait on q again, or take others off it:
 * those that wait again, or anew, are not woken by this call (they wait
 * for the next change of the key). Returns how many were woken. */
size_t idms_waitq_wake(idms_waitq *q);

#endif
