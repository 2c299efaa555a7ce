/* test_interval_buffer.c — the encoded timeline ring (ext/rperf/
 * interval_buffer.c) and its codec (interval_codec.c), plain C built here
 * without Ruby: every field of every record comes back exactly (extreme
 * and random values, wrap-around of the ring), a full ring drops and
 * counts, reading without consuming leaves the ring as it was, and the
 * decoder refuses truncated and malformed bytes; the encoded list
 * (interval_store.c) reads back from any index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interval_buffer.h"
#include "interval_codec.h"
#include "interval_store.h"
#include "rperf_limits.h"
#include "xorshift.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
next_random(void)
{
    return xorshift_next(&rng);
}

static void
assert_same(const rperf_interval_t *a, const rperf_interval_t *b)
{
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->thread_seq, b->thread_seq);
    assert_int_equal(a->label_set_id, b->label_set_id);
    assert_int_equal(a->stack_id, b->stack_id);
    assert_int_equal(a->releaser_seq, b->releaser_seq);
    assert_int_equal(a->state, b->state);
    assert_int_equal(a->cause, b->cause);
}

/* Records like a busy run's: ends a few microseconds apart, a few threads,
 * mostly no stack, now and then a releaser and cause; one in `wild` is
 * drawn from the whole range of every field instead. */
static rperf_interval_t
make_record(int64_t *clock, unsigned wild)
{
    rperf_interval_t r;
    memset(&r, 0, sizeof(r));
    if (wild && next_random() % wild == 0) {
        r.start_ns = (int64_t)next_random();
        r.end_ns = (int64_t)next_random();
        r.thread_seq = (int32_t)next_random();
        r.label_set_id = (int32_t)next_random();
        r.stack_id = (int32_t)next_random();
        r.releaser_seq = (int32_t)next_random();
        r.state = (uint8_t)next_random();
        r.cause = (uint8_t)next_random();
        return r;
    }
    *clock += (int64_t)(next_random() % 20000);
    r.end_ns = *clock;
    r.start_ns = *clock - (int64_t)(next_random() % 50000);
    r.thread_seq = 1 + (int32_t)(next_random() % 8);
    r.label_set_id = (int32_t)(next_random() % 3);
    r.stack_id = next_random() % 4 ? -1 : (int32_t)(next_random() % 1000);
    r.state = (uint8_t)(next_random() % 5);
    if (r.state == 2 && next_random() % 2) {
        r.releaser_seq = 1 + (int32_t)(next_random() % 8);
        r.cause = (uint8_t)(next_random() % 6);
    }
    return r;
}

static void
test_codec_round_trips_every_field(void **unused)
{
    (void)unused;
    rperf_interval_codec_state_t enc, dec;
    rperf_interval_codec_reset(&enc);
    rperf_interval_codec_reset(&dec);
    const rperf_interval_t extremes[] = {
        {INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -1, INT32_MIN, 255, 255},
        {INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MAX, 7, 1},
        {0, 0, 0, 0, 0, 0, 0, 0},
        {-5, -3, 1, 0, -1, 0, 6, 0},
    };
    uint8_t bytes[RPERF_INTERVAL_CODEC_MAX_BYTES];
    for (size_t i = 0; i < sizeof(extremes) / sizeof(extremes[0]); i++) {
        size_t len = rperf_interval_encode(&enc, &extremes[i], bytes);
        assert_true(len >= 3 && len <= RPERF_INTERVAL_CODEC_MAX_BYTES);
        rperf_interval_t back;
        assert_int_equal(rperf_interval_decode(&dec, bytes, len, &back), len);
        assert_same(&back, &extremes[i]);
    }
    int64_t clock = 1000000000;
    size_t total = 0, n = 100000;
    for (size_t i = 0; i < n; i++) {
        rperf_interval_t r = make_record(&clock, 1000);
        size_t len = rperf_interval_encode(&enc, &r, bytes);
        total += len;
        rperf_interval_t back;
        assert_int_equal(rperf_interval_decode(&dec, bytes, len, &back), len);
        assert_same(&back, &r);
    }
    /* The point of the codec: under RPERF_INTERVAL_BYTES on average. */
    print_message("%.2f bytes per record\n", (double)total / (double)n);
    assert_true(total < n * RPERF_INTERVAL_BYTES);
}

/* Every varint length in every field (deltas of +-2^k and +-2^k - 1 for
 * each k, so zigzagged values of 1 to 10 bytes, 1 to 5 for the 32-bit
 * fields), encoded into a buffer with a guard after
 * RPERF_INTERVAL_CODEC_MAX_BYTES: every record comes back exactly by both
 * decoding paths, and the encoder writes nothing past its bound. */
static void
test_codec_varints_of_every_length_stay_within_bounds(void **unused)
{
    (void)unused;
    enum { GUARD = 32, GUARD_BYTE = 0xa5 };
    uint8_t bytes[RPERF_INTERVAL_CODEC_MAX_BYTES + GUARD];
    rperf_interval_codec_state_t enc, fast, exact;
    rperf_interval_codec_reset(&enc);
    rperf_interval_codec_reset(&fast);
    rperf_interval_codec_reset(&exact);
    size_t lengths_seen[RPERF_INTERVAL_CODEC_MAX_BYTES + 1] = {0};
    rperf_interval_t prev = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 64; k++) {
        for (int variant = 0; variant < 4; variant++) {
            uint64_t d = (1ull << k) - (variant & 1);
            uint32_t d32 = (1u << (k % 32)) - (uint32_t)(variant & 1);
            if (variant & 2) {
                d = 0 - d;
                d32 = 0 - d32;
            }
            rperf_interval_t r;
            r.end_ns = (int64_t)((uint64_t)prev.end_ns + d);
            r.start_ns = (int64_t)((uint64_t)r.end_ns - d);
            r.thread_seq = (int32_t)((uint32_t)prev.thread_seq + d32);
            r.label_set_id = (int32_t)((uint32_t)prev.label_set_id - d32);
            r.stack_id = (int32_t)((uint32_t)prev.stack_id + d32);
            r.releaser_seq = (int32_t)d32;
            r.state = (uint8_t)(k + variant);
            r.cause = (uint8_t)d;
            memset(bytes, GUARD_BYTE, sizeof(bytes));
            size_t len = rperf_interval_encode(&enc, &r, bytes);
            assert_true(len >= 3 && len <= RPERF_INTERVAL_CODEC_MAX_BYTES);
            lengths_seen[len]++;
            for (size_t i = RPERF_INTERVAL_CODEC_MAX_BYTES; i < sizeof(bytes); i++)
                assert_int_equal(bytes[i], GUARD_BYTE);
            rperf_interval_t a, b;
            assert_int_equal(rperf_interval_decode(&fast, bytes, sizeof(bytes), &a), len);
            assert_int_equal(rperf_interval_decode(&exact, bytes, len, &b), len);
            assert_same(&a, &r);
            assert_same(&b, &r);
            prev = r;
        }
    }
    /* The largest record (both times 10 bytes, every field present) was
     * among them. */
    assert_true(lengths_seen[RPERF_INTERVAL_CODEC_MAX_BYTES] > 0);
}

static void
test_codec_refuses_truncated_and_malformed_bytes(void **unused)
{
    (void)unused;
    rperf_interval_codec_state_t enc, dec;
    rperf_interval_codec_reset(&enc);
    rperf_interval_t r = {123456789, 987654321, 70000, 3, 4000, 9, 2, 3};
    uint8_t bytes[RPERF_INTERVAL_CODEC_MAX_BYTES];
    size_t len = rperf_interval_encode(&enc, &r, bytes);
    rperf_interval_t back;
    for (size_t cut = 0; cut < len; cut++) {
        rperf_interval_codec_reset(&dec);
        assert_int_equal(rperf_interval_decode(&dec, bytes, cut, &back), 0);
        assert_int_equal(dec.end_ns, 0); /* state untouched */
    }
    uint8_t bad_header[] = {0x80, 0, 0};
    rperf_interval_codec_reset(&dec);
    assert_int_equal(rperf_interval_decode(&dec, bad_header, sizeof(bad_header), &back), 0);
    uint8_t endless_varint[RPERF_INTERVAL_CODEC_MAX_BYTES];
    memset(endless_varint, 0xff, sizeof(endless_varint));
    endless_varint[0] = 0;
    assert_int_equal(rperf_interval_decode(&dec, endless_varint, sizeof(endless_varint), &back), 0);
}

/* A stream decoded with room to spare (the word-at-a-time path) gives
 * every record back, and the same as each record decoded with exactly its
 * own bytes (the byte-at-a-time path). Wild records bring the state
 * escape, 5-byte and 10-byte varints and cause bytes with the top bit set. */
static void
test_codec_fast_path_matches_byte_path(void **unused)
{
    (void)unused;
    enum { N = 50000 };
    rperf_interval_t *records = calloc(N, sizeof(*records));
    uint8_t *bytes = calloc(N * RPERF_INTERVAL_CODEC_MAX_BYTES + RPERF_INTERVAL_CODEC_FAST_AVAIL, 1);
    size_t *ends = calloc(N, sizeof(*ends));
    assert_non_null(records);
    assert_non_null(bytes);
    assert_non_null(ends);
    rperf_interval_codec_state_t enc;
    rperf_interval_codec_reset(&enc);
    int64_t clock = 1000;
    size_t used = 0;
    for (size_t i = 0; i < N; i++) {
        records[i] = make_record(&clock, 20);
        if (i % 7 == 0)
            records[i].cause = (uint8_t)(0x80 | records[i].cause); /* a cause byte that looks like a varint's */
        used += rperf_interval_encode(&enc, &records[i], bytes + used);
        ends[i] = used;
    }
    rperf_interval_codec_state_t fast, exact;
    rperf_interval_codec_reset(&fast);
    rperf_interval_codec_reset(&exact);
    size_t at = 0;
    for (size_t i = 0; i < N; i++) {
        rperf_interval_t a, b;
        size_t len = ends[i] - at;
        assert_int_equal(rperf_interval_decode(&fast, bytes + at, used + RPERF_INTERVAL_CODEC_FAST_AVAIL - at, &a),
                         len);
        assert_int_equal(rperf_interval_decode(&exact, bytes + at, len, &b), len);
        assert_same(&a, &records[i]);
        assert_same(&b, &records[i]);
        at = ends[i];
    }
    free(records);
    free(bytes);
    free(ends);
}

/* decode_many reads what decode would, record after record, and stops at
 * the first record decode refuses, with the bytes before it counted. */
static void
test_codec_decode_many_stops_at_bad_bytes(void **unused)
{
    (void)unused;
    enum { N = 3000, BAD = 2000 };
    rperf_interval_t records[N], back[N];
    uint8_t bytes[N * RPERF_INTERVAL_CODEC_MAX_BYTES], lengths[N];
    size_t ends[N], used = 0;
    rperf_interval_codec_state_t enc;
    rperf_interval_codec_reset(&enc);
    int64_t clock = 5;
    for (size_t i = 0; i < N; i++) {
        records[i] = make_record(&clock, 50);
        used += rperf_interval_encode(&enc, &records[i], bytes + used);
        ends[i] = used;
    }
    rperf_interval_codec_state_t dec;
    rperf_interval_codec_reset(&dec);
    size_t took;
    assert_int_equal(rperf_interval_decode_many(&dec, bytes, used, back, lengths, N, &took), N);
    assert_int_equal(took, used);
    for (size_t i = 0; i < N; i++) {
        assert_same(&back[i], &records[i]);
        assert_int_equal(lengths[i], ends[i] - (i ? ends[i - 1] : 0));
    }
    assert_memory_equal(&dec, &enc, sizeof(dec));
    /* At most max records, and the state where they end. */
    rperf_interval_codec_reset(&dec);
    assert_int_equal(rperf_interval_decode_many(&dec, bytes, used, back, NULL, 10, &took), 10);
    assert_int_equal(took, ends[9]);
    /* A header with an unknown bit: everything before it, nothing after. */
    bytes[ends[BAD - 1]] |= 0x80;
    rperf_interval_codec_reset(&dec);
    assert_int_equal(rperf_interval_decode_many(&dec, bytes, used, back, NULL, N, &took), BAD);
    assert_int_equal(took, ends[BAD - 1]);
    assert_same(&back[BAD - 1], &records[BAD - 1]);
}

/* Any bytes at all: with room to spare and with only a record's worth the
 * decoder agrees (both refuse, or both read the same record of the same
 * length), whichever path each takes. */
static void
test_codec_paths_agree_on_any_bytes(void **unused)
{
    (void)unused;
    enum { WIDE = 64, NARROW = RPERF_INTERVAL_CODEC_FAST_AVAIL - 1 };
    size_t accepted = 0;
    for (int round = 0; round < 200000; round++) {
        uint8_t bytes[WIDE];
        for (size_t i = 0; i < WIDE; i++) {
            /* Mostly short varints, now and then a continuation run. */
            uint64_t r = next_random();
            bytes[i] = (uint8_t)(r % 3 ? r & 0x7f : r);
        }
        bytes[0] &= next_random() % 8 ? 0x7f : 0xff;
        rperf_interval_codec_state_t s1 = {(int64_t)next_random(), (int32_t)next_random(), 3, -1};
        rperf_interval_codec_state_t s2 = s1;
        rperf_interval_t a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        size_t wide = rperf_interval_decode(&s1, bytes, WIDE, &a);
        size_t narrow = rperf_interval_decode(&s2, bytes, NARROW, &b);
        if (narrow) {
            assert_int_equal(wide, narrow);
        } else {
            assert_true(wide == 0 || wide > NARROW);
            continue;
        }
        accepted++;
        assert_same(&a, &b);
        assert_memory_equal(&s1, &s2, sizeof(s1));
    }
    /* The inputs must exercise the accepting paths, not only refusals. */
    assert_true(accepted > 10000);
}

/* Pushes n records through a ring of max_records, draining every `batch`
 * records (0: never), and checks every record read back. */
static void
check_ring(uint64_t max_records, size_t n, size_t batch, unsigned wild)
{
    rperf_interval_buffer_t buf;
    assert_int_equal(rperf_interval_buffer_init(&buf, max_records), 0);
    rperf_interval_t *pushed = calloc(n, sizeof(*pushed));
    rperf_interval_t *read = calloc(n + 1, sizeof(*read));
    assert_non_null(pushed);
    assert_non_null(read);
    int64_t clock = 42;
    size_t accepted = 0, got = 0;
    uint64_t dropped = 0;
    for (size_t i = 0; i < n; i++) {
        rperf_interval_t r = make_record(&clock, wild);
        if (rperf_interval_buffer_push(&buf, &r) == 0)
            pushed[accepted++] = r;
        else
            dropped++;
        if (batch && (i + 1) % batch == 0) {
            size_t held = rperf_interval_buffer_count(&buf);
            /* A peek first: it must not consume. */
            assert_int_equal(rperf_interval_buffer_copy(&buf, read + got, n + 1 - got, 0), held);
            assert_int_equal(rperf_interval_buffer_count(&buf), held);
            assert_int_equal(rperf_interval_buffer_copy(&buf, read + got, n + 1 - got, 1), held);
            got += held;
            assert_int_equal(rperf_interval_buffer_count(&buf), 0);
        }
    }
    got += rperf_interval_buffer_copy(&buf, read + got, n + 1 - got, 1);
    assert_int_equal(got, accepted);
    assert_int_equal(accepted + dropped, n);
    assert_int_equal(rperf_interval_buffer_take_dropped(&buf, 1), dropped);
    assert_int_equal(rperf_interval_buffer_take_dropped(&buf, 0), 0);
    for (size_t i = 0; i < got; i++)
        assert_same(&read[i], &pushed[i]);
    rperf_interval_buffer_free(&buf);
    free(pushed);
    free(read);
}

static void
test_ring_keeps_every_record_across_wraps(void **unused)
{
    (void)unused;
    /* Drained often: many wraps of a small ring, nothing dropped. */
    check_ring(64, 20000, 50, 100);
    /* A large ring drained in big batches gives pages back on the way. */
    check_ring(200000, 300000, 100000, 0);
}

static void
test_full_ring_drops_and_counts(void **unused)
{
    (void)unused;
    rperf_interval_buffer_t buf;
    assert_int_equal(rperf_interval_buffer_init(&buf, 4), 0);
    int64_t clock = 0;
    for (int i = 0; i < 10; i++) {
        rperf_interval_t r = make_record(&clock, 0);
        assert_int_equal(rperf_interval_buffer_push(&buf, &r), i < 4 ? 0 : -1);
    }
    assert_int_equal(rperf_interval_buffer_count(&buf), 4);
    assert_int_equal(rperf_interval_buffer_take_dropped(&buf, 0), 6);
    /* Records far apart in every field fill the bytes before the count. */
    check_ring(1000, 5000, 0, 1);
    rperf_interval_buffer_free(&buf);
    /* No ring at all (max_intervals 0): every push is counted. */
    assert_int_equal(rperf_interval_buffer_init(&buf, 0), 0);
    rperf_interval_t r = make_record(&clock, 0);
    assert_int_equal(rperf_interval_buffer_push(&buf, &r), -1);
    assert_int_equal(rperf_interval_buffer_take_dropped(&buf, 0), 1);
    assert_int_equal(rperf_interval_buffer_bytes(4), 4 * RPERF_INTERVAL_BYTES + RPERF_INTERVAL_CODEC_MAX_BYTES);
}

/* The encoded list: appended records read back in order from any index
 * (key frames), at any index, and past the end as nothing; shrinking
 * keeps them, and appending after a shrink works. */
static void
test_store_reads_back_from_any_index(void **unused)
{
    (void)unused;
    enum { N = 5 * RPERF_INTERVAL_STORE_STRIDE + 7 };
    rperf_interval_t records[N];
    int64_t clock = 5;
    rperf_interval_store_t store;
    rperf_interval_store_init(&store);
    rperf_interval_t got;
    assert_int_equal(rperf_interval_store_get(&store, 0, &got), -1);
    for (size_t i = 0; i < N; i++) {
        records[i] = make_record(&clock, 10);
        if (i == N / 2)
            rperf_interval_store_shrink(&store);
        assert_int_equal(rperf_interval_store_append(&store, &records[i]), 0);
    }
    rperf_interval_store_shrink(&store);
    assert_int_equal(store.count, N);
    assert_true(rperf_interval_store_bytes(&store) < N * sizeof(rperf_interval_t));
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(rperf_interval_store_get(&store, i, &got), 0);
        assert_same(&got, &records[i]);
    }
    assert_int_equal(rperf_interval_store_get(&store, N, &got), -1);
    const size_t starts[] = {0, 1, RPERF_INTERVAL_STORE_STRIDE - 1, RPERF_INTERVAL_STORE_STRIDE, N - 1, N, N + 5};
    for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
        rperf_interval_store_cursor_t cur;
        rperf_interval_store_cursor_init(&cur, &store, starts[s]);
        size_t i = starts[s];
        while (rperf_interval_store_next(&cur, &got))
            assert_same(&got, &records[i++]);
        assert_int_equal(i, starts[s] < N ? N : starts[s]);
    }
    rperf_interval_store_free(&store);
    assert_int_equal(store.count, 0);
}

/* A ring read a slice at a time through a cursor, consumed after each
 * slice, gives every record once and leaves the rest for the next reader. */
static void
test_ring_cursor_reads_in_slices(void **unused)
{
    (void)unused;
    rperf_interval_buffer_t buf;
    assert_int_equal(rperf_interval_buffer_init(&buf, 100000), 0);
    enum { N = 90000, SLICE = 7000 };
    rperf_interval_t *pushed = calloc(N + 10, sizeof(*pushed));
    rperf_interval_t *slice = calloc(SLICE, sizeof(*slice));
    assert_non_null(pushed);
    assert_non_null(slice);
    int64_t clock = 0;
    for (size_t i = 0; i < N; i++) {
        pushed[i] = make_record(&clock, 50);
        assert_int_equal(rperf_interval_buffer_push(&buf, &pushed[i]), 0);
    }
    rperf_interval_buffer_cursor_t cur;
    rperf_interval_buffer_begin(&buf, &cur);
    /* Pushed after begin: not this reader's. */
    for (size_t i = N; i < N + 10; i++) {
        pushed[i] = make_record(&clock, 0);
        assert_int_equal(rperf_interval_buffer_push(&buf, &pushed[i]), 0);
    }
    size_t seen = 0, got;
    while ((got = rperf_interval_buffer_read(&buf, &cur, slice, SLICE)) > 0) {
        for (size_t i = 0; i < got; i++)
            assert_same(&slice[i], &pushed[seen + i]);
        seen += got;
        rperf_interval_buffer_consume(&buf, &cur);
        assert_int_equal(rperf_interval_buffer_count(&buf), N + 10 - seen);
    }
    assert_int_equal(seen, N);
    assert_int_equal(rperf_interval_buffer_copy(&buf, slice, SLICE, 1), 10);
    for (size_t i = 0; i < 10; i++)
        assert_same(&slice[i], &pushed[N + i]);
    rperf_interval_buffer_free(&buf);
    free(pushed);
    free(slice);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_round_trips_every_field),
        cmocka_unit_test(test_codec_varints_of_every_length_stay_within_bounds),
        cmocka_unit_test(test_codec_refuses_truncated_and_malformed_bytes),
        cmocka_unit_test(test_codec_fast_path_matches_byte_path),
        cmocka_unit_test(test_codec_paths_agree_on_any_bytes),
        cmocka_unit_test(test_codec_decode_many_stops_at_bad_bytes),
        cmocka_unit_test(test_ring_keeps_every_record_across_wraps),
        cmocka_unit_test(test_full_ring_drops_and_counts),
        cmocka_unit_test(test_store_reads_back_from_any_index),
        cmocka_unit_test(test_ring_cursor_reads_in_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
