/* test_interval_json.c — the timeline's JSON text (ext/rperf/
 * interval_json.c, plain C, built here without Ruby) against a reference
 * made with printf's "%lld": every number at the edges of its length
 * (0, 9/10, 10^k - 1 and 10^k, both signs, INT64_MIN/MAX), and whole lists
 * of random records, large enough for several chunks, for both arrays
 * (intervals, and the causes of the blocked records), byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interval_json.h"
#include "report_format.h"
#include "xorshift.h"

static uint64_t rng = 0x5851f42d4c957f2dull;

static uint64_t
next_random(void)
{
    return xorshift_next(&rng);
}

static void
check_int(int64_t v)
{
    char got[RPERF_INTERVAL_JSON_INT_MAX + 8], want[32];
    memset(got, 'x', sizeof(got));
    size_t n = rperf_interval_json_int(got, v);
    int w = snprintf(want, sizeof(want), "%lld", (long long)v);
    assert_true(n <= RPERF_INTERVAL_JSON_INT_MAX);
    assert_int_equal(n, (size_t)w);
    assert_memory_equal(got, want, n);
    assert_int_equal(got[n], 'x'); /* nothing written past the number */
}

static void
test_numbers_at_every_length_edge(void **unused)
{
    (void)unused;
    check_int(0);
    check_int(INT64_MAX);
    check_int(INT64_MIN);
    check_int(INT64_MIN + 1);
    uint64_t p = 1;
    for (int k = 0; k <= 18; k++, p *= 10) {
        int64_t v = (int64_t)p;
        check_int(v);
        check_int(v - 1);
        check_int(v + 1);
        check_int(-v);
        check_int(-(v - 1));
        if (k < 18)
            check_int(v * 5);
    }
    for (unsigned bits = 0; bits < 63; bits++) {
        check_int((int64_t)1 << bits);
        check_int(((int64_t)1 << bits) - 1);
        check_int(-((int64_t)1 << bits));
    }
    for (int i = 0; i < 200000; i++) {
        uint64_t r = next_random();
        check_int((int64_t)(r >> (next_random() % 64)));
        check_int((int64_t)r);
    }
}

/* The text of the store's rows made one record at a time with printf. */
static char *
reference_text(const rperf_interval_t *records, size_t n, rperf_interval_json_rows_t rows, size_t *length)
{
    char *out = malloc(n * 140 + 3);
    assert_non_null(out);
    size_t used = 0;
    out[used++] = '[';
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const rperf_interval_t *iv = &records[i];
        if (rows == RPERF_INTERVAL_JSON_CAUSES) {
            if (iv->state != RPERF_STATE_BLOCKED || iv->cause == RPERF_CAUSE_UNKNOWN)
                continue;
            used += (size_t)sprintf(out + used, "%s[%d,%lld,%d,%d]", first ? "" : ",", iv->thread_seq,
                                    (long long)iv->start_ns, iv->cause, iv->releaser_seq);
        } else {
            used += (size_t)sprintf(out + used, "%s[%d,%d,%lld,%lld,%d,%d]", first ? "" : ",", iv->thread_seq,
                                    iv->state, (long long)iv->start_ns, (long long)iv->end_ns, iv->label_set_id,
                                    iv->stack_id);
        }
        first = 0;
    }
    out[used++] = ']';
    *length = used;
    return out;
}

typedef struct text {
    char *bytes;
    size_t length, capacity;
    size_t calls, largest;
} text_t;

static void
collect(const char *chunk, size_t length, void *arg)
{
    text_t *t = arg;
    assert_true(length <= RPERF_INTERVAL_JSON_CHUNK);
    if (t->length + length > t->capacity) {
        t->capacity = (t->length + length) * 2;
        t->bytes = realloc(t->bytes, t->capacity);
        assert_non_null(t->bytes);
    }
    memcpy(t->bytes + t->length, chunk, length);
    t->length += length;
    t->calls++;
    if (length > t->largest)
        t->largest = length;
}

static int64_t
edge_value(void)
{
    static const int64_t edges[] = {0,         9,          10,        99,        100, 99999999, 100000000,
                                    999999999, 1000000000, INT64_MAX, INT64_MIN, -1,  -10,      -100000000};
    return edges[next_random() % (sizeof(edges) / sizeof(edges[0]))];
}

/* n records like a report's (times in ns from the start, a few threads,
 * blocked ones with a cause and a releaser), one in 16 with edge values. */
static void
check_lists(size_t n)
{
    rperf_interval_t *records = calloc(n ? n : 1, sizeof(*records));
    assert_non_null(records);
    rperf_interval_store_t store;
    rperf_interval_store_init(&store);
    int64_t clock = 0;
    for (size_t i = 0; i < n; i++) {
        rperf_interval_t *r = &records[i];
        clock += (int64_t)(next_random() % 5000);
        r->start_ns = clock;
        r->end_ns = clock + (int64_t)(next_random() % 100000);
        r->thread_seq = 1 + (int32_t)(next_random() % 9);
        r->state = (uint8_t)(next_random() % 5);
        r->label_set_id = (int32_t)(next_random() % 3);
        r->stack_id = next_random() % 3 ? -1 : (int32_t)(next_random() % 5000);
        if (r->state == RPERF_STATE_BLOCKED) {
            r->cause = (uint8_t)(next_random() % 5);
            r->releaser_seq = r->cause ? (int32_t)(next_random() % 10) : 0;
        }
        if (next_random() % 16 == 0) {
            r->start_ns = edge_value();
            r->end_ns = edge_value();
            r->thread_seq = (int32_t)edge_value();
            r->label_set_id = (int32_t)edge_value();
            r->stack_id = (int32_t)edge_value();
            r->releaser_seq = (int32_t)edge_value();
            r->cause = (uint8_t)next_random();
        }
        assert_int_equal(rperf_interval_store_append(&store, r), 0);
    }
    for (int causes = 0; causes <= 1; causes++) {
        rperf_interval_json_rows_t rows = causes ? RPERF_INTERVAL_JSON_CAUSES : RPERF_INTERVAL_JSON_INTERVALS;
        size_t want_length;
        char *want = reference_text(records, n, rows, &want_length);
        text_t got = {0};
        rperf_interval_json_write(&store, rows, collect, &got);
        assert_true(got.calls >= 1);
        assert_int_equal(got.length, want_length);
        assert_memory_equal(got.bytes, want, want_length);
        if (want_length > 2 * RPERF_INTERVAL_JSON_CHUNK)
            assert_true(got.calls > 2); /* streamed, not held whole */
        free(got.bytes);
        free(want);
    }
    /* Both arrays from one pass (put_pair), in batches of uneven sizes:
     * each the same bytes. */
    size_t rows_length, causes_length;
    char *want_rows = reference_text(records, n, RPERF_INTERVAL_JSON_INTERVALS, &rows_length);
    char *want_causes = reference_text(records, n, RPERF_INTERVAL_JSON_CAUSES, &causes_length);
    static char rows_chunk[RPERF_INTERVAL_JSON_CHUNK], causes_chunk[RPERF_INTERVAL_JSON_CHUNK];
    text_t got_rows = {0}, got_causes = {0};
    rperf_interval_json_out_t rows, causes;
    rperf_interval_json_begin(&rows, RPERF_INTERVAL_JSON_INTERVALS, rows_chunk, collect, &got_rows);
    rperf_interval_json_begin(&causes, RPERF_INTERVAL_JSON_CAUSES, causes_chunk, collect, &got_causes);
    for (size_t i = 0, batch = 1; i < n; i += batch, batch = batch % 97 + 3) {
        if (batch > n - i)
            batch = n - i;
        rperf_interval_json_put_pair(&rows, &causes, records + i, batch);
    }
    rperf_interval_json_end(&rows);
    rperf_interval_json_end(&causes);
    assert_int_equal(got_rows.length, rows_length);
    assert_memory_equal(got_rows.bytes, want_rows, rows_length);
    assert_int_equal(got_causes.length, causes_length);
    assert_memory_equal(got_causes.bytes, want_causes, causes_length);
    free(got_rows.bytes);
    free(got_causes.bytes);
    free(want_rows);
    free(want_causes);
    rperf_interval_store_free(&store);
    free(records);
}

static void
test_lists_match_printf(void **unused)
{
    (void)unused;
    check_lists(0);
    check_lists(1);
    check_lists(100);
    check_lists(60000); /* about 2 MB of text: many chunks */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_at_every_length_edge),
        cmocka_unit_test(test_lists_match_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
