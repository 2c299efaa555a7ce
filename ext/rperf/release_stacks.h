/*
 * release_stacks.h — the releasers' stacks ("lock blame"): blocked time a
 * release ended, summed per (waiter, release index, report generation,
 * stack id). A release index is the waiter's release list entry (releaser,
 * both label sets, method: thread_slot.h), so a report splits each of its
 * release edges by the stacks the releaser had when it woke the waiter.
 *
 * It does NOT capture stacks, intern frames or know Ruby (the sampler
 * drains release records into it with stack ids of its aggregation table),
 * and it does NOT decide which generations a report takes (the caller
 * passes the bound).
 *
 * Contract
 * - Plain C memory; used by one thread at a time (the sampler's drain
 *   mutex). Functions may malloc.
 * - Bounded by max_entries: an add that does not fit returns -1 and stores
 *   nothing; the caller counts the drop.
 * - Stack ids are the aggregation table's: the caller empties this table
 *   whenever it clears that one.
 */
#ifndef RPERF_RELEASE_STACKS_H
#define RPERF_RELEASE_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "hash_index.h"

typedef struct rperf_release_stack {
    int waiter_seq;
    int release_index;
    uint32_t generation; /* report cuts completed before the release */
    uint32_t stack_id;
    int64_t ns;
    uint64_t count;
} rperf_release_stack_t;

typedef struct rperf_release_stacks {
    rperf_release_stack_t *entries;
    size_t capacity;
    uint32_t count, max_entries;
    rperf_hash_index_t index; /* key -> entry */
} rperf_release_stacks_t;

/* Returns 0, or -1 (nothing allocated). */
int rperf_release_stacks_init(rperf_release_stacks_t *t, uint32_t max_entries);
void rperf_release_stacks_free(rperf_release_stacks_t *t);
/* Adds one release of `ns` to its entry; 0, or -1 when the table is full. */
int rperf_release_stacks_add(rperf_release_stacks_t *t, int waiter_seq, int release_index, uint32_t generation,
                             uint32_t stack_id, int64_t ns);
/* Releases recorded in a generation >= `generation` (after a report's cut). */
uint64_t rperf_release_stacks_count_from(const rperf_release_stacks_t *t, uint32_t generation);
/* Forgets every entry, keeping allocations. */
void rperf_release_stacks_clear(rperf_release_stacks_t *t);

#endif
