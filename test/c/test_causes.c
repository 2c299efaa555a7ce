/* test_causes.c — blocked causes and release edges (report minor 1): the
 * hand-written fixture test/fixtures/causes_report.json read field by field,
 * every kind of bad minor-1 input refused with a JSON path, unknown cause
 * names read as other, and a snapshot series merged with its causes kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rga_test_util.h"

#define MS 1000000LL

static char *
fixture_text(void)
{
    size_t len;
    char *text = rga_test_slurp(RGA_FIXTURES "/causes_report.json", &len);
    assert_non_null(text);
    return text;
}

/* The fixture with from replaced by to must fail with code, path and a
 * reason containing reason_part. */
static void
expect_error(const char *from, const char *to, rga_status_t code, const char *path, const char *reason_part)
{
    char *base = fixture_text();
    char *text = rga_test_replace(base, from, to);
    rga_report_t *r = NULL;
    rga_error_t err;
    rga_status_t st = rga_report_load_buffer(text, strlen(text), "in.json", &r, &err);
    char line[700];
    rga_error_format(&err, line, sizeof(line));
    if (st != code)
        fail_msg("%s -> %s: expected %s, got %s: %s", from, to, rga_status_name(code), rga_status_name(st), line);
    assert_null(r);
    if (strcmp(err.path, path) != 0)
        fail_msg("expected path %s, got %s (%s)", path, err.path, line);
    if (!strstr(err.reason, reason_part))
        fail_msg("expected reason containing \"%s\": %s", reason_part, line);
    free(text);
    free(base);
}

static const rga_thread_t *
thread(const rga_report_t *r, int64_t seq)
{
    long i = rga_report_thread_index(r, seq);
    assert_true(i >= 0);
    return &r->threads[i];
}

/* The blocked interval of thread seq starting at start_ns. */
static size_t
blocked_interval(const rga_report_t *r, int64_t seq, int64_t start_ns)
{
    for (size_t i = 0; i < r->n_intervals; i++)
        if (r->threads[r->intervals[i].thread_index].seq == seq && r->intervals[i].start_ns == start_ns &&
            r->intervals[i].state == RGA_STATE_BLOCKED)
            return i;
    fail_msg("no blocked interval of thread %lld at %lld", (long long)seq, (long long)start_ns);
    return 0;
}

static void
test_fixture_loads(void **state)
{
    (void)state;
    char *text = fixture_text();
    rga_report_t *r = rga_test_load(text);
    free(text);
    assert_int_equal(r->minor, 1);
    assert_true(r->has_causes);
    const rga_thread_t *waiter = thread(r, 3);
    assert_true(waiter->has_causes);
    assert_int_equal(waiter->cause_ns[RGA_CAUSE_MUTEX], 200 * MS);
    assert_int_equal(waiter->cause_ns[RGA_CAUSE_QUEUE], 300 * MS);
    assert_int_equal(waiter->cause_ns[RGA_CAUSE_IO], 0);
    assert_int_equal(waiter->release_unknown_ns, 300 * MS);
    assert_int_equal(thread(r, 4)->cause_ns[RGA_CAUSE_OTHER], 400 * MS);
    /* Causes sum to blocked_ns in the fixture; the loader keeps them apart. */
    for (size_t t = 0; t < r->n_threads; t++) {
        int64_t sum = 0;
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            sum += r->threads[t].cause_ns[c];
        assert_int_equal(sum, r->threads[t].state_ns[RGA_STATE_BLOCKED]);
    }
    assert_int_equal(r->n_interval_causes, 6);
    size_t queue_wait = blocked_interval(r, 3, 400 * MS);
    assert_int_equal(r->intervals[queue_wait].cause, RGA_CAUSE_QUEUE);
    const rga_interval_cause_t *row = rga_report_interval_cause(r, queue_wait);
    assert_non_null(row);
    assert_int_equal(row->releaser, 0);
    size_t join_wait = blocked_interval(r, 1, 100 * MS);
    assert_int_equal(r->intervals[join_wait].cause, RGA_CAUSE_JOIN);
    assert_int_equal(rga_report_interval_cause(r, join_wait)->releaser, 2);
    size_t running = 0; /* thread 1's first interval: running, so no row */
    while (r->threads[r->intervals[running].thread_index].seq != 1)
        running++;
    assert_int_equal(r->intervals[running].state, RGA_STATE_RUNNING);
    assert_null(rga_report_interval_cause(r, running));
    assert_int_equal(r->n_blocked_edges, 2);
    const rga_blocked_edge_t *mutex = &r->blocked_edges[1];
    assert_int_equal(mutex->cause, RGA_CAUSE_MUTEX);
    assert_int_equal(mutex->waiter, 3);
    assert_int_equal(mutex->releaser, 2);
    assert_int_equal(mutex->releaser_stack, 0);
    assert_int_equal(r->blocked_edges[0].releaser_stack, -1);
    assert_int_equal(r->n_blocked_methods, 6);
    assert_string_equal(r->blocked_methods[5].method, "PG::Connection#exec");
    assert_int_equal(r->blocked_methods[5].cause, RGA_CAUSE_OTHER);
    assert_true(r->label_totals[2].has_causes);
    assert_int_equal(r->label_totals[2].cause_ns[RGA_CAUSE_QUEUE], 300 * MS);
    rga_report_free(r);
}

static void
test_minor0_has_no_causes(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    assert_false(r->has_causes);
    assert_int_equal(r->n_interval_causes + r->n_blocked_edges + r->n_blocked_methods, 0);
    for (size_t i = 0; i < r->n_intervals; i++)
        assert_int_equal(r->intervals[i].cause, RGA_CAUSE_UNKNOWN);
    for (size_t i = 0; i < r->n_threads; i++)
        assert_false(r->threads[i].has_causes);
    rga_report_free(r);
}

static void
test_unknown_cause_names_read_as_other(void **state)
{
    (void)state;
    char *base = fixture_text();
    char *a = rga_test_replace(base, "\"sleep\": 500000000, \"other\"", "\"fiber_scheduler\": 500000000, \"other\"");
    char *b = rga_test_replace(a, "\"other\"\n ],\n \"interval_causes\"", "\"fiber\"\n ],\n \"interval_causes\"");
    rga_report_t *r = rga_test_load(b);
    assert_int_equal(thread(r, 4)->cause_ns[RGA_CAUSE_OTHER], 900 * MS);
    assert_int_equal(thread(r, 4)->cause_ns[RGA_CAUSE_SLEEP], 0);
    assert_int_equal(r->intervals[blocked_interval(r, 4, 600 * MS)].cause, RGA_CAUSE_OTHER);
    assert_int_equal(rga_cause_from_name("mutex"), RGA_CAUSE_MUTEX);
    assert_string_equal(rga_cause_name(RGA_CAUSE_CONDVAR), "condvar");
    rga_report_free(r);
    free(b);
    free(a);
    free(base);
}

static void
test_bad_minor1_input(void **state)
{
    (void)state;
    expect_error("[3, 100000000, 3, 2]", "[3, 100000001, 3, 2]", RGA_ERR_REFERENCE, "interval_causes[2]",
                 "matches no blocked interval");
    /* A running interval is no blocked one. */
    expect_error("[3, 100000000, 3, 2]", "[3, 0, 3, 2]", RGA_ERR_REFERENCE, "interval_causes[2]",
                 "matches no blocked interval");
    expect_error("[3, 100000000, 3, 2]", "[3, 100000000, 3]", RGA_ERR_SCHEMA, "interval_causes[2]",
                 "expected 4 items");
    expect_error("[3, 100000000, 3, 2]", "[3, 100000000, 10, 2]", RGA_ERR_REFERENCE, "interval_causes[2][2]",
                 "cause id");
    expect_error("[3, 100000000, 3, 2]", "[3, 100000000, 3, 9]", RGA_ERR_REFERENCE, "interval_causes[2][3]",
                 "releaser thread seq 9");
    expect_error("[3, 100000000, 3, 2]", "[9, 100000000, 3, 2]", RGA_ERR_REFERENCE, "interval_causes[2][0]",
                 "thread seq 9");
    expect_error("[3, 100000000, 3, 2]", "[3, -5, 3, 2]", RGA_ERR_SCHEMA, "interval_causes[2][1]", "negative value");
    expect_error("[2, 300000000, 1, 0]", "[1, 100000000, 1, 0]", RGA_ERR_SCHEMA, "interval_causes[1]",
                 "a second cause");
    expect_error("\"blocked_by_cause\": {\"join\": 800000000}", "\"blocked_by_cause\": {\"join\": -1}",
                 RGA_ERR_SCHEMA, "threads[0].blocked_by_cause.join", "negative value");
    expect_error("\"blocked_by_cause\": {\"join\": 800000000}", "\"blocked_by_cause\": [1]", RGA_ERR_SCHEMA,
                 "threads[0].blocked_by_cause", "expected an object");
    expect_error("\"release_unknown_ns\": 300000000", "\"release_unknown_ns\": -3", RGA_ERR_SCHEMA,
                 "threads[2].release_unknown_ns", "negative value");
    expect_error("\"releaser\": 2, \"cause\": \"mutex\"", "\"releaser\": 7, \"cause\": \"mutex\"", RGA_ERR_REFERENCE,
                 "blocked_edges[1].releaser", "thread seq 7");
    expect_error("\"releaser_stack\": 0", "\"releaser_stack\": 3", RGA_ERR_REFERENCE,
                 "blocked_edges[1].releaser_stack", "stack id 3");
    expect_error("\"waiter\": 3, \"releaser\": 2", "\"waiter\": 3, \"releaser\": 2, \"cause\": 5, \"x\": 0",
                 RGA_ERR_SYNTAX, "", "duplicate");
    expect_error("\"cause\": \"mutex\", \"waiter_label_set\": 1", "\"cause\": 3, \"waiter_label_set\": 1",
                 RGA_ERR_SCHEMA, "blocked_edges[1].cause", "expected a cause name");
    expect_error("\"cause\": \"mutex\", \"waiter_label_set\": 1", "\"cause\": \"mutex\", \"waiter_label_set\": 4",
                 RGA_ERR_REFERENCE, "blocked_edges[1].waiter_label_set", "label set id 4");
    expect_error("{\"thread\": 4, \"cause\": \"other\"", "{\"thread\": 8, \"cause\": \"other\"", RGA_ERR_REFERENCE,
                 "blocked_methods[5].thread", "thread seq 8");
    expect_error("\"method\": \"PG::Connection#exec\"", "\"method\": 1", RGA_ERR_SCHEMA, "blocked_methods[5].method",
                 "expected a string");
    /* Sums the analysis adds must fit in int64: two causes of one thread
     * (an unknown name folds into other), and all threads' causes. */
    expect_error("\"sleep\": 500000000, \"other\": 400000000",
                 "\"other\": 9223372036854775807, \"fiber\": 400000000", RGA_ERR_SCHEMA,
                 "threads[3].blocked_by_cause.fiber", "too large");
    expect_error("\"sleep\": 500000000, \"other\": 400000000", "\"sleep\": 9223372036854775807, \"other\": 4",
                 RGA_ERR_SCHEMA, "threads[3].blocked_by_cause", "total blocked time by cause");
    expect_error("\"blocked_ns\": 800000000, \"count\": 1}", "\"blocked_ns\": 9223372036854775807, \"count\": 1}",
                 RGA_ERR_SCHEMA, "blocked_edges[1].blocked_ns", "total release-edge time");
}

/* The fixture and a copy of it placed after it: a snapshot series. */
static rga_report_t *
merge_series(const char *first_text, const char *second_text)
{
    char *text = fixture_text();
    rga_report_t *a = rga_test_load(first_text ? first_text : text);
    rga_report_t *b = rga_test_load(second_text ? second_text : text);
    b->meta.start_monotonic_ns = a->meta.start_monotonic_ns + a->meta.duration_ns;
    rga_report_t *pair[2] = {a, b}, *m = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_merge(pair, 2, &m, &err), RGA_OK);
    rga_report_free(a);
    rga_report_free(b);
    free(text);
    return m;
}

static void
test_merge_keeps_causes(void **state)
{
    (void)state;
    rga_report_t *m = merge_series(NULL, NULL);
    assert_true(m->has_causes);
    assert_int_equal(m->minor, 1);
    assert_int_equal(thread(m, 3)->cause_ns[RGA_CAUSE_QUEUE], 600 * MS);
    assert_int_equal(thread(m, 3)->release_unknown_ns, 600 * MS);
    assert_int_equal(m->n_interval_causes, 12);
    /* The second copy's queue wait moved with its interval. */
    size_t later = blocked_interval(m, 3, 1400 * MS);
    assert_int_equal(m->intervals[later].cause, RGA_CAUSE_QUEUE);
    assert_int_equal(rga_report_interval_cause(m, blocked_interval(m, 1, 1100 * MS))->releaser, 2);
    assert_int_equal(m->n_blocked_edges, 2);
    assert_int_equal(m->blocked_edges[0].blocked_ns, 1600 * MS);
    assert_int_equal(m->blocked_edges[0].count, 2);
    assert_int_equal(m->blocked_edges[1].releaser_stack, 0);
    assert_int_equal(m->n_blocked_methods, 6);
    assert_int_equal(m->blocked_methods[5].blocked_ns, 800 * MS);
    assert_int_equal(m->label_totals[2].cause_ns[RGA_CAUSE_MUTEX], 400 * MS);
    rga_report_free(m);
}

/* Release edges are keyed by their releaser stack too: a series whose
 * second report released the same waiter without a known stack keeps two
 * rows (their sum is the edge); dropped release stacks add up. */
static void
test_merge_keeps_release_stacks_apart(void **state)
{
    (void)state;
    char *base = fixture_text();
    char *first = rga_test_replace(base, "\"dropped_blocked_edges\": 0}",
                                   "\"dropped_blocked_edges\": 0, \"dropped_release_stacks\": 1}");
    char *second = rga_test_replace(first, ", \"releaser_stack\": 0}", "}");
    rga_report_t *m = merge_series(first, second);
    assert_int_equal(m->stats.dropped_release_stacks, 2);
    int64_t with_stack = 0, without = 0;
    size_t mutex_rows = 0;
    for (size_t i = 0; i < m->n_blocked_edges; i++) {
        const rga_blocked_edge_t *e = &m->blocked_edges[i];
        if (e->cause != RGA_CAUSE_MUTEX)
            continue;
        mutex_rows++;
        if (e->releaser_stack >= 0)
            with_stack += e->blocked_ns;
        else
            without += e->blocked_ns;
    }
    assert_int_equal(mutex_rows, 2);
    assert_int_equal(with_stack, 200 * MS);
    assert_int_equal(without, 200 * MS);
    rga_report_free(m);
    free(second);
    free(first);
    free(base);
}

static void
test_merge_with_minor0_counts_unknown(void **state)
{
    (void)state;
    /* The same report without causes (a minor-0 writer): its blocked time
     * joins the merged thread as unknown, so causes still sum to blocked. */
    char *text = fixture_text();
    char *old = rga_test_replace(text, "\"blocked_by_cause\": {\"mutex\": 200000000, \"queue\": 300000000}, ", "");
    char *old2 = rga_test_replace(old, "\"causes\"", "\"ignored_causes\"");
    char *old3 = rga_test_replace(old2, "\"interval_causes\"", "\"ignored_interval_causes\"");
    for (int old_first = 0; old_first < 2; old_first++) {
        rga_report_t *m = old_first ? merge_series(old3, NULL) : merge_series(NULL, old3);
        const rga_thread_t *w = thread(m, 3);
        assert_true(w->has_causes);
        assert_int_equal(w->cause_ns[RGA_CAUSE_UNKNOWN], 500 * MS);
        assert_int_equal(w->cause_ns[RGA_CAUSE_MUTEX], 200 * MS);
        int64_t sum = 0;
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            sum += w->cause_ns[c];
        assert_int_equal(sum, w->state_ns[RGA_STATE_BLOCKED]);
        int64_t old_start = old_first ? 400 * MS : 1400 * MS;
        assert_int_equal(m->intervals[blocked_interval(m, 3, old_start)].cause, RGA_CAUSE_UNKNOWN);
        rga_report_free(m);
    }
    free(old3);
    free(old2);
    free(old);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_loads),
        cmocka_unit_test(test_minor0_has_no_causes),
        cmocka_unit_test(test_unknown_cause_names_read_as_other),
        cmocka_unit_test(test_bad_minor1_input),
        cmocka_unit_test(test_merge_keeps_causes),
        cmocka_unit_test(test_merge_keeps_release_stacks_apart),
        cmocka_unit_test(test_merge_with_minor0_counts_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
