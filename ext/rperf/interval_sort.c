/*
 * interval_sort.c — stable LSD radix sort of intervals by start, then seq.
 *
 * Keys are made unsigned and small first (start minus the earliest start,
 * seq minus the smallest seq), so a run of a few seconds needs three
 * 11-bit passes over the start and one over the seq. Passes whose digit is
 * the same for every record are skipped. Short inputs go through an
 * insertion sort, where the histogram would cost more than the sort.
 */
#include "interval_sort.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)
#define SMALL_INPUT 64

static int
before(const rperf_interval_t *x, const rperf_interval_t *y)
{
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns;
    return x->thread_seq < y->thread_seq;
}

static void
insertion_sort(rperf_interval_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        rperf_interval_t v = a[i];
        size_t j = i;
        while (j > 0 && before(&v, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

/* One counting pass on the digit at `shift` of key(record) - base; returns
 * 0 and leaves `from` as it is when every record has the same digit. */
static int
radix_pass(const rperf_interval_t *from, rperf_interval_t *to, size_t n, int by_seq, uint64_t base, unsigned shift)
{
    size_t count[BUCKETS];
    memset(count, 0, sizeof(count));
    for (size_t i = 0; i < n; i++) {
        uint64_t key = by_seq ? (uint64_t)((int64_t)from[i].thread_seq - (int64_t)base)
                              : (uint64_t)from[i].start_ns - base;
        count[(key >> shift) & (BUCKETS - 1)]++;
    }
    size_t offset = 0;
    for (size_t b = 0; b < BUCKETS; b++) {
        if (count[b] == n)
            return 0;
        size_t c = count[b];
        count[b] = offset;
        offset += c;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t key = by_seq ? (uint64_t)((int64_t)from[i].thread_seq - (int64_t)base)
                              : (uint64_t)from[i].start_ns - base;
        to[count[(key >> shift) & (BUCKETS - 1)]++] = from[i];
    }
    return 1;
}

/* Sorts by one key (least significant digit first), swapping *cur and
 * *other after every pass that moved records. */
static void
radix_key(rperf_interval_t **cur, rperf_interval_t **other, size_t n, int by_seq, uint64_t base, uint64_t span)
{
    for (unsigned shift = 0; shift < 64 && (shift == 0 || (span >> shift) != 0); shift += DIGIT_BITS) {
        if (radix_pass(*cur, *other, n, by_seq, base, shift)) {
            rperf_interval_t *t = *cur;
            *cur = *other;
            *other = t;
        }
    }
}

/* The smallest and largest start and seq of a[0..n), n >= 1. */
static void
key_ranges(const rperf_interval_t *a, size_t n, int64_t *min_start, int64_t *max_start, int32_t *min_seq,
           int32_t *max_seq)
{
    *min_start = *max_start = a[0].start_ns;
    *min_seq = *max_seq = a[0].thread_seq;
    for (size_t i = 1; i < n; i++) {
        if (a[i].start_ns < *min_start)
            *min_start = a[i].start_ns;
        if (a[i].start_ns > *max_start)
            *max_start = a[i].start_ns;
        if (a[i].thread_seq < *min_seq)
            *min_seq = a[i].thread_seq;
        if (a[i].thread_seq > *max_seq)
            *max_seq = a[i].thread_seq;
    }
}

rperf_interval_t *
rperf_interval_sort(rperf_interval_t *a, rperf_interval_t *scratch, size_t n)
{
    if (n < SMALL_INPUT) {
        insertion_sort(a, n);
        return a;
    }
    int64_t min_start, max_start;
    int32_t min_seq, max_seq;
    key_ranges(a, n, &min_start, &max_start, &min_seq, &max_seq);
    rperf_interval_t *cur = a, *other = scratch;
    /* Secondary key first: the start passes are stable and keep seq order. */
    radix_key(&cur, &other, n, 1, (uint64_t)(int64_t)min_seq, (uint64_t)((int64_t)max_seq - (int64_t)min_seq));
    radix_key(&cur, &other, n, 0, (uint64_t)min_start, (uint64_t)max_start - (uint64_t)min_start);
    return cur;
}

/* Bits needed for values 0..v. */
static unsigned
bit_width(uint64_t v)
{
    return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

const uint64_t *
rperf_interval_sort_keys(const rperf_interval_t *a, size_t n, uint64_t *keys, uint64_t *scratch,
                         unsigned *index_bits)
{
    if (n == 0) {
        *index_bits = 0;
        return keys;
    }
    int64_t min_start, max_start;
    int32_t min_seq, max_seq;
    key_ranges(a, n, &min_start, &max_start, &min_seq, &max_seq);
    unsigned ibits = bit_width(n - 1), sbits = bit_width((uint64_t)((int64_t)max_seq - (int64_t)min_seq));
    unsigned tbits = bit_width((uint64_t)max_start - (uint64_t)min_start);
    if (ibits + sbits + tbits > 64 || n > UINT32_MAX)
        return NULL;
    *index_bits = ibits;
    int sorted = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t seq = (uint64_t)((int64_t)a[i].thread_seq - (int64_t)min_seq);
        uint64_t start = (uint64_t)a[i].start_ns - (uint64_t)min_start;
        /* The index as the least significant part: equal records keep
         * their input order, and it says where each record is. */
        keys[i] = (tbits ? start << (sbits + ibits) : 0) | (sbits ? seq << ibits : 0) | i;
        sorted &= i == 0 || keys[i - 1] < keys[i];
    }
    if (sorted)
        return keys;
    /* LSD passes over the (start, seq) bits only: the keys start in index
     * order and every pass is stable. One read counts every digit. */
    enum { KEY_DIGIT_BITS = 11, KEY_BUCKETS = 1 << KEY_DIGIT_BITS, MAX_PASSES = 6 };
    unsigned key_bits = sbits + tbits, passes = (key_bits + KEY_DIGIT_BITS - 1) / KEY_DIGIT_BITS;
    static_assert(64 <= MAX_PASSES * KEY_DIGIT_BITS, "six passes cover any key");
    uint32_t count[MAX_PASSES][KEY_BUCKETS];
    memset(count, 0, passes * sizeof(count[0]));
    for (size_t i = 0; i < n; i++)
        for (unsigned p = 0; p < passes; p++)
            count[p][(keys[i] >> (ibits + p * KEY_DIGIT_BITS)) & (KEY_BUCKETS - 1)]++;
    uint64_t *cur = keys, *other = scratch;
    for (unsigned p = 0; p < passes; p++) {
        unsigned shift = ibits + p * KEY_DIGIT_BITS;
        uint32_t offset = 0, *c = count[p];
        if (c[(cur[0] >> shift) & (KEY_BUCKETS - 1)] == n)
            continue; /* one digit for all: nothing moves */
        for (size_t b = 0; b < KEY_BUCKETS; b++) {
            uint32_t k = c[b];
            c[b] = offset;
            offset += k;
        }
        for (size_t i = 0; i < n; i++)
            other[c[(cur[i] >> shift) & (KEY_BUCKETS - 1)]++] = cur[i];
        uint64_t *t = cur;
        cur = other;
        other = t;
    }
    return cur;
}

/* The k-way merge keeps one cursor per run in a binary min-heap ordered by
 * (start, seq, run index): the run index breaks ties, so the merge of runs
 * that were consecutive slices of one input is that input's stable sort. */
typedef struct merge_head {
    rperf_interval_t rec;
    size_t run;
    size_t at, length; /* the record's encoded bytes in its run */
} merge_head_t;

static int
head_before(const merge_head_t *x, const merge_head_t *y)
{
    if (x->rec.start_ns != y->rec.start_ns)
        return x->rec.start_ns < y->rec.start_ns;
    if (x->rec.thread_seq != y->rec.thread_seq)
        return x->rec.thread_seq < y->rec.thread_seq;
    return x->run < y->run;
}

static void
sift_down(merge_head_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < n && head_before(&heap[l], &heap[least]))
            least = l;
        if (r < n && head_before(&heap[r], &heap[least]))
            least = r;
        if (least == i)
            return;
        merge_head_t t = heap[i];
        heap[i] = heap[least];
        heap[least] = t;
        i = least;
    }
}

/* A run read a batch at a time (interval_store.h read): decoding records
 * in a loop costs less than a call per record. */
enum { RUN_BATCH = 64 };

typedef struct run_reader {
    rperf_interval_store_cursor_t cur;
    rperf_interval_t batch[RUN_BATCH];
    uint8_t lengths[RUN_BATCH];
    size_t fill, next;
    size_t offset; /* where the encoded bytes of batch[next] start */
} run_reader_t;

/* The run's next record and where its bytes are (*at, *length). */
static int
reader_next(run_reader_t *r, rperf_interval_t *out, size_t *at, size_t *length)
{
    if (r->next == r->fill) {
        r->offset = r->cur.offset;
        r->fill = rperf_interval_store_read(&r->cur, r->batch, r->lengths, RUN_BATCH);
        r->next = 0;
        if (r->fill == 0)
            return 0;
    }
    *out = r->batch[r->next];
    *at = r->offset;
    *length = r->lengths[r->next];
    r->offset += r->lengths[r->next++];
    return 1;
}

struct rperf_interval_merge {
    const rperf_interval_store_t *runs;
    size_t nheads;
    merge_head_t *heap;
    run_reader_t *readers;
};

rperf_interval_merge_t *
rperf_interval_merge_new(const rperf_interval_store_t *runs, size_t nruns)
{
    rperf_interval_merge_t *m = malloc(sizeof(*m));
    if (!m)
        return NULL;
    m->runs = runs;
    m->nheads = 0;
    m->readers = malloc((nruns ? nruns : 1) * sizeof(*m->readers));
    m->heap = malloc((nruns ? nruns : 1) * sizeof(*m->heap));
    if (!m->readers || !m->heap) {
        rperf_interval_merge_free(m);
        return NULL;
    }
    merge_head_t *heap = m->heap;
    size_t n = 0;
    for (size_t i = 0; i < nruns; i++) {
        m->readers[i].fill = m->readers[i].next = 0;
        rperf_interval_store_cursor_init(&m->readers[i].cur, &runs[i], 0);
        if (reader_next(&m->readers[i], &heap[n].rec, &heap[n].at, &heap[n].length))
            heap[n++].run = i;
    }
    for (size_t i = n / 2; i-- > 0;)
        sift_down(heap, n, i);
    m->nheads = n;
    return m;
}

void
rperf_interval_merge_free(rperf_interval_merge_t *m)
{
    if (!m)
        return;
    free(m->readers);
    free(m->heap);
    free(m);
}

/* The smallest head moves on to its run's next record. */
static void
advance_top(rperf_interval_merge_t *m)
{
    merge_head_t *top = &m->heap[0];
    if (!reader_next(&m->readers[top->run], &top->rec, &top->at, &top->length))
        m->heap[0] = m->heap[--m->nheads];
    sift_down(m->heap, m->nheads, 0);
}

/* Whether record x of run `run` comes before head y. */
static int
record_before(const rperf_interval_t *x, size_t run, const merge_head_t *y)
{
    if (x->start_ns != y->rec.start_ns)
        return x->start_ns < y->rec.start_ns;
    if (x->thread_seq != y->rec.thread_seq)
        return x->thread_seq < y->rec.thread_seq;
    return run < y->run;
}

size_t
rperf_interval_merge_read(rperf_interval_merge_t *m, rperf_interval_t *out, size_t max)
{
    size_t n = 0;
    merge_head_t *heap = m->heap;
    while (n < max && m->nheads > 0) {
        out[n++] = heap[0].rec;
        /* The runs of a report's slices barely overlap: the top run's
         * records that come before every other head go out straight from
         * its batch, with no heap step each. */
        const merge_head_t *next = m->nheads > 1 ? &heap[1] : NULL;
        if (m->nheads > 2 && head_before(&heap[2], &heap[1]))
            next = &heap[2];
        run_reader_t *r = &m->readers[heap[0].run];
        while (n < max && r->next < r->fill && (!next || record_before(&r->batch[r->next], heap[0].run, next))) {
            r->offset += r->lengths[r->next];
            out[n++] = r->batch[r->next++];
        }
        advance_top(m);
    }
    return n;
}

int
rperf_interval_merge_runs(const rperf_interval_store_t *runs, size_t nruns, rperf_interval_store_t *out)
{
    rperf_interval_merge_t *m = rperf_interval_merge_new(runs, nruns);
    if (!m)
        return -1;
    /* Consecutive records of one run are encoded against the same record
     * before them in the output as in the run: their bytes are copied, not
     * encoded again. Runs of a report's slices barely overlap, so that is
     * nearly every record. */
    int status = 0;
    size_t last_run = SIZE_MAX;
    while (m->nheads > 0) {
        const merge_head_t *top = &m->heap[0];
        int appended = top->run == last_run
                           ? rperf_interval_store_append_encoded(out, runs[top->run].bytes + top->at, top->length,
                                                                 &top->rec)
                           : rperf_interval_store_append(out, &top->rec);
        if (appended < 0) {
            status = -1;
            break;
        }
        last_run = top->run;
        advance_top(m);
    }
    rperf_interval_merge_free(m);
    return status;
}
