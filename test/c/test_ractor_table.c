/* test_ractor_table.c — the extension's Ractor table (ext/rperf/
 * ractor_table.c, plain C, built here without Ruby): slots are taken only
 * once prepared, once each, also by concurrent callers; a key finds its
 * slot in its own profile and nothing in a later one; a full table refuses
 * instead of overrunning; the timeline buffer exists only when asked for. */
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

/* Prepares one slot and takes it. */
static rperf_ractor_slot_t *
add(uintptr_t key)
{
    assert_int_equal(rperf_ractor_table_prepare(1), 0);
    return rperf_ractor_table_take(key);
}

static void
test_ids_in_order_and_keys_find_their_slot(void **state)
{
    (void)state;
    rperf_ractor_slot_t *slots[3];
    for (int i = 0; i < 3; i++) {
        slots[i] = add(100 + (uintptr_t)i);
        assert_non_null(slots[i]);
        assert_int_equal(slots[i]->id, i + 1);
        assert_non_null(slots[i]->ring);
        assert_int_equal(slots[i]->main, 0);
    }
    assert_int_equal(rperf_ractor_count(), 3);
    for (int i = 0; i < 3; i++) {
        assert_ptr_equal(rperf_ractor_table_find(100 + (uintptr_t)i), slots[i]);
        assert_ptr_equal(rperf_ractor_by_id(i + 1), slots[i]);
    }
    assert_null(rperf_ractor_table_find(99));
    assert_null(rperf_ractor_by_id(0));
    assert_null(rperf_ractor_by_id(4));
    assert_null(rperf_ractor_by_id(RPERF_MAX_RACTORS + 1));
}

static void
test_take_needs_a_prepared_slot(void **state)
{
    (void)state;
    assert_null(rperf_ractor_table_take(1)); /* nothing prepared yet */
    assert_int_equal(rperf_ractor_count(), 0);
    assert_int_equal(rperf_ractor_table_prepare(2), 0);
    assert_non_null(rperf_ractor_table_take(1));
    assert_non_null(rperf_ractor_table_take(2));
    assert_null(rperf_ractor_table_take(3));
    assert_int_equal(rperf_ractor_count(), 2);
    /* prepare keeps `ahead` beyond those taken */
    assert_int_equal(rperf_ractor_table_prepare(2), 0);
    assert_int_equal(rperf_ractor_table_take(3)->id, 3);
    assert_int_equal(rperf_ractor_table_take(4)->id, 4);
    assert_null(rperf_ractor_table_take(5));
}

static void
test_keys_of_an_earlier_profile_find_nothing(void **state)
{
    (void)state;
    assert_non_null(add(7));
    rperf_ractor_table_close();
    assert_null(rperf_ractor_table_find(7));
    assert_null(rperf_ractor_by_id(1));
    assert_int_equal(rperf_ractor_count(), 0);
    assert_int_equal(rperf_ractor_table_prepare(1), 0); /* closed: nothing to do */
    assert_null(rperf_ractor_table_take(7));

    rperf_ractor_table_open(1, 16);
    assert_null(rperf_ractor_table_find(7));
    rperf_ractor_slot_t *r = add(8);
    assert_non_null(r);
    assert_int_equal(r->id, 1); /* the same index as the old slot */
    assert_null(rperf_ractor_table_find(7));
    assert_ptr_equal(rperf_ractor_table_find(8), r);
}

static void
test_a_full_table_refuses(void **state)
{
    (void)state;
    assert_int_equal(rperf_ractor_table_prepare(RPERF_MAX_RACTORS + 10), 0);
    for (int i = 0; i < RPERF_MAX_RACTORS; i++)
        assert_non_null(rperf_ractor_table_take(1000 + (uintptr_t)i));
    assert_int_equal(rperf_ractor_count(), RPERF_MAX_RACTORS);
    assert_int_equal(rperf_ractor_table_prepare(4), 0);
    for (int i = 0; i < 3; i++)
        assert_null(rperf_ractor_table_take(5000 + (uintptr_t)i));
    assert_int_equal(rperf_ractor_count(), RPERF_MAX_RACTORS);
    assert_int_equal(rperf_ractor_table_find(1000 + RPERF_MAX_RACTORS - 1)->id, RPERF_MAX_RACTORS);
}

static void
test_timeline_buffer_only_when_asked(void **state)
{
    (void)state;
    rperf_interval_t rec = {.start_ns = 1, .end_ns = 2, .thread_seq = 1, .stack_id = -1};
    rperf_ractor_slot_t *r = add(1);
    assert_int_equal(rperf_interval_buffer_push(&r->intervals, &rec), 0);
    assert_int_equal(rperf_interval_buffer_count(&r->intervals), 1);

    rperf_ractor_table_open(0, 16); /* reopening closes the old table */
    r = add(1);
    assert_int_equal(rperf_interval_buffer_push(&r->intervals, &rec), -1);
    assert_int_equal(rperf_interval_buffer_count(&r->intervals), 0);
    assert_int_equal(rperf_interval_buffer_take_dropped(&r->intervals, 0), 1);
}

static void
test_waiters_never_negative(void **state)
{
    (void)state;
    rperf_ractor_slot_t *r = add(1);
    assert_int_equal(rperf_ractor_waiters(r), 0);
    r->waiters = 2;
    assert_int_equal(rperf_ractor_waiters(r), 2);
    /* A RESUMED that settles a READY counted before a pause may take the
     * count below zero for a moment. */
    r->waiters = -1;
    assert_int_equal(rperf_ractor_waiters(r), 0);
}

#define TAKERS 8
#define TAKES_EACH 24

/* Takers race each other and a preparer; each retries until a slot is
 * prepared for it. */
static void *
take_many(void *arg)
{
    int *ids = arg;
    for (int i = 0; i < TAKES_EACH; i++) {
        uintptr_t key = (uintptr_t)ids * 64 + (uintptr_t)i + 1;
        rperf_ractor_slot_t *r;
        while (!(r = rperf_ractor_table_take(key)))
            rperf_ractor_table_prepare(2);
        ids[i] = rperf_ractor_table_find(key) == r ? r->id : -1;
    }
    return NULL;
}

static void
test_concurrent_takes_get_distinct_slots(void **state)
{
    (void)state;
    static int ids[TAKERS][TAKES_EACH];
    pthread_t threads[TAKERS];
    for (int t = 0; t < TAKERS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, take_many, ids[t]), 0);
    for (int t = 0; t < TAKERS; t++)
        pthread_join(threads[t], NULL);
    int seen[TAKERS * TAKES_EACH + 1];
    memset(seen, 0, sizeof(seen));
    for (int t = 0; t < TAKERS; t++) {
        for (int i = 0; i < TAKES_EACH; i++) {
            int id = ids[t][i];
            assert_in_range(id, 1, TAKERS * TAKES_EACH);
            assert_int_equal(seen[id], 0);
            seen[id] = 1;
            assert_non_null(rperf_ractor_by_id(id)->ring);
        }
    }
    assert_int_equal(rperf_ractor_count(), TAKERS * TAKES_EACH);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ids_in_order_and_keys_find_their_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_take_needs_a_prepared_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys_of_an_earlier_profile_find_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_full_table_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeline_buffer_only_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waiters_never_negative, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_takes_get_distinct_slots, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
