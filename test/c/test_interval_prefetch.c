/*
 * test_interval_prefetch.c — records read ahead on a worker thread
 * (ext/rperf/interval_prefetch.c, plain C, built here without Ruby): with
 * the worker and without it, the batches handed out are the reader's
 * records in the reader's order, whole (short reads, a batch of one, an
 * empty source), the end stays the end, and freeing in the middle stops
 * and joins the worker. Also built with ThreadSanitizer
 * (test_interval_prefetch_tsan) to check the hand-over between the threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interval_prefetch.h"
#include "interval_reference.h"

/* A reader over an array that returns at most `step` records a call (a
 * step that changes, like a merge's reads near a run's end). */
typedef struct array_source {
    const rperf_interval_t *records;
    size_t n, at, step, calls;
} array_source_t;

static size_t
read_array(void *source, rperf_interval_t *out, size_t max)
{
    array_source_t *s = source;
    size_t want = s->n - s->at;
    size_t step = 1 + (s->step + s->calls * 7) % s->step;
    s->calls++;
    if (want > max)
        want = max;
    if (want > step)
        want = step;
    memcpy(out, s->records + s->at, want * sizeof(*out));
    s->at += want;
    return want;
}

static void
check_reads(size_t n, size_t batch, size_t step, int threaded)
{
    rperf_interval_t *input = calloc(n ? n : 1, sizeof(*input));
    assert_non_null(input);
    uint64_t rng = 0x51ed27ull + n;
    interval_fill_random(input, n, 100, 1u << 20, 9, &rng);
    array_source_t source = {.records = input, .n = n, .step = step};
    rperf_interval_prefetch_t *p = rperf_interval_prefetch_new(read_array, &source, batch, threaded);
    assert_non_null(p);
    assert_int_equal(rperf_interval_prefetch_threaded(p), threaded);
    size_t at = 0;
    const rperf_interval_t *records;
    for (size_t got; (got = rperf_interval_prefetch_next(p, &records)) > 0;) {
        assert_true(got <= batch);
        assert_true(at + got <= n);
        for (size_t i = 0; i < got; i++)
            assert_true(interval_fields_equal(&records[i], &input[at + i]));
        at += got;
    }
    assert_int_equal(at, n);
    assert_int_equal(rperf_interval_prefetch_next(p, &records), 0);
    assert_int_equal(rperf_interval_prefetch_next(p, &records), 0);
    rperf_interval_prefetch_free(p);
    free(input);
}

static void
test_batches_are_the_readers_records_in_order(void **state)
{
    (void)state;
    for (int threaded = 0; threaded <= 1; threaded++) {
        check_reads(100000, 4096, 5000, threaded); /* reads longer than a batch */
        check_reads(20000, 512, 37, threaded);     /* short reads */
        check_reads(3000, 1, 1, threaded);         /* a record a batch */
        check_reads(0, 64, 1, threaded);           /* nothing */
    }
}

/* Freed after the first batch, and before any: the worker stops and is
 * joined (a hang or a leak fails the test or the sanitizer build). */
static void
test_free_in_the_middle(void **state)
{
    (void)state;
    size_t n = 50000;
    rperf_interval_t *input = calloc(n, sizeof(*input));
    assert_non_null(input);
    uint64_t rng = 0x77ull;
    interval_fill_random(input, n, 0, 1000, 3, &rng);
    for (int taken = 0; taken <= 2; taken++) {
        array_source_t source = {.records = input, .n = n, .step = 100};
        rperf_interval_prefetch_t *p = rperf_interval_prefetch_new(read_array, &source, 100, 1);
        assert_non_null(p);
        assert_true(rperf_interval_prefetch_threaded(p));
        const rperf_interval_t *records;
        for (int i = 0; i < taken; i++)
            assert_true(rperf_interval_prefetch_next(p, &records) > 0);
        rperf_interval_prefetch_free(p);
        /* Read ahead by at most the two batches (reads of at most 100). */
        assert_true(source.at <= (size_t)(taken + 2) * 100);
    }
    rperf_interval_prefetch_free(NULL);
    free(input);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_are_the_readers_records_in_order),
        cmocka_unit_test(test_free_in_the_middle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
