/* test_wait_edges.c — the holder rings and the deferred, batched wait
 * attribution of ext/rperf/wait_edges.c (plain C, built here without Ruby).
 * A simulated Ractor hands its GVL around; every wait is deferred the way
 * the RESUMED hook defers it, and the tests check the laws the report
 * relies on: a waiter's edges sum to its waits, each edge counts the waits
 * that overlapped that holder, a wait deferred long before the flush still
 * finds its holders, waits spanning many hand-offs count each edge once,
 * a report takes only the waits it may count, time
 * a full table refuses reaches the lost handler instead of vanishing, and
 * a cut reads no page of the table that holds no edge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "wait_edges.h"

#define EPOCH 1

static int64_t lost_ns[16];

static void
record_lost(int waiter, int64_t ns)
{
    if (waiter >= 0 && waiter < 16)
        lost_ns[waiter] += ns;
}

static int
setup(void **state)
{
    (void)state;
    memset(lost_ns, 0, sizeof(lost_ns));
    return rperf_edges_create(1000, record_lost);
}

static int
teardown(void **state)
{
    (void)state;
    rperf_edges_destroy();
    return 0;
}

static int64_t
edges_sum(const rperf_edge_list_t *list, int waiter, int kind, int holder)
{
    int64_t sum = 0;
    for (size_t i = 0; i < list->count; i++) {
        const rperf_edge_t *e = &list->items[i];
        if (e->waiter != waiter)
            continue;
        if (kind >= 0 && (e->kind != kind || e->holder != holder))
            continue;
        sum += e->wait_ns;
    }
    return sum;
}

static uint64_t
edge_count(const rperf_edge_list_t *list, int waiter, int holder)
{
    for (size_t i = 0; i < list->count; i++) {
        const rperf_edge_t *e = &list->items[i];
        if (e->waiter == waiter && e->kind == RPERF_HOLDER_THREAD && e->holder == holder)
            return e->count;
    }
    return 0;
}

/* Flushes the ring's deferred waits and takes the table (emptying it). */
static rperf_edge_list_t
flushed_edges(rperf_holder_ring_t *ring)
{
    rperf_edge_list_t list;
    assert_int_equal(rperf_edges_cut(&ring, 1, NULL, NULL, 1, 0, &list), 0);
    return list;
}

/* Thread 1 holds [0, 100), hands off [100, 110), thread 2 holds [110, 200);
 * thread 3 waited [50, 200): 50 on thread 1, 10 hand-off, 90 on thread 2. */
static void
test_one_wait_splits_over_holders(void **state)
{
    (void)state;
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    assert_non_null(ring);
    rperf_holder_ring_push(ring, 0, RPERF_HOLDER_THREAD, 1, 0, EPOCH);
    rperf_holder_ring_push(ring, 100, RPERF_HOLDER_HANDOFF, 1, 0, EPOCH);
    rperf_holder_ring_push(ring, 110, RPERF_HOLDER_THREAD, 2, 0, EPOCH);
    rperf_wait_defer(ring, EPOCH, 3, 0, 50, 200);

    /* Deferred: nothing in the table until a cut flushes the batch. */
    rperf_edge_list_t list;
    assert_int_equal(rperf_edges_cut(NULL, 0, NULL, NULL, 0, 0, &list), 0);
    assert_int_equal(list.count, 0);
    rperf_edge_list_free(&list);

    list = flushed_edges(ring);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_THREAD, 1), 50);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_HANDOFF, 0), 10);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_THREAD, 2), 90);
    assert_int_equal(edges_sum(&list, 3, -1, 0), 150);
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

/* Threads 1..4 take turns, 10 ns each; every other thread waits for the
 * whole turn of the holder. More waits than one batch, so batches flush
 * themselves. `resume`: each turn begins the way the RESUMED hook begins
 * it, wait and holder segment in one rperf_holder_ring_resume; else by a
 * deferral and a push. */
static void
take_turns(int resume)
{
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    int64_t waited[5] = {0};
    uint64_t waits_on[5][5];
    memset(waits_on, 0, sizeof(waits_on));
    int64_t t = 0;
    int turns = 10 * RPERF_PENDING_WAITS + 7;
    int64_t ready[5] = {0};
    for (int turn = 0; turn < turns; turn++) {
        int holder = turn % 4 + 1;
        /* The holder's wait ends now: it began when its last turn ended. */
        if (resume)
            rperf_holder_ring_resume(ring, EPOCH, holder, 0, ready[holder], t);
        else
            rperf_wait_defer(ring, EPOCH, holder, 0, ready[holder], t);
        waited[holder] += t - ready[holder];
        if (turn >= 4) {
            for (int h = 1; h <= 4; h++) {
                if (h != holder)
                    waits_on[holder][h]++;
            }
        } else {
            for (int h = 1; h < holder; h++)
                waits_on[holder][h]++;
        }
        if (!resume)
            rperf_holder_ring_push(ring, t, RPERF_HOLDER_THREAD, holder, 0, EPOCH);
        t += 10;
        ready[holder] = t;
    }
    rperf_edge_list_t list = flushed_edges(ring);
    for (int w = 1; w <= 4; w++) {
        assert_int_equal(edges_sum(&list, w, -1, 0), waited[w]);
        for (int h = 1; h <= 4; h++) {
            if (h == w)
                continue;
            assert_int_equal(edge_count(&list, w, h), waits_on[w][h]);
        }
    }
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

static void
test_batches_conserve_every_wait(void **state)
{
    (void)state;
    take_turns(0);
}

static void
test_resumes_conserve_every_wait(void **state)
{
    (void)state;
    take_turns(1);
}

/* A wait deferred, then far more than half a ring of hand-offs before
 * any further wait: the ring flushes the batch before overwriting the
 * segments it needs. */
static void
test_deferred_wait_survives_ring_wraparound(void **state)
{
    (void)state;
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    rperf_holder_ring_push(ring, 0, RPERF_HOLDER_THREAD, 1, 0, EPOCH);
    rperf_wait_defer(ring, EPOCH, 2, 0, 0, 100);
    for (int i = 0; i < 3 * RPERF_HOLDER_RING_SIZE; i++) {
        rperf_holder_ring_push(ring, 100 + i, (i & 1) ? RPERF_HOLDER_THREAD : RPERF_HOLDER_HANDOFF, 3, 0, EPOCH);
    }
    rperf_edge_list_t list = flushed_edges(ring);
    assert_int_equal(edges_sum(&list, 2, RPERF_HOLDER_THREAD, 1), 100);
    assert_int_equal(edges_sum(&list, 2, RPERF_HOLDER_UNKNOWN, 0), 0);
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

/* Segments from before a pause (an older epoch) name nobody. */
static void
test_older_epoch_is_unknown(void **state)
{
    (void)state;
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    rperf_holder_ring_push(ring, 0, RPERF_HOLDER_THREAD, 1, 0, EPOCH);
    rperf_holder_ring_push(ring, 40, RPERF_HOLDER_THREAD, 2, 0, EPOCH + 1);
    rperf_wait_defer(ring, EPOCH + 1, 3, 0, 10, 100);
    rperf_edge_list_t list = flushed_edges(ring);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_UNKNOWN, 0), 30);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_THREAD, 2), 60);
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

static uint64_t
kind_count(const rperf_edge_list_t *list, int waiter, int kind, int holder)
{
    for (size_t i = 0; i < list->count; i++) {
        const rperf_edge_t *e = &list->items[i];
        if (e->waiter == waiter && e->kind == kind && e->holder == holder)
            return e->count;
    }
    return 0;
}

/* Waits that span several hand-offs and holders, and segments of an older
 * epoch: each edge of a waiter sums its parts over every segment and counts
 * each wait once, the hand-off and unknown edges as well as the threads'.
 * Segments: none before 2, epoch-1 thread 9 [2, 10), then thread 1 [10, 20), hand-off
 * [20, 25), thread 2 [25, 40), hand-off [40, 45), thread 1 [45, 60),
 * hand-off [60, 62), thread 2 from 62. */
static void
test_spanning_waits_count_each_edge_once(void **state)
{
    (void)state;
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    rperf_holder_ring_push(ring, 2, RPERF_HOLDER_THREAD, 9, 0, EPOCH - 1);
    const int64_t starts[] = {10, 20, 25, 40, 45, 60, 62};
    const int kinds[] = {RPERF_HOLDER_THREAD, RPERF_HOLDER_HANDOFF, RPERF_HOLDER_THREAD, RPERF_HOLDER_HANDOFF,
                         RPERF_HOLDER_THREAD, RPERF_HOLDER_HANDOFF, RPERF_HOLDER_THREAD};
    const int holders[] = {1, 1, 2, 2, 1, 1, 2};
    for (int i = 0; i < 7; i++)
        rperf_holder_ring_push(ring, starts[i], kinds[i], holders[i], 0, EPOCH);
    rperf_wait_defer(ring, EPOCH, 3, 0, 5, 70);
    rperf_wait_defer(ring, EPOCH, 3, 0, 0, 30);
    rperf_edge_list_t list = flushed_edges(ring);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_UNKNOWN, 0), 5 + 10);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_THREAD, 1), 25 + 10);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_HANDOFF, 0), 12 + 5);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_THREAD, 2), 23 + 5);
    assert_int_equal(edges_sum(&list, 3, -1, 0), 65 + 30);
    assert_int_equal(kind_count(&list, 3, RPERF_HOLDER_UNKNOWN, 0), 2);
    assert_int_equal(kind_count(&list, 3, RPERF_HOLDER_THREAD, 1), 2);
    assert_int_equal(kind_count(&list, 3, RPERF_HOLDER_HANDOFF, 0), 2);
    assert_int_equal(kind_count(&list, 3, RPERF_HOLDER_THREAD, 2), 2);
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

/* A table of one edge: the other holders' time goes to the lost handler,
 * so table + lost still sums to the wait, and the drop is counted. */
static void
test_full_table_reports_lost_time(void **state)
{
    (void)state;
    rperf_edges_destroy();
    assert_int_equal(rperf_edges_create(1, record_lost), 0);
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    rperf_holder_ring_push(ring, 0, RPERF_HOLDER_THREAD, 1, 0, EPOCH);
    rperf_holder_ring_push(ring, 30, RPERF_HOLDER_THREAD, 2, 0, EPOCH);
    rperf_holder_ring_push(ring, 70, RPERF_HOLDER_GC, 2, 0, EPOCH);
    rperf_wait_defer(ring, EPOCH, 5, 0, 0, 100);
    rperf_edge_list_t list = flushed_edges(ring);
    assert_int_equal(list.count, 1);
    assert_int_equal(edges_sum(&list, 5, -1, 0) + lost_ns[5], 100);
    assert_true(lost_ns[5] > 0);
    assert_true(rperf_edges_dropped(1) > 0);
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

/* A report takes only the waits its views show ended: the others stay
 * deferred, clipped to the cut when the report clears, and so does every
 * wait deferred after it. */
static int
take_before(rperf_pending_wait_t *p, void *arg)
{
    int64_t cut = *(const int64_t *)arg;
    if (p->to_ns <= cut)
        return 1;
    if (p->from_ns < cut)
        p->from_ns = cut;
    return 0;
}

static void
test_report_takes_only_ended_waits(void **state)
{
    (void)state;
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    rperf_holder_ring_push(ring, 0, RPERF_HOLDER_THREAD, 1, 0, EPOCH);
    rperf_wait_defer(ring, EPOCH, 2, 0, 10, 40);
    rperf_wait_defer(ring, EPOCH, 3, 0, 20, 90);
    rperf_wait_defer(ring, EPOCH, 2, 0, 50, 60);
    int64_t cut = 70;
    rperf_edge_list_t list;
    assert_int_equal(rperf_edges_cut(&ring, 1, take_before, &cut, 1, cut, &list), 0);
    assert_int_equal(edges_sum(&list, 2, RPERF_HOLDER_THREAD, 1), 40);
    assert_int_equal(edge_count(&list, 2, 1), 2);
    assert_int_equal(edges_sum(&list, 3, -1, 0), 0);
    rperf_edge_list_free(&list);
    /* A wait that began before the clearing cut and is deferred after it
     * counts from the cut on, like the kept one. */
    rperf_wait_defer(ring, EPOCH, 4, 0, 30, 100);
    list = flushed_edges(ring);
    assert_int_equal(edges_sum(&list, 3, RPERF_HOLDER_THREAD, 1), 20);
    assert_int_equal(edges_sum(&list, 4, RPERF_HOLDER_THREAD, 1), 30);
    assert_int_equal(edges_sum(&list, 2, -1, 0), 0);
    rperf_edge_list_free(&list);
    rperf_holder_ring_destroy(ring);
}

/* Resident pages of the process's private writable mappings (mincore:
 * a page read and backed by the kernel's shared zero page counts too, so
 * a read of the whole table shows on every kernel). Mappings over 1 GiB
 * (a sanitizer's shadow reservations) are skipped. */
static size_t
resident_pages(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), total = 0;
    char line[512];
    while (fgets(line, sizeof(line), maps)) {
        unsigned long from, to;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &from, &to, perms) != 3 || perms[1] != 'w' || perms[3] != 'p')
            continue;
        size_t pages = (to - from) / page;
        if (pages == 0 || pages > (1ul << 30) / page)
            continue;
        unsigned char *vec = malloc(pages);
        assert_non_null(vec);
        if (mincore((void *)from, to - from, vec) == 0) {
            for (size_t i = 0; i < pages; i++)
                total += vec[i] & 1;
        }
        free(vec);
    }
    fclose(maps);
    return total;
}

/* A cut reads and clears only the buckets in use: at the default
 * max_edges the table spans 6 MiB, and a scan of every bucket made it all
 * resident at each cut, the final stop's included. */
static void
test_a_cut_touches_only_the_edges_it_takes(void **state)
{
    (void)state;
    rperf_edges_destroy();
    assert_int_equal(rperf_edges_create(65536, record_lost), 0);
    rperf_holder_ring_t *ring = rperf_holder_ring_create(1);
    assert_non_null(ring);
    size_t before = resident_pages();
    for (int round = 0; round < 3; round++) {
        for (int holder = 1; holder <= 8; holder++)
            rperf_holder_ring_push(ring, holder * 100, RPERF_HOLDER_THREAD, holder, 0, EPOCH);
        for (int waiter = 9; waiter <= 12; waiter++)
            rperf_wait_defer(ring, EPOCH, waiter, 0, 100, 900);
        rperf_edge_list_t list;
        assert_int_equal(rperf_edges_cut(&ring, 1, NULL, NULL, round == 2, 0, &list), 0);
        assert_int_equal(list.count, 32);
        assert_int_equal(edges_sum(&list, 9, -1, 0), 800 * (round + 1));
        rperf_edge_list_free(&list);
    }
    size_t grown = resident_pages() - before;
    /* 32 edges land on at most 32 pages; a scan reads all 1,536. */
    assert_true(grown < 128);
    rperf_holder_ring_destroy(ring);
}

/* An open wait at a cut goes to the caller's list, not the table. */
static void
test_open_wait_into_list(void **state)
{
    (void)state;
    rperf_holder_ring_t *ring = rperf_holder_ring_create(2);
    rperf_holder_ring_push(ring, 0, RPERF_HOLDER_THREAD, 1, 7, EPOCH);
    rperf_edge_list_t extra;
    memset(&extra, 0, sizeof(extra));
    rperf_wait_attribute(ring, EPOCH, 2, 4, 3, 20, 80, &extra);
    rperf_wait_attribute(NULL, EPOCH, 0, 6, 0, 0, 25, &extra);
    assert_int_equal(extra.count, 2);
    assert_int_equal(extra.items[0].ractor, 2);
    assert_int_equal(extra.items[0].holder_label, 7);
    assert_int_equal(extra.items[0].waiter_label, 3);
    assert_int_equal(edges_sum(&extra, 4, RPERF_HOLDER_THREAD, 1), 60);
    assert_int_equal(edges_sum(&extra, 6, RPERF_HOLDER_UNKNOWN, 0), 25);
    rperf_edge_list_t table;
    assert_int_equal(rperf_edges_cut(NULL, 0, NULL, NULL, 0, 0, &table), 0);
    assert_int_equal(table.count, 0);
    rperf_edge_list_free(&table);
    rperf_edge_list_free(&extra);
    rperf_holder_ring_destroy(ring);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_wait_splits_over_holders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_conserve_every_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resumes_conserve_every_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deferred_wait_survives_ring_wraparound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_older_epoch_is_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spanning_waits_count_each_edge_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_table_reports_lost_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_takes_only_ended_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_wait_into_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_cut_touches_only_the_edges_it_takes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
