/* test_release_stacks.c — the releasers' stack table (ext/rperf/release_stacks.c,
 * plain C, built here without Ruby): releases add up per (waiter, release
 * index, generation, stack), each key part keeps entries apart, the table
 * grows past its first slots and then refuses at its bound, the releases of
 * the generations from a cut on are counted, and a clear starts over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "release_stacks.h"

static const rperf_release_stack_t *
find(const rperf_release_stacks_t *t, int waiter, int index, uint32_t generation, uint32_t stack)
{
    for (uint32_t n = 0; n < t->count; n++) {
        const rperf_release_stack_t *e = &t->entries[n];
        if (e->waiter_seq == waiter && e->release_index == index && e->generation == generation &&
            e->stack_id == stack)
            return e;
    }
    return NULL;
}

static void
test_releases_add_up_per_key(void **state)
{
    (void)state;
    rperf_release_stacks_t t;
    assert_int_equal(rperf_release_stacks_init(&t, 16), 0);
    assert_int_equal(rperf_release_stacks_add(&t, 3, 0, 0, 7, 100), 0);
    assert_int_equal(rperf_release_stacks_add(&t, 3, 0, 0, 7, 50), 0);
    /* Each key part makes its own entry. */
    assert_int_equal(rperf_release_stacks_add(&t, 4, 0, 0, 7, 1), 0);
    assert_int_equal(rperf_release_stacks_add(&t, 3, 1, 0, 7, 2), 0);
    assert_int_equal(rperf_release_stacks_add(&t, 3, 0, 1, 7, 4), 0);
    assert_int_equal(rperf_release_stacks_add(&t, 3, 0, 0, 8, 8), 0);
    assert_int_equal(t.count, 5);
    const rperf_release_stack_t *e = find(&t, 3, 0, 0, 7);
    assert_non_null(e);
    assert_int_equal(e->ns, 150);
    assert_int_equal(e->count, 2);
    assert_int_equal(find(&t, 3, 0, 1, 7)->ns, 4);
    assert_int_equal(find(&t, 3, 0, 0, 8)->ns, 8);
    /* Releases from generation 1 on: the one of generation 1. */
    assert_int_equal(rperf_release_stacks_count_from(&t, 1), 1);
    assert_int_equal(rperf_release_stacks_count_from(&t, 0), 6);
    assert_int_equal(rperf_release_stacks_count_from(&t, 2), 0);
    rperf_release_stacks_clear(&t);
    assert_int_equal(t.count, 0);
    assert_null(find(&t, 3, 0, 0, 7));
    assert_int_equal(rperf_release_stacks_add(&t, 3, 0, 0, 7, 9), 0);
    assert_int_equal(find(&t, 3, 0, 0, 7)->count, 1);
    rperf_release_stacks_free(&t);
}

static void
test_grows_then_refuses_at_the_bound(void **state)
{
    (void)state;
    const uint32_t bound = 1000; /* beyond the first 256 slots: two rehashes */
    rperf_release_stacks_t t;
    assert_int_equal(rperf_release_stacks_init(&t, bound), 0);
    for (uint32_t s = 0; s < bound; s++)
        assert_int_equal(rperf_release_stacks_add(&t, 1, (int)(s % 16), 0, s, (int64_t)s + 1), 0);
    assert_int_equal(rperf_release_stacks_add(&t, 2, 0, 0, 0, 1), -1);
    /* A full table still adds to the entries it has. */
    assert_int_equal(rperf_release_stacks_add(&t, 1, 5, 0, 5, 10), 0);
    assert_int_equal(t.count, bound);
    for (uint32_t s = 0; s < bound; s++) {
        const rperf_release_stack_t *e = find(&t, 1, (int)(s % 16), 0, s);
        assert_non_null(e);
        assert_int_equal(e->ns, (int64_t)s + 1 + (s == 5 ? 10 : 0));
    }
    rperf_release_stacks_free(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_releases_add_up_per_key),
        cmocka_unit_test(test_grows_then_refuses_at_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
