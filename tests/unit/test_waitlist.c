/*
 * test_waitlist.c - idmintd's keyed wait lists (server/core/waitlist.c):
 * waking a key wakes exactly its waiters, oldest first, each once; a
 * waiter that waits again from its wake waits for the next round; a waiter
 * taken off its list (its connection closed) is not woken; lists of
 * several keys move together. Links without libuv.
 */
#include "testlib.h"

#include "core/waitlist.h"

typedef struct req {
    idms_waiter w; /* first */
    int id;
    int woken;
    idms_waitq *again; /* its wake waits on this list again */
    idms_waiter *drop; /* its wake takes this one off its list */
} req;

static int order[16];
static int n_order;

static void on_wake(idms_waiter *w)
{
    req *r = (req *)w;
    ASSERT_TRUE(!idms_waiter_waiting(w));
    r->woken++;
    if (n_order < 16)
        order[n_order++] = r->id;
    if (r->again != NULL)
        idms_waitq_add(r->again, w);
    if (r->drop != NULL)
        idms_waiter_remove(r->drop);
}

static void make(req *r, int n)
{
    n_order = 0;
    for (int i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof r[i]);
        idms_waiter_init(&r[i].w, on_wake);
        r[i].id = i;
    }
}

static void init_lists(idms_waitq *q, int n)
{
    for (int i = 0; i < n; i++)
        idms_waitq_init(&q[i]);
}

static void test_waitlist_remove_when_not_waiting(void)
{
    req r[1];
    make(r, 1);
    ASSERT_TRUE(!idms_waiter_waiting(&r[0].w));
    idms_waiter_remove(&r[0].w); /* nothing */
    idms_waitq q;
    idms_waitq_init(&q);
    ASSERT_TRUE(idms_waitq_empty(&q));
    ASSERT_EQ_U64(idms_waitq_wake(&q), 0);
    idms_waitq_add(&q, &r[0].w);
    idms_waiter_remove(&r[0].w);
    idms_waiter_remove(&r[0].w);
    ASSERT_TRUE(idms_waitq_empty(&q));
    ASSERT_EQ_U64(idms_waitq_wake(&q), 0);
    ASSERT_EQ_INT(r[0].woken, 0);
}

static void test_waitlist_wakes_exactly_its_key(void)
{
    req r[6];
    make(r, 6);
    idms_waitq keys[3];
    init_lists(keys, 3);
    idms_waitq *ceiling = &keys[0], *tag_a = &keys[1], *tag_b = &keys[2];
    idms_waitq_add(tag_a, &r[0].w);
    idms_waitq_add(ceiling, &r[1].w);
    idms_waitq_add(tag_a, &r[2].w);
    idms_waitq_add(tag_b, &r[3].w);
    idms_waitq_add(tag_a, &r[4].w);
    ASSERT_EQ_U64(idms_waitq_count(tag_a), 3);
    ASSERT_EQ_U64(idms_waitq_wake(tag_a), 3);
    ASSERT_EQ_INT(n_order, 3);
    ASSERT_EQ_INT(order[0], 0);
    ASSERT_EQ_INT(order[1], 2);
    ASSERT_EQ_INT(order[2], 4);
    ASSERT_EQ_INT(r[1].woken, 0);
    ASSERT_EQ_INT(r[3].woken, 0);
    ASSERT_EQ_INT(r[5].woken, 0);
    ASSERT_TRUE(idms_waitq_empty(tag_a));
    ASSERT_TRUE(idms_waiter_waiting(&r[1].w));
    ASSERT_EQ_U64(idms_waitq_wake(tag_a), 0);
    ASSERT_EQ_U64(idms_waitq_wake(ceiling), 1);
    ASSERT_EQ_INT(order[3], 1);
    ASSERT_EQ_U64(idms_waitq_wake(tag_b), 1);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ_INT(r[i].woken, 1);
}

static void test_waitlist_add_moves_between_keys(void)
{
    req r[2];
    make(r, 2);
    idms_waitq a, b;
    idms_waitq_init(&a);
    idms_waitq_init(&b);
    idms_waitq_add(&a, &r[0].w);
    idms_waitq_add(&a, &r[1].w);
    idms_waitq_add(&b, &r[0].w);
    ASSERT_EQ_U64(idms_waitq_count(&a), 1);
    ASSERT_EQ_U64(idms_waitq_count(&b), 1);
    ASSERT_EQ_U64(idms_waitq_wake(&a), 1);
    ASSERT_EQ_INT(order[0], 1);
    ASSERT_EQ_INT(r[0].woken, 0);
}

static void test_waitlist_waiting_again_waits_for_the_next_round(void)
{
    req r[3];
    make(r, 3);
    idms_waitq q;
    idms_waitq_init(&q);
    for (int i = 0; i < 3; i++)
        idms_waitq_add(&q, &r[i].w);
    r[1].again = &q; /* the ceiling rose, not far enough: it parks again */
    ASSERT_EQ_U64(idms_waitq_wake(&q), 3);
    ASSERT_EQ_INT(r[0].woken + r[1].woken + r[2].woken, 3);
    ASSERT_EQ_U64(idms_waitq_count(&q), 1);
    ASSERT_TRUE(idms_waiter_waiting(&r[1].w));
    r[1].again = NULL;
    ASSERT_EQ_U64(idms_waitq_wake(&q), 1);
    ASSERT_EQ_INT(r[1].woken, 2);
    ASSERT_TRUE(idms_waitq_empty(&q));
}

static void test_waitlist_removed_in_a_wake_is_not_woken(void)
{
    req r[3];
    make(r, 3);
    idms_waitq q;
    idms_waitq_init(&q);
    for (int i = 0; i < 3; i++)
        idms_waitq_add(&q, &r[i].w);
    r[0].drop = &r[2].w; /* waking 0 closes 2's connection */
    ASSERT_EQ_U64(idms_waitq_wake(&q), 2);
    ASSERT_EQ_INT(r[0].woken, 1);
    ASSERT_EQ_INT(r[1].woken, 1);
    ASSERT_EQ_INT(r[2].woken, 0);
    ASSERT_TRUE(!idms_waiter_waiting(&r[2].w));
}

static void test_waitlist_move_collects_keys_in_order(void)
{
    req r[4];
    make(r, 4);
    idms_waitq lists[3];
    init_lists(lists, 3);
    idms_waitq *a = &lists[0], *b = &lists[1], *all = &lists[2];
    idms_waitq_add(a, &r[0].w);
    idms_waitq_add(b, &r[1].w);
    idms_waitq_add(a, &r[2].w);
    idms_waitq_move(all, a);
    idms_waitq_move(all, b);
    idms_waitq_move(all, all);
    ASSERT_TRUE(idms_waitq_empty(a));
    ASSERT_TRUE(idms_waitq_empty(b));
    ASSERT_EQ_U64(idms_waitq_count(all), 3);
    idms_waitq_add(a, &r[3].w); /* a new waiter of a, after the move */
    ASSERT_EQ_U64(idms_waitq_wake(all), 3);
    ASSERT_EQ_INT(order[0], 0);
    ASSERT_EQ_INT(order[1], 2);
    ASSERT_EQ_INT(order[2], 1);
    ASSERT_EQ_INT(r[3].woken, 0);
    ASSERT_EQ_U64(idms_waitq_count(a), 1);
}

static const struct test_case tests[] = {
    TEST(test_waitlist_remove_when_not_waiting),
    TEST(test_waitlist_wakes_exactly_its_key),
    TEST(test_waitlist_add_moves_between_keys),
    TEST(test_waitlist_waiting_again_waits_for_the_next_round),
    TEST(test_waitlist_removed_in_a_wake_is_not_woken),
    TEST(test_waitlist_move_collects_keys_in_order),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
