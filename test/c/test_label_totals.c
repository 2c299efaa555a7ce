/* test_label_totals.c — the (thread, label set) totals table of the
 * extension (ext/rperf/label_totals.c, plain C, built here without Ruby):
 * a row is found again with its totals through any number of growths, a
 * copy holds every row once, and freeing leaves an empty table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "label_totals.h"

#define THREADS 40
#define LABELS 25 /* 1,000 rows: the table grows from 64 several times */

static void
test_rows_survive_growth_and_copy_once(void **state)
{
    (void)state;
    rperf_label_totals_t t;
    memset(&t, 0, sizeof(t));
    for (int seq = 1; seq <= THREADS; seq++) {
        for (int label = 0; label < LABELS; label++) {
            rperf_label_total_t *row = rperf_label_totals_row(&t, seq, label);
            assert_non_null(row);
            row->totals[RPERF_STATE_RUNNING] += seq * 1000 + label;
        }
    }
    /* Every row again: the same totals, no new rows. */
    for (int seq = 1; seq <= THREADS; seq++) {
        for (int label = 0; label < LABELS; label++) {
            rperf_label_total_t *row = rperf_label_totals_row(&t, seq, label);
            assert_int_equal(row->thread_seq, seq);
            assert_int_equal(row->label_set_id, label);
            assert_int_equal(row->totals[RPERF_STATE_RUNNING], seq * 1000 + label);
            row->totals[RPERF_STATE_GVL_WAIT] += 1;
        }
    }
    assert_int_equal(t.used, THREADS * LABELS);

    size_t n;
    rperf_label_total_t *rows = rperf_label_totals_copy(&t, &n);
    assert_non_null(rows);
    assert_int_equal(n, THREADS * LABELS);
    static char seen[THREADS + 1][LABELS];
    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < n; i++) {
        const rperf_label_total_t *row = &rows[i];
        assert_in_range(row->thread_seq, 1, THREADS);
        assert_in_range(row->label_set_id, 0, LABELS - 1);
        assert_int_equal(seen[row->thread_seq][row->label_set_id], 0);
        seen[row->thread_seq][row->label_set_id] = 1;
        assert_int_equal(row->totals[RPERF_STATE_RUNNING], row->thread_seq * 1000 + row->label_set_id);
        assert_int_equal(row->totals[RPERF_STATE_GVL_WAIT], 1);
    }
    free(rows);

    rperf_label_totals_free(&t);
    rows = rperf_label_totals_copy(&t, &n);
    assert_non_null(rows);
    assert_int_equal(n, 0);
    free(rows);
    assert_non_null(rperf_label_totals_row(&t, 1, 0));
    assert_int_equal(t.used, 1);
    rperf_label_totals_free(&t);
}

static void
test_thread_zero_is_refused(void **state)
{
    (void)state;
    /* seq 0 marks an empty row: accepting it would lose the row. */
    rperf_label_totals_t t;
    memset(&t, 0, sizeof(t));
    assert_null(rperf_label_totals_row(&t, 0, 3));
    assert_int_equal(t.used, 0);
    rperf_label_totals_free(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_survive_growth_and_copy_once),
        cmocka_unit_test(test_thread_zero_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
