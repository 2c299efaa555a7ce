/*
 * agg_table.h — the sampler's aggregation: a stack table (frame-id sequences,
 * leaf first, interned to dense stack ids) and a weight table keyed by
 * (stack_id, thread_seq, label_set_id) holding summed weight and blame.
 * Optionally a raw log keeps every sample unaggregated (aggregate: false).
 *
 * It does NOT know frames' VALUEs (frame_table.h) or Ruby: everything is
 * plain C memory, so it can be filled by the worker thread without the GVL.
 *
 * Contract
 * - Used by one thread at a time (the sampler's worker mutex serialises the
 *   drainer and the report builder). Functions may malloc.
 * - Bounded: max_stacks, max_entries, max_pool_frames and max_raw limit
 *   memory. A call that would exceed a bound returns RPERF_STACK_ID_NONE or
 *   -1 and stores nothing; the caller counts the drop.
 * - Stack ids are valid until rperf_agg_table_clear().
 */
#ifndef RPERF_AGG_TABLE_H
#define RPERF_AGG_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hash_index.h"

#define RPERF_STACK_ID_NONE UINT32_MAX

typedef struct rperf_agg_entry {
    uint32_t stack_id;
    int thread_seq;
    int label_set_id;
    int64_t weight_ns;
    int64_t blame_ns;
} rperf_agg_entry_t;

typedef struct rperf_agg_stack {
    uint32_t start; /* into stack_pool */
    uint32_t depth;
} rperf_agg_stack_t;

typedef struct rperf_raw_sample {
    uint32_t stack_id;
    int thread_seq;
    int label_set_id;
    int64_t weight_ns;
} rperf_raw_sample_t;

typedef struct rperf_agg_table {
    uint32_t *stack_pool;
    size_t pool_count, pool_capacity, max_pool_frames;
    rperf_agg_stack_t *stacks;
    size_t stack_capacity;
    uint32_t stack_count, max_stacks;
    rperf_hash_index_t stack_index; /* frame ids -> stack id */
    rperf_agg_entry_t *entries;
    size_t entry_capacity;
    uint32_t entry_count, max_entries;
    rperf_hash_index_t entry_index; /* (stack, thread, label set) -> entry */
    rperf_raw_sample_t *raw;
    size_t raw_count, raw_capacity, max_raw;
} rperf_agg_table_t;

/* Returns 0, or -1 (nothing allocated). max_raw 0 disables the raw log. */
int rperf_agg_table_init(rperf_agg_table_t *at, uint32_t max_stacks, uint32_t max_entries, size_t max_pool_frames,
                         size_t max_raw);
void rperf_agg_table_free(rperf_agg_table_t *at);

uint32_t rperf_agg_table_intern_stack(rperf_agg_table_t *at, const uint32_t *frame_ids, uint32_t depth);
/* Adds weight/blame to the (stack, thread, label set) entry; 0 or -1. */
int rperf_agg_table_add(rperf_agg_table_t *at, uint32_t stack_id, int thread_seq, int label_set_id,
                        int64_t weight_ns, int64_t blame_ns);
/* Appends to the raw log; 0 or -1. */
int rperf_agg_table_log_raw(rperf_agg_table_t *at, uint32_t stack_id, int thread_seq, int label_set_id,
                            int64_t weight_ns);

static inline const uint32_t *
rperf_agg_table_stack_frames(const rperf_agg_table_t *at, uint32_t stack_id, uint32_t *depth)
{
    *depth = at->stacks[stack_id].depth;
    return at->stack_pool + at->stacks[stack_id].start;
}

/* Forgets stacks, entries and the raw log, keeping allocations. */
void rperf_agg_table_clear(rperf_agg_table_t *at);

#endif
