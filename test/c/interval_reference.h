/*
 * interval_reference.h — the reference the extension's timeline tests
 * check the sort and the runs against: random records (deterministic, from
 * xorshift.h) and the order they must come out in. Not for anything else.
 *
 * Contract: header only. fill_random: n records with starts in
 * [start_base, start_base + start_span) and seqs below `seqs`, every other
 * field random too, label_set_id holding the input position. reference_cmp
 * (for qsort): start, then seq, then input position, which is what a stable
 * (start_ns, thread_seq) sort gives. fields_equal: every field the same
 * (not the padding).
 */
#ifndef RPERF_TEST_INTERVAL_REFERENCE_H
#define RPERF_TEST_INTERVAL_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "interval_codec.h"
#include "xorshift.h"

static inline int
interval_reference_cmp(const void *a, const void *b)
{
    const rperf_interval_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->thread_seq != y->thread_seq)
        return x->thread_seq < y->thread_seq ? -1 : 1;
    return (x->label_set_id > y->label_set_id) - (x->label_set_id < y->label_set_id);
}

static inline void
interval_fill_random(rperf_interval_t *input, size_t n, int64_t start_base, uint64_t start_span, uint32_t seqs,
                     uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        input[i].start_ns = start_base + (int64_t)(start_span ? xorshift_next(rng) % start_span : 0);
        input[i].end_ns = input[i].start_ns + 1 + (int64_t)(xorshift_next(rng) % 1000);
        input[i].thread_seq = (int32_t)(xorshift_next(rng) % seqs);
        input[i].label_set_id = (int32_t)i;
        input[i].stack_id = (int32_t)(xorshift_next(rng) % 7) - 1;
        input[i].releaser_seq = (int32_t)(xorshift_next(rng) % 3);
        input[i].state = (uint8_t)(i % 5);
        input[i].cause = (uint8_t)(xorshift_next(rng) % 4);
    }
}

static inline int
interval_fields_equal(const rperf_interval_t *x, const rperf_interval_t *y)
{
    return x->start_ns == y->start_ns && x->end_ns == y->end_ns && x->thread_seq == y->thread_seq &&
           x->label_set_id == y->label_set_id && x->stack_id == y->stack_id && x->releaser_seq == y->releaser_seq &&
           x->state == y->state && x->cause == y->cause;
}

#endif
