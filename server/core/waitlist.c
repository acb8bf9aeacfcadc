/*
 * waitlist.c - keyed wait lists (waitlist.h): doubly linked rings, so that
 * adding, removing and waking are O(1) per waiter.
 */
#include "core/waitlist.h"

void idms_waitq_init(idms_waitq *q)
{
    q->head.prev = q->head.next = &q->head;
    q->head.wake = NULL;
}

void idms_waiter_init(idms_waiter *w, idms_wake_fn *wake)
{
    w->prev = w->next = NULL;
    w->wake = wake;
}

size_t idms_waitq_count(const idms_waitq *q)
{
    size_t n = 0;
    for (const idms_waiter *w = q->head.next; w != &q->head; w = w->next)
        n++;
    return n;
}

void idms_waiter_remove(idms_waiter *w)
{
    if (w->next == NULL)
        return;
    w->prev->next = w->next;
    w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

void idms_waitq_add(idms_waitq *q, idms_waiter *w)
{
    idms_waiter_remove(w);
    w->prev = q->head.prev;
    w->next = &q->head;
    q->head.prev->next = w;
    q->head.prev = w;
}

void idms_waitq_move(idms_waitq *to, idms_waitq *from)
{
    if (from == to || idms_waitq_empty(from))
        return;
    /* from's ring, spliced whole before to's head. */
    idms_waiter *first = from->head.next, *last = from->head.prev;
    first->prev = to->head.prev;
    to->head.prev->next = first;
    last->next = &to->head;
    to->head.prev = last;
    from->head.prev = from->head.next = &from->head;
}

size_t idms_waitq_wake(idms_waitq *q)
{
    /* The waiters of this round are moved to a list of their own first:
     * whatever a wake does to q (waiting again, new waiters, removals) does
     * not change who this call wakes, and a waiter taken off the round's
     * list by an earlier wake (its connection closed) is not woken. */
    idms_waitq round;
    idms_waitq_init(&round);
    idms_waitq_move(&round, q);
    size_t woken = 0;
    while (!idms_waitq_empty(&round)) {
        idms_waiter *w = round.head.next;
        idms_waiter_remove(w);
        woken++;
        w->wake(w);
    }
    return woken;
}
