/* test_ractor_table.c — the extension's Ractor table (ext/rperf/
 * ractor_table.c, plain C, built here without Ruby): slots are handed out
 * once each, also to concurrent callers; a token finds its slot in its own
 * profile and nothing in a later one; a full table refuses instead of
 * overrunning; the timeline buffer exists only when asked for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include "ractor_table.h"

static int
setup(void **state)
{
    (void)state;
    rperf_ractor_table_open(1, 16);
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    rperf_ractor_table_close();
    return 0;
}

static void
test_ids_in_order_and_tokens_find_their_slot(void **state)
{
    (void)state;
    uintptr_t tokens[3];
    rperf_ractor_slot_t *slots[3];
    for (int i = 0; i < 3; i++) {
        slots[i] = rperf_ractor_table_add(&tokens[i]);
        assert_non_null(slots[i]);
        assert_int_equal(slots[i]->id, i + 1);
        assert_non_null(slots[i]->ring);
        assert_int_equal(slots[i]->main, 0);
    }
    assert_int_equal(rperf_ractor_count(), 3);
    for (int i = 0; i < 3; i++) {
        assert_ptr_equal(rperf_ractor_table_decode(tokens[i]), slots[i]);
        assert_ptr_equal(rperf_ractor_by_id(i + 1), slots[i]);
        for (int j = 0; j < i; j++)
            assert_true(tokens[i] != tokens[j]);
    }
    assert_null(rperf_ractor_by_id(0));
    assert_null(rperf_ractor_by_id(4));
    assert_null(rperf_ractor_by_id(RPERF_MAX_RACTORS + 1));
    assert_null(rperf_ractor_table_decode(0));
}

static void
test_tokens_of_an_earlier_profile_find_nothing(void **state)
{
    (void)state;
    uintptr_t old;
    assert_non_null(rperf_ractor_table_add(&old));
    rperf_ractor_table_close();
    assert_null(rperf_ractor_table_decode(old));
    assert_null(rperf_ractor_by_id(1));
    assert_int_equal(rperf_ractor_count(), 0);
    uintptr_t closed;
    assert_null(rperf_ractor_table_add(&closed));

    rperf_ractor_table_open(1, 16);
    uintptr_t fresh;
    rperf_ractor_slot_t *r = rperf_ractor_table_add(&fresh);
    assert_non_null(r);
    assert_int_equal(r->id, 1); /* the same index as the old token */
    assert_true(fresh != old);
    assert_null(rperf_ractor_table_decode(old));
    assert_ptr_equal(rperf_ractor_table_decode(fresh), r);
}

static void
test_a_full_table_refuses(void **state)
{
    (void)state;
    uintptr_t token;
    for (int i = 0; i < RPERF_MAX_RACTORS; i++)
        assert_non_null(rperf_ractor_table_add(&token));
    assert_int_equal(rperf_ractor_count(), RPERF_MAX_RACTORS);
    uintptr_t last = token;
    for (int i = 0; i < 3; i++)
        assert_null(rperf_ractor_table_add(&token));
    assert_int_equal(rperf_ractor_count(), RPERF_MAX_RACTORS);
    assert_int_equal(rperf_ractor_table_decode(last)->id, RPERF_MAX_RACTORS);
}

static void
test_timeline_buffer_only_when_asked(void **state)
{
    (void)state;
    rperf_interval_t rec = {.start_ns = 1, .end_ns = 2, .thread_seq = 1, .stack_id = -1};
    uintptr_t token;
    rperf_ractor_slot_t *r = rperf_ractor_table_add(&token);
    assert_int_equal(rperf_interval_buffer_push(&r->intervals, &rec), 0);
    assert_int_equal(rperf_interval_buffer_count(&r->intervals), 1);

    rperf_ractor_table_open(0, 16); /* reopening closes the old table */
    r = rperf_ractor_table_add(&token);
    assert_int_equal(rperf_interval_buffer_push(&r->intervals, &rec), -1);
    assert_int_equal(rperf_interval_buffer_count(&r->intervals), 0);
    assert_int_equal(rperf_interval_buffer_take_dropped(&r->intervals, 0), 1);
}

static void
test_waiters_never_negative(void **state)
{
    (void)state;
    uintptr_t token;
    rperf_ractor_slot_t *r = rperf_ractor_table_add(&token);
    assert_int_equal(rperf_ractor_waiters(r), 0);
    r->waiters = 2;
    assert_int_equal(rperf_ractor_waiters(r), 2);
    /* A RESUMED that settles a READY counted before a pause may take the
     * count below zero for a moment. */
    r->waiters = -1;
    assert_int_equal(rperf_ractor_waiters(r), 0);
}

#define ADDERS 8
#define ADDS_EACH 24

static void *
add_many(void *arg)
{
    int *ids = arg;
    for (int i = 0; i < ADDS_EACH; i++) {
        uintptr_t token;
        rperf_ractor_slot_t *r = rperf_ractor_table_add(&token);
        ids[i] = r && rperf_ractor_table_decode(token) == r ? r->id : -1;
    }
    return NULL;
}

static void
test_concurrent_adds_get_distinct_slots(void **state)
{
    (void)state;
    static int ids[ADDERS][ADDS_EACH];
    pthread_t threads[ADDERS];
    for (int t = 0; t < ADDERS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, add_many, ids[t]), 0);
    for (int t = 0; t < ADDERS; t++)
        pthread_join(threads[t], NULL);
    int seen[ADDERS * ADDS_EACH + 1];
    memset(seen, 0, sizeof(seen));
    for (int t = 0; t < ADDERS; t++) {
        for (int i = 0; i < ADDS_EACH; i++) {
            int id = ids[t][i];
            assert_in_range(id, 1, ADDERS * ADDS_EACH);
            assert_int_equal(seen[id], 0);
            seen[id] = 1;
        }
    }
    assert_int_equal(rperf_ractor_count(), ADDERS * ADDS_EACH);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ids_in_order_and_tokens_find_their_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tokens_of_an_earlier_profile_find_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_full_table_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeline_buffer_only_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waiters_never_negative, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_adds_get_distinct_slots, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
