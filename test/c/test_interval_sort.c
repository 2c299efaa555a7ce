/* test_interval_sort.c — the report's timeline sort (ext/rperf/interval_sort.c,
 * plain C, built here without Ruby) against a reference: for short and long
 * inputs, ties, negative and far-apart keys, the result is ordered by
 * (start_ns, thread_seq) and keeps the input order of equal records; and
 * sorted slices merged from their encoded runs give the same order with
 * every field kept. The key sort (sort_keys: indexes in that order,
 * records unmoved) is checked against the same reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interval_sort.h"
#include "interval_reference.h"
#include "xorshift.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next_random(void)
{
    return xorshift_next(&rng);
}

/* A random input of n records, room for the sort's scratch, and the
 * input sorted by the reference. */
typedef struct sort_case {
    rperf_interval_t *input, *scratch, *expected;
} sort_case_t;

static sort_case_t
make_case(size_t n, int64_t start_base, uint64_t start_span, uint32_t seqs)
{
    sort_case_t c = {calloc(n ? n : 1, sizeof(rperf_interval_t)), calloc(n ? n : 1, sizeof(rperf_interval_t)),
                     calloc(n ? n : 1, sizeof(rperf_interval_t))};
    assert_non_null(c.input);
    assert_non_null(c.scratch);
    assert_non_null(c.expected);
    interval_fill_random(c.input, n, start_base, start_span, seqs, &rng);
    memcpy(c.expected, c.input, n * sizeof(*c.input));
    qsort(c.expected, n, sizeof(*c.expected), interval_reference_cmp);
    return c;
}

/* sort_keys on the same input: NULL exactly when expected (the keys do
 * not fit), else the indexes of the reference order, `input` untouched. */
static void
check_keys_against_reference(const sort_case_t *c, size_t n, int keys_fit)
{
    uint64_t *keys = calloc(n ? n : 1, sizeof(uint64_t)), *scratch = calloc(n ? n : 1, sizeof(uint64_t));
    assert_non_null(keys);
    assert_non_null(scratch);
    unsigned index_bits = 99;
    const uint64_t *order = rperf_interval_sort_keys(c->input, n, keys, scratch, &index_bits);
    if (!keys_fit) {
        assert_null(order);
    } else {
        assert_true(order == keys || order == scratch);
        assert_true(index_bits <= 32);
        uint64_t mask = index_bits ? ~0ull >> (64 - index_bits) : 0;
        for (size_t i = 0; i < n; i++) {
            size_t at = (size_t)(order[i] & mask);
            assert_true(at < n);
            /* label_set_id is the input position: the reference's record. */
            assert_int_equal(c->input[at].label_set_id, c->expected[i].label_set_id);
            assert_int_equal(c->input[at].label_set_id, (int32_t)at);
        }
    }
    free(keys);
    free(scratch);
}

static void
check_against_reference_keys(size_t n, int64_t start_base, uint64_t start_span, uint32_t seqs, int keys_fit)
{
    sort_case_t c = make_case(n, start_base, start_span, seqs);
    check_keys_against_reference(&c, n, keys_fit);
    rperf_interval_t *input = c.input, *scratch = c.scratch, *expected = c.expected;
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
check_against_reference(size_t n, int64_t start_base, uint64_t start_span, uint32_t seqs)
{
    check_against_reference_keys(n, start_base, start_span, seqs, 1);
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
    /* Keys wider than any digit count in one pass, seqs beyond one digit:
     * 60 + 22 + 16 bits do not make one key. */
    check_against_reference_keys(50000, INT64_C(1) << 50, UINT64_C(1) << 60, 1u << 22, 0);
    /* 47 + 1 + 16 bits: exactly a key's 64. */
    check_against_reference(40000, 12345, UINT64_C(1) << 47, 2);
    /* Negative starts (clipped records of a cut are never negative, but the
     * sort must not depend on it). */
    check_against_reference(50000, -(INT64_C(1) << 40), UINT64_C(1) << 41, 100);
}

/* Slices of one input sorted each and merged give the stable sort of the
 * whole input, whatever the slice sizes (one record, uneven, empty). */
static void
check_merge(size_t n, size_t slice, uint64_t start_span, uint32_t seqs)
{
    sort_case_t c = make_case(n, 1000, start_span, seqs);
    rperf_interval_t *input = c.input, *scratch = c.scratch, *expected = c.expected;
    size_t nruns = slice ? (n + slice - 1) / slice : 0;
    rperf_interval_store_t *runs = calloc(nruns ? nruns : 1, sizeof(*runs));
    assert_non_null(runs);
    for (size_t r = 0; r < nruns; r++) {
        size_t from = r * slice, len = n - from < slice ? n - from : slice;
        rperf_interval_t *sorted = rperf_interval_sort(input + from, scratch, len);
        rperf_interval_store_init(&runs[r]);
        for (size_t i = 0; i < len; i++)
            assert_int_equal(rperf_interval_store_append(&runs[r], &sorted[i]), 0);
    }
    rperf_interval_store_t out;
    rperf_interval_store_init(&out);
    assert_int_equal(rperf_interval_merge_runs(runs, nruns, &out), 0);
    assert_int_equal(out.count, n);
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, &out, 0);
    rperf_interval_t got;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rperf_interval_store_next(&cur, &got), 1);
        assert_memory_equal(&got.start_ns, &expected[i].start_ns, sizeof(int64_t));
        assert_int_equal(got.end_ns, expected[i].end_ns);
        assert_int_equal(got.thread_seq, expected[i].thread_seq);
        assert_int_equal(got.label_set_id, expected[i].label_set_id);
        assert_int_equal(got.stack_id, expected[i].stack_id);
        assert_int_equal(got.releaser_seq, expected[i].releaser_seq);
        assert_int_equal(got.state, expected[i].state);
        assert_int_equal(got.cause, expected[i].cause);
    }
    assert_int_equal(rperf_interval_store_next(&cur, &got), 0);
    /* Read as it merges, in batches of uneven sizes: the same records. Two
     * readers at once over the same runs do not disturb each other. */
    rperf_interval_merge_t *m = rperf_interval_merge_new(runs, nruns), *m2 = rperf_interval_merge_new(runs, nruns);
    assert_non_null(m);
    assert_non_null(m2);
    rperf_interval_t batch[37];
    size_t seen = 0;
    for (size_t want = 1, got_n; (got_n = rperf_interval_merge_read(m, batch, want)) > 0; want = want % 31 + 5) {
        assert_true(got_n <= want);
        for (size_t i = 0; i < got_n; i++, seen++) {
            assert_true(seen < n);
            assert_memory_equal(&batch[i].start_ns, &expected[seen].start_ns, sizeof(int64_t));
            assert_int_equal(batch[i].end_ns, expected[seen].end_ns);
            assert_int_equal(batch[i].thread_seq, expected[seen].thread_seq);
            assert_int_equal(batch[i].label_set_id, expected[seen].label_set_id);
            assert_int_equal(batch[i].stack_id, expected[seen].stack_id);
            assert_int_equal(batch[i].releaser_seq, expected[seen].releaser_seq);
            assert_int_equal(batch[i].state, expected[seen].state);
            assert_int_equal(batch[i].cause, expected[seen].cause);
            if (seen % 7 == 0) {
                rperf_interval_t other;
                assert_int_equal(rperf_interval_merge_read(m2, &other, 1), 1);
            }
        }
    }
    assert_int_equal(seen, n);
    assert_int_equal(rperf_interval_merge_read(m, batch, 37), 0);
    rperf_interval_merge_free(m);
    rperf_interval_merge_free(m2);
    /* Records copied from the runs as bytes and records encoded again make
     * the very bytes (and key frames) of the sorted input appended whole. */
    rperf_interval_store_t direct;
    rperf_interval_store_init(&direct);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rperf_interval_store_append(&direct, &expected[i]), 0);
    assert_int_equal(out.used, direct.used);
    assert_int_equal(out.nkeys, direct.nkeys);
    if (n) {
        assert_memory_equal(out.bytes, direct.bytes, direct.used);
    }
    for (size_t k = 0; k < direct.nkeys; k++) {
        assert_int_equal(out.keys[k].offset, direct.keys[k].offset);
        assert_int_equal(out.keys[k].state.end_ns, direct.keys[k].state.end_ns);
        assert_int_equal(out.keys[k].state.thread_seq, direct.keys[k].state.thread_seq);
        assert_int_equal(out.keys[k].state.label_set_id, direct.keys[k].state.label_set_id);
        assert_int_equal(out.keys[k].state.stack_id, direct.keys[k].state.stack_id);
    }
    rperf_interval_store_free(&direct);
    for (size_t r = 0; r < nruns; r++)
        rperf_interval_store_free(&runs[r]);
    rperf_interval_store_free(&out);
    free(runs);
    free(input);
    free(scratch);
    free(expected);
}

/* A report's slices: starts nearly in order (records arrive as they end),
 * and already in order; both through the keys. */
static void
test_keys_of_nearly_sorted_slices(void **state)
{
    (void)state;
    size_t n = 32768;
    sort_case_t c = make_case(n, 0, 0, 8);
    int64_t clock = 1000000;
    for (size_t i = 0; i < n; i++) {
        clock += (int64_t)(next_random() % 3000);
        /* Most intervals are short; one in 500 began long before. */
        c.input[i].start_ns = clock - (int64_t)(next_random() % 500 ? next_random() % 20000 : next_random() % clock);
    }
    memcpy(c.expected, c.input, n * sizeof(*c.input));
    qsort(c.expected, n, sizeof(*c.expected), interval_reference_cmp);
    check_keys_against_reference(&c, n, 1);
    /* Already sorted: the keys come back as they were built. */
    memcpy(c.input, c.expected, n * sizeof(*c.input));
    for (size_t i = 0; i < n; i++)
        c.input[i].label_set_id = (int32_t)i;
    memcpy(c.expected, c.input, n * sizeof(*c.input));
    check_keys_against_reference(&c, n, 1);
    free(c.input);
    free(c.scratch);
    free(c.expected);
}

static void
test_merged_runs_are_the_stable_sort(void **state)
{
    (void)state;
    check_merge(0, 10, 100, 3);
    check_merge(1, 10, 100, 3);
    check_merge(1000, 1, 50, 3);              /* a run per record */
    check_merge(20000, 777, 20, 4);           /* ties across runs */
    check_merge(100000, 65536, 1u << 30, 16); /* a long run and a short one */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_inputs),
        cmocka_unit_test(test_many_ties_keep_input_order),
        cmocka_unit_test(test_long_runs_and_wide_keys),
        cmocka_unit_test(test_keys_of_nearly_sorted_slices),
        cmocka_unit_test(test_merged_runs_are_the_stable_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
