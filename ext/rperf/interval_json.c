/*
 * interval_json.c — timeline rows as JSON text (see the header).
 *
 * A number's length comes from its bit length (log10 2 ≈ 1233 / 4096)
 * and one table compare, so its digits are written back to front straight
 * into place; numbers of nine digits and more are split at 10^8 and the
 * low eight digits made in the lanes of one 64-bit word (no table, no
 * chain of divisions) and stored at once.
 */
#include "interval_json.h"

#include <string.h>

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t powers_of_ten[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/* Digits of u >= 1. */
static size_t
decimal_length(uint64_t u)
{
    unsigned guess = (unsigned)(64 - __builtin_clzll(u)) * 1233 >> 12;
    return guess + (u >= powers_of_ten[guess]);
}

static void
put_pair(char *out, unsigned pair)
{
    memcpy(out, digit_pairs + 2 * pair, 2);
}

/* u below 10^8 as exactly eight digits (leading zeros kept), computed in
 * four 16-bit lanes of one word (the halves' digit pairs, then each
 * pair's digits) and stored at once; the lanes never carry into each
 * other (each product stays below its lane's width). */
static void
put_eight(char *out, uint32_t u)
{
    uint64_t halves = (uint64_t)(u / 10000) | (uint64_t)(u % 10000) << 32;
    uint64_t high_pairs = (halves * 10486 >> 20) & (0x7Full << 32 | 0x7Full); /* each half / 100 */
    uint64_t pairs = (halves - 100 * high_pairs) << 16 | high_pairs;          /* four pairs, in order */
    uint64_t tens = (pairs * 103 >> 10) & 0x000F000F000F000Full;              /* each pair / 10 */
    uint64_t digits = tens | (pairs - 10 * tens) << 8;
    digits += 0x3030303030303030ull;
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    digits = __builtin_bswap64(digits);
#endif
    memcpy(out, &digits, 8);
}

/* u >= 1 in decimal, its last digit just before end. */
static void
put_digits(char *end, uint64_t u)
{
    while (u >= 100) {
        end -= 2;
        put_pair(end, (unsigned)(u % 100));
        u /= 100;
    }
    if (u >= 10)
        put_pair(end - 2, (unsigned)u);
    else
        end[-1] = (char)('0' + u);
}

/* Any v: the general case, out of line. */
static size_t __attribute__((noinline)) put_any(char *out, int64_t v)
{
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        out[n++] = '-';
        u = 0 - u;
    }
    if (u < 10) {
        out[n] = (char)('0' + u);
        return n + 1;
    }
    size_t len = decimal_length(u);
    if (len > 8) {
        uint64_t high = u / 100000000;
        put_eight(out + n + len - 8, (uint32_t)(u - high * 100000000));
        put_digits(out + n + len - 8, high);
    } else {
        put_digits(out + n + len, u);
    }
    return n + len;
}

/* Most numbers of a row are seqs, states, ids and causes below 100:
 * those are written inline, without the length's computation. */
static inline __attribute__((always_inline)) size_t
put_int(char *out, int64_t v)
{
    if ((uint64_t)v < 10) {
        out[0] = (char)('0' + v);
        return 1;
    }
    if ((uint64_t)v < 100) {
        put_pair(out, (unsigned)v);
        return 2;
    }
    return put_any(out, v);
}

size_t
rperf_interval_json_int(char *out, int64_t v)
{
    return put_int(out, v);
}

/* [v0,v1,...] of `count` numbers; inlined with a constant count, the loop
 * unrolls. */
static inline size_t
put_row(char *out, const int64_t *values, int count)
{
    char *p = out;
    *p++ = '[';
    for (int k = 0; k < count; k++) {
        if (k)
            *p++ = ',';
        p += put_int(p, values[k]);
    }
    *p++ = ']';
    return (size_t)(p - out);
}

/* [thread_seq,state,start_ns,end_ns,label_set_id,stack_id] */
static size_t
interval_row(char *out, const rperf_interval_t *iv)
{
    const int64_t values[6] = {iv->thread_seq, iv->state, iv->start_ns, iv->end_ns, iv->label_set_id, iv->stack_id};
    return put_row(out, values, 6);
}

/* [thread_seq,start_ns,cause,releaser_seq] */
static size_t
cause_row(char *out, const rperf_interval_t *iv)
{
    const int64_t values[4] = {iv->thread_seq, iv->start_ns, iv->cause, iv->releaser_seq};
    return put_row(out, values, 4);
}

/* A row: its separator, brackets, six numbers and five commas. */
enum { ROW_MAX = 3 + 6 * (RPERF_INTERVAL_JSON_INT_MAX + 1) };

/* Where out's next row goes, after its separator, with room for it (the
 * chunk emitted first when full); the caller sets out->used past it. */
static char *
next_row(rperf_interval_json_out_t *out)
{
    if (out->used + ROW_MAX > RPERF_INTERVAL_JSON_CHUNK) {
        out->emit(out->chunk, out->used, out->arg);
        out->used = 0;
    }
    char *row = out->chunk + out->used;
    *row = ',';
    row += !out->first;
    out->first = 0;
    return row;
}

void
rperf_interval_json_begin(rperf_interval_json_out_t *out, rperf_interval_json_rows_t rows, char *chunk,
                          rperf_interval_json_emit_fn *emit, void *arg)
{
    *out =
        (rperf_interval_json_out_t){.rows = rows, .chunk = chunk, .used = 1, .first = 1, .emit = emit, .arg = arg};
    chunk[0] = '[';
}

void
rperf_interval_json_put(rperf_interval_json_out_t *out, const rperf_interval_t *recs, size_t n)
{
    int causes = out->rows == RPERF_INTERVAL_JSON_CAUSES;
    for (size_t i = 0; i < n; i++) {
        const rperf_interval_t *iv = &recs[i];
        if (causes && !rperf_interval_json_has_cause(iv))
            continue;
        char *row = next_row(out);
        row += causes ? cause_row(row, iv) : interval_row(row, iv);
        out->used = (size_t)(row - out->chunk);
    }
}

void
rperf_interval_json_put_pair(rperf_interval_json_out_t *rows, rperf_interval_json_out_t *causes,
                             const rperf_interval_t *recs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rperf_interval_t *iv = &recs[i];
        char *row = next_row(rows);
        /* The interval's row, remembering where its seq and start are. */
        char *p = row;
        *p++ = '[';
        p += put_int(p, iv->thread_seq);
        size_t head = (size_t)(p - row) + 1; /* "[seq," */
        *p++ = ',';
        p += put_int(p, iv->state);
        *p++ = ',';
        const char *start = p;
        p += put_int(p, iv->start_ns);
        size_t start_length = (size_t)(p - start);
        *p++ = ',';
        p += put_int(p, iv->end_ns);
        *p++ = ',';
        p += put_int(p, iv->label_set_id);
        *p++ = ',';
        p += put_int(p, iv->stack_id);
        *p++ = ']';
        rows->used = (size_t)(p - rows->chunk);
        if (!rperf_interval_json_has_cause(iv))
            continue;
        /* Its cause's row takes the seq and start digits already made. */
        char *c = next_row(causes);
        memcpy(c, row, head);
        c += head;
        memcpy(c, start, start_length);
        c += start_length;
        *c++ = ',';
        c += put_int(c, iv->cause);
        *c++ = ',';
        c += put_int(c, iv->releaser_seq);
        *c++ = ']';
        causes->used = (size_t)(c - causes->chunk);
    }
}

void
rperf_interval_json_end(rperf_interval_json_out_t *out)
{
    out->chunk[out->used++] = ']';
    out->emit(out->chunk, out->used, out->arg);
    out->used = 0;
}

void
rperf_interval_json_write(const rperf_interval_store_t *store, rperf_interval_json_rows_t rows,
                          rperf_interval_json_emit_fn *emit, void *arg)
{
    enum { BATCH = 128 };
    char chunk[RPERF_INTERVAL_JSON_CHUNK];
    rperf_interval_json_out_t out;
    rperf_interval_json_begin(&out, rows, chunk, emit, arg);
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, store, 0);
    rperf_interval_t batch[BATCH];
    for (size_t got; (got = rperf_interval_store_read(&cur, batch, NULL, BATCH)) > 0;)
        rperf_interval_json_put(&out, batch, got);
    rperf_interval_json_end(&out);
}
