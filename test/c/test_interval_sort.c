/* test_interval_sort.c — the report's timeline sort (ext/rperf/interval_sort.c,
 * plain C, built here without Ruby) against a reference: for short and long
 * inputs, ties, negative and far-apart keys, the result is ordered by
 * (start_ns, thread_seq) and keeps the input order of equal records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interval_sort.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The reference order: start, then seq, then input position (kept in
 * label_set_id), which is what stability means here. */
static int
reference_cmp(const void *a, const void *b)
{
    const rperf_interval_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->thread_seq != y->thread_seq)
        return x->thread_seq < y->thread_seq ? -1 : 1;
    return (x->label_set_id > y->label_set_id) - (x->label_set_id < y->label_set_id);
}

static void
check_against_reference(size_t n, int64_t start_base, uint64_t start_span, uint32_t seqs)
{
    rperf_interval_t *input = calloc(n ? n : 1, sizeof(*input));
    rperf_interval_t *scratch = calloc(n ? n : 1, sizeof(*scratch));
    rperf_interval_t *expected = calloc(n ? n : 1, sizeof(*expected));
    assert_non_null(input);
    assert_non_null(scratch);
    assert_non_null(expected);
    for (size_t i = 0; i < n; i++) {
        input[i].start_ns = start_base + (int64_t)(start_span ? next_random() % start_span : 0);
        input[i].end_ns = input[i].start_ns + 1;
        input[i].thread_seq = (int32_t)(next_random() % seqs);
        input[i].label_set_id = (int32_t)i;
        input[i].state = (uint8_t)(i % 5);
    }
    memcpy(expected, input, n * sizeof(*input));
    qsort(expected, n, sizeof(*expected), reference_cmp);
    rperf_interval_t *sorted = rperf_interval_sort(input, scratch, n);
    assert_true(sorted == input || sorted == scratch);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(sorted[i].start_ns, expected[i].start_ns);
        assert_int_equal(sorted[i].thread_seq, expected[i].thread_seq);
        assert_int_equal(sorted[i].label_set_id, expected[i].label_set_id);
        assert_int_equal(sorted[i].state, expected[i].state);
    }
    free(input);
    free(scratch);
    free(expected);
}

static void
test_short_inputs(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 70; n++)
        check_against_reference(n, 1000, 50, 4);
}

static void
test_many_ties_keep_input_order(void **state)
{
    (void)state;
    /* Few distinct starts and seqs: nearly every record ties with others. */
    check_against_reference(20000, 5, 8, 3);
    /* One start for everything: only the seq passes move records. */
    check_against_reference(5000, 77, 0, 5000);
    /* One seq for everything. */
    check_against_reference(5000, 77, 1u << 20, 1);
}

static void
test_long_runs_and_wide_keys(void **state)
{
    (void)state;
    /* Seconds of monotonic time, hundreds of threads. */
    check_against_reference(200000, INT64_C(7) << 40, UINT64_C(5000000000), 600);
    /* Keys wider than any digit count in one pass, seqs beyond one digit. */
    check_against_reference(50000, INT64_C(1) << 50, UINT64_C(1) << 60, 1u << 22);
    /* Negative starts (clipped records of a cut are never negative, but the
     * sort must not depend on it). */
    check_against_reference(50000, -(INT64_C(1) << 40), UINT64_C(1) << 41, 100);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_inputs),
        cmocka_unit_test(test_many_ties_keep_input_order),
        cmocka_unit_test(test_long_runs_and_wide_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
