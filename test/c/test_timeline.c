/* test_timeline.c — bucketing conserves each thread's interval time, respects
 * the window, picks the dominant state, and renders one row per thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rga_test_util.h"
#include "timeline.h"

static rga_report_t *
synthetic(void)
{
    char *path = rga_test_generate("--threads 7 --ractors 2 --labels 3 --slices 700 --seed 3");
    assert_non_null(path);
    rga_report_t *r = NULL;
    rga_error_t err;
    assert_int_equal(rga_report_load_file(path, &r, &err), RGA_OK);
    unlink(path);
    free(path);
    return r;
}

/* Interval time of thread index ti in state s clipped to [from, to). */
static int64_t
clipped(const rga_report_t *r, size_t ti, int s, int64_t from, int64_t to)
{
    int64_t sum = 0;
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        if (iv->thread_index != ti || iv->state != s)
            continue;
        int64_t a = iv->start_ns > from ? iv->start_ns : from, b = iv->end_ns < to ? iv->end_ns : to;
        if (b > a)
            sum += b - a;
    }
    return sum;
}

static void
check_conservation(const rga_report_t *r, int64_t from, int64_t to, size_t width)
{
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, NULL, &err), RGA_OK);
    rga_timeline_t t;
    assert_int_equal(rga_timeline_build(r, &f, from, to, width, &t, &err), RGA_OK);
    assert_int_equal(t.n_rows, r->n_threads);
    for (size_t row = 0; row < t.n_rows; row++) {
        for (int s = 0; s < RGA_STATE_COUNT; s++) {
            int64_t sum = 0;
            for (size_t b = 0; b < t.n_buckets; b++)
                sum += rga_timeline_ns(&t, row, b, s);
            assert_int_equal(sum, clipped(r, t.row_thread[row], s, t.from_ns, t.to_ns));
        }
    }
    rga_timeline_free(&t);
    rga_filter_free(&f);
}

static void
test_conserves_time(void **state)
{
    (void)state;
    rga_report_t *r = synthetic();
    size_t widths[] = {1, 7, 80, 333, 2000};
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
        check_conservation(r, 0, 0, widths[i]);
    /* Whole axis without a window equals the thread totals (generator covers lifetimes). */
    for (size_t ti = 0; ti < r->n_threads; ti++)
        assert_int_equal(clipped(r, ti, RGA_STATE_GVL_WAIT, 0, INT64_MAX),
                         r->threads[ti].state_ns[RGA_STATE_GVL_WAIT]);
    check_conservation(r, r->meta.duration_ns / 3, r->meta.duration_ns / 2, 61);
    check_conservation(r, 12345, 12345 + 1000, 1000); /* buckets of 1 ns */
    rga_report_free(r);
}

static void
test_dominant_and_idle(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, NULL, &err), RGA_OK);
    rga_timeline_t t;
    /* 10 buckets of 100 ns over [0, 1000). */
    assert_int_equal(rga_timeline_build(r, &f, 0, 1000, 10, &t, &err), RGA_OK);
    size_t row2 = 1; /* rows follow threads, sorted by seq */
    assert_int_equal(r->threads[t.row_thread[row2]].seq, 2);
    assert_int_equal(rga_timeline_dominant(&t, row2, 0), RGA_TIMELINE_IDLE); /* not started */
    assert_int_equal(rga_timeline_dominant(&t, row2, 1), RGA_STATE_BLOCKED);
    assert_int_equal(rga_timeline_dominant(&t, row2, 3), RGA_STATE_GVL_WAIT);
    assert_int_equal(rga_timeline_dominant(&t, row2, 7), RGA_STATE_RUNNING);
    assert_int_equal(rga_timeline_dominant(&t, row2, 9), RGA_TIMELINE_IDLE); /* exited */
    /* Thread 1, bucket 3: 60 ns GC mark + 40 ns GC sweep. */
    assert_int_equal(rga_timeline_ns(&t, 0, 3, RGA_STATE_GC_MARK), 60);
    assert_int_equal(rga_timeline_dominant(&t, 0, 3), RGA_STATE_GC_MARK);

    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    rga_timeline_text_opts_t o = {false, true};
    assert_int_equal(rga_timeline_write_text(&t, out, &o, &err), RGA_OK);
    fclose(out);
    size_t rows = 0;
    for (char *p = buf; (p = strstr(p, "|\n")) != NULL; p += 2)
        rows++;
    assert_int_equal(rows, 3);
    assert_non_null(strstr(buf, "legend:"));
    assert_non_null(strstr(buf, "worker-a #2"));
    /* Thread 2's row: idle, blocked, blocked?, wait ... in ASCII glyphs. */
    char *row = strstr(buf, "worker-a #2");
    row = strchr(row, '|') + 1;
    assert_int_equal(row[0], ' ');
    assert_int_equal(row[1], '.');
    assert_int_equal(row[3], 'W');
    assert_int_equal(row[7], '#');
    free(buf);
    rga_timeline_free(&t);

    assert_int_equal(rga_timeline_build(r, &f, 500, 400, 10, &t, &err), RGA_ERR_ARGUMENT);
    assert_int_equal(rga_timeline_build(r, &f, 0, 0, 0, &t, &err), RGA_ERR_ARGUMENT);
    rga_filter_free(&f);
    rga_report_free(r);
}

static void
test_filtered_rows(void **state)
{
    (void)state;
    rga_report_t *r = rga_test_load(rga_test_small_report);
    rga_filter_spec_t spec = {NULL, 1, NULL, 0, NULL};
    rga_filter_t f;
    rga_error_t err;
    assert_int_equal(rga_filter_init(&f, r, &spec, &err), RGA_OK);
    rga_timeline_t t;
    assert_int_equal(rga_timeline_build(r, &f, 0, 0, 20, &t, &err), RGA_OK);
    assert_int_equal(t.n_rows, 2);
    rga_timeline_free(&t);
    rga_filter_free(&f);
    rga_report_free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conserves_time),
        cmocka_unit_test(test_dominant_and_idle),
        cmocka_unit_test(test_filtered_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
