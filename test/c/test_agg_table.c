/* test_agg_table.c — the sampler's aggregation table (ext/rperf/agg_table.c,
 * plain C, built here without Ruby): stacks are interned once and found
 * again, a stack with no frame at all is a stack like any other (also
 * before the frame pool exists, which once handed memcmp a NULL), entries
 * add up per (stack, thread, label set), and the bounds refuse rather than
 * grow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agg_table.h"

static void
test_empty_stack_is_interned_once(void **state)
{
    (void)state;
    rperf_agg_table_t at;
    assert_int_equal(rperf_agg_table_init(&at, 16, 16, 64, 0), 0);
    /* Nothing has been interned: the pool is still unallocated. */
    uint32_t first = rperf_agg_table_intern_stack(&at, NULL, 0);
    assert_int_not_equal(first, RPERF_STACK_ID_NONE);
    assert_int_equal(rperf_agg_table_intern_stack(&at, NULL, 0), first);
    const uint32_t frames[] = {7, 8, 9};
    uint32_t deep = rperf_agg_table_intern_stack(&at, frames, 3);
    assert_int_not_equal(deep, first);
    assert_int_equal(rperf_agg_table_intern_stack(&at, NULL, 0), first);
    uint32_t depth = 99;
    rperf_agg_table_stack_frames(&at, first, &depth);
    assert_int_equal(depth, 0);
    /* After a clear the table starts over, the empty stack included. */
    rperf_agg_table_clear(&at);
    uint32_t again = rperf_agg_table_intern_stack(&at, NULL, 0);
    assert_int_equal(rperf_agg_table_intern_stack(&at, NULL, 0), again);
    rperf_agg_table_free(&at);
}

static void
test_stacks_and_entries(void **state)
{
    (void)state;
    rperf_agg_table_t at;
    assert_int_equal(rperf_agg_table_init(&at, 2, 2, 8, 0), 0);
    const uint32_t a[] = {1, 2}, b[] = {2, 1}, c[] = {3};
    uint32_t sa = rperf_agg_table_intern_stack(&at, a, 2);
    uint32_t sb = rperf_agg_table_intern_stack(&at, b, 2);
    assert_int_not_equal(sa, sb);
    assert_int_equal(rperf_agg_table_intern_stack(&at, a, 2), sa);
    uint32_t depth = 0;
    const uint32_t *got = rperf_agg_table_stack_frames(&at, sb, &depth);
    assert_int_equal(depth, 2);
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], 1);
    /* max_stacks is 2: a third distinct stack is refused. */
    assert_int_equal(rperf_agg_table_intern_stack(&at, c, 1), RPERF_STACK_ID_NONE);

    assert_int_equal(rperf_agg_table_add(&at, sa, 1, 0, 100, 5), 0);
    assert_int_equal(rperf_agg_table_add(&at, sa, 1, 0, 50, 0), 0);
    assert_int_equal(rperf_agg_table_add(&at, sa, 2, 0, 10, 0), 0);
    assert_int_equal(at.entry_count, 2);
    int64_t thread1 = 0;
    for (uint32_t i = 0; i < at.entry_count; i++)
        if (at.entries[i].thread_seq == 1)
            thread1 = at.entries[i].weight_ns + at.entries[i].blame_ns;
    assert_int_equal(thread1, 155);
    /* max_entries is 2: a third (stack, thread, label set) is refused. */
    assert_int_equal(rperf_agg_table_add(&at, sb, 1, 0, 1, 0), -1);
    rperf_agg_table_free(&at);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_stack_is_interned_once),
        cmocka_unit_test(test_stacks_and_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
