/*
 * test_interval_runs.c — a stop's slices sorted into encoded runs
 * (ext/rperf/interval_runs.c, plain C, built here without Ruby): with the
 * worker thread and without it, the same input gives the same runs byte for
 * byte, each run the stable (start_ns, thread_seq) sort of its slice with
 * every field kept, for full, partial, one-record and empty slices and for
 * keys too wide for the key sort; memory running out in any run (in the
 * worker or on the caller's thread) is reported by finish with nothing
 * returned. Linked with realloc wrapped (-Wl,--wrap=realloc) to make an
 * allocation fail on purpose; also built with ThreadSanitizer
 * (test_interval_runs_tsan) to check the hand-over between the threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interval_runs.h"
#include "interval_reference.h"

/* realloc calls left before one fails; 0: none fails. */
static atomic_int realloc_fail_countdown;

void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);

void *
__wrap_realloc(void *p, size_t size)
{
    int left = atomic_load(&realloc_fail_countdown);
    while (left > 0) {
        if (atomic_compare_exchange_weak(&realloc_fail_countdown, &left, left - 1)) {
            if (left == 1)
                return NULL;
            break;
        }
    }
    return __real_realloc(p, size);
}

/* n random records (interval_reference.h). wide: starts spanning 2^60 ns
 * and seqs of 22 bits, too wide for one 64-bit key. */
static rperf_interval_t *
random_input(size_t n, int wide, uint64_t seed)
{
    rperf_interval_t *input = calloc(n ? n : 1, sizeof(*input));
    assert_non_null(input);
    uint64_t rng = seed;
    interval_fill_random(input, n, 1000, wide ? UINT64_C(1) << 60 : 5000, wide ? 1u << 22 : 6, &rng);
    return input;
}

/* The chunk lengths submitted, in order, for one input. */
typedef struct chunks {
    const size_t *lengths;
    size_t count;
} chunks_t;

static size_t
chunks_total(chunks_t c)
{
    size_t n = 0;
    for (size_t i = 0; i < c.count; i++)
        n += c.lengths[i];
    return n;
}

/* Feeds the input in those chunks; returns finish's result. */
static int
make_runs(const rperf_interval_t *input, chunks_t c, size_t slice_records, int threaded, int *was_threaded,
          rperf_interval_store_t **runs, size_t *nruns)
{
    rperf_interval_runs_t *r = rperf_interval_runs_new(slice_records, threaded);
    assert_non_null(r);
    *was_threaded = rperf_interval_runs_threaded(r);
    size_t at = 0;
    for (size_t i = 0; i < c.count; i++) {
        assert_true(c.lengths[i] <= slice_records);
        rperf_interval_t *slice = rperf_interval_runs_slice(r);
        memcpy(slice, input + at, c.lengths[i] * sizeof(*slice));
        at += c.lengths[i];
        if (rperf_interval_runs_submit(r, c.lengths[i]) < 0)
            break;
    }
    return rperf_interval_runs_finish(r, runs, nruns);
}

static void
free_runs(rperf_interval_store_t *runs, size_t nruns)
{
    for (size_t i = 0; i < nruns; i++)
        rperf_interval_store_free(&runs[i]);
    free(runs);
}

/* Threaded and single-threaded runs of the same chunks: equal bytes, and
 * each run the stable sort of its chunk. */
static void
check_chunks(chunks_t c, size_t slice_records, int wide, uint64_t seed)
{
    size_t n = chunks_total(c);
    rperf_interval_t *input = random_input(n, wide, seed);
    rperf_interval_store_t *threaded_runs, *single_runs;
    size_t threaded_n, single_n;
    int was_threaded;
    assert_int_equal(make_runs(input, c, slice_records, 1, &was_threaded, &threaded_runs, &threaded_n), 0);
    assert_true(was_threaded);
    assert_int_equal(make_runs(input, c, slice_records, 0, &was_threaded, &single_runs, &single_n), 0);
    assert_false(was_threaded);
    assert_int_equal(threaded_n, single_n);

    size_t at = 0, run = 0;
    for (size_t i = 0; i < c.count; i++) {
        size_t len = c.lengths[i];
        if (len == 0)
            continue; /* an empty slice makes no run */
        assert_true(run < threaded_n);
        const rperf_interval_store_t *t = &threaded_runs[run], *s = &single_runs[run];
        assert_int_equal(t->count, len);
        assert_int_equal(s->count, len);
        assert_int_equal(t->used, s->used);
        assert_memory_equal(t->bytes, s->bytes, t->used);

        rperf_interval_t *expected = malloc(len * sizeof(*expected));
        assert_non_null(expected);
        memcpy(expected, input + at, len * sizeof(*expected));
        qsort(expected, len, sizeof(*expected), interval_reference_cmp);
        rperf_interval_store_cursor_t cur;
        rperf_interval_store_cursor_init(&cur, t, 0);
        rperf_interval_t got;
        for (size_t k = 0; k < len; k++) {
            assert_int_equal(rperf_interval_store_next(&cur, &got), 1);
            assert_true(interval_fields_equal(&got, &expected[k]));
            assert_int_equal(got.label_set_id, expected[k].label_set_id); /* says which, when not */
        }
        assert_int_equal(rperf_interval_store_next(&cur, &got), 0);
        free(expected);
        at += len;
        run++;
    }
    assert_int_equal(run, threaded_n);
    free_runs(threaded_runs, threaded_n);
    free_runs(single_runs, single_n);
    free(input);
}

static void
test_threaded_runs_equal_single_threaded(void **state)
{
    (void)state;
    /* Full slices, an empty one, one record, a partial last slice. */
    static const size_t lengths[] = {4096, 4096, 0, 1, 4096, 4095, 4096, 4096, 4096, 17};
    check_chunks((chunks_t){lengths, sizeof(lengths) / sizeof(*lengths)}, 4096, 0, 0x9e3779b97f4a7c15ull);
    /* Many small slices: the two threads hand over often. */
    size_t many[300];
    for (size_t i = 0; i < 300; i++)
        many[i] = 1 + (i * 37) % 64;
    check_chunks((chunks_t){many, 300}, 64, 0, 0x1234567ull);
}

static void
test_wide_keys_sort_the_records(void **state)
{
    (void)state;
    static const size_t lengths[] = {3000, 3000, 2999};
    check_chunks((chunks_t){lengths, 3}, 3000, 1, 0xfeedbeefull);
}

static void
test_no_slices_no_runs(void **state)
{
    (void)state;
    for (int threaded = 0; threaded <= 1; threaded++) {
        rperf_interval_runs_t *r = rperf_interval_runs_new(128, threaded);
        assert_non_null(r);
        assert_int_equal(rperf_interval_runs_submit(r, 0), 0);
        rperf_interval_store_t sentinel, *runs = &sentinel;
        size_t nruns = 99;
        assert_int_equal(rperf_interval_runs_finish(r, &runs, &nruns), 0);
        assert_null(runs);
        assert_int_equal(nruns, 0);
    }
    rperf_interval_store_t *runs;
    size_t nruns;
    assert_int_equal(rperf_interval_runs_finish(NULL, &runs, &nruns), 0);
}

/* A realloc failing in the k-th call, for every k up to past the last:
 * finish says -1 exactly when one failed, and returns nothing then (a
 * sanitizer build checks nothing leaked). */
static void
test_memory_running_out_is_reported(void **state)
{
    (void)state;
    static const size_t lengths[] = {512, 512, 512, 100};
    chunks_t c = {lengths, 4};
    rperf_interval_t *input = random_input(chunks_total(c), 0, 0xabcdefull);
    for (int threaded = 0; threaded <= 1; threaded++) {
        int failures = 0, successes = 0;
        for (int k = 1; k <= 80; k++) {
            atomic_store(&realloc_fail_countdown, k);
            rperf_interval_store_t *runs;
            size_t nruns;
            int was_threaded;
            int rc = make_runs(input, c, 512, threaded, &was_threaded, &runs, &nruns);
            int failed_one = atomic_load(&realloc_fail_countdown) == 0;
            atomic_store(&realloc_fail_countdown, 0);
            assert_int_equal(was_threaded, threaded);
            if (failed_one) {
                assert_int_equal(rc, -1);
                assert_null(runs);
                assert_int_equal(nruns, 0);
                failures++;
            } else {
                assert_int_equal(rc, 0);
                assert_int_equal(nruns, 4);
                free_runs(runs, nruns);
                successes++;
            }
        }
        assert_true(failures > 0);
        assert_true(successes > 0);
    }
    free(input);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threaded_runs_equal_single_threaded),
        cmocka_unit_test(test_wide_keys_sort_the_records),
        cmocka_unit_test(test_no_slices_no_runs),
        cmocka_unit_test(test_memory_running_out_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
