/*
 * ractor_table.c — the fixed Ractor table and its generation tokens.
 *
 * Slots are handed out with one atomic fetch_add and published with a
 * release store once their ring and buffer exist, so hooks of other
 * Ractors (decode, by_id) never see a half-built slot. Nothing here
 * allocates after add returned. It does NOT talk to Ruby: tokens are kept
 * in Ractor-local storage by ractor_registry.c.
 */
#include "ractor_table.h"

#include <string.h>

/* The token packs the generation above the index (index + 1, so a token is
 * never 0: 0 is what an empty Ractor-local slot reads as). */
#define TOKEN_INDEX_BITS 16

static struct {
    int open;
    int timeline;
    uint64_t max_intervals;
    uint32_t generation;
    int count;                        /* atomic: indexes handed out */
    int published[RPERF_MAX_RACTORS]; /* atomic */
    rperf_ractor_slot_t slots[RPERF_MAX_RACTORS];
} table;

void
rperf_ractor_table_close(void)
{
    for (int i = 0; i < RPERF_MAX_RACTORS; i++) {
        rperf_ractor_slot_t *r = &table.slots[i];
        rperf_holder_ring_destroy(r->ring);
        rperf_interval_buffer_free(&r->intervals);
        __atomic_store_n(&table.published[i], 0, __ATOMIC_RELAXED);
    }
    memset(table.slots, 0, sizeof(table.slots));
    __atomic_store_n(&table.count, 0, __ATOMIC_RELAXED);
    table.open = 0;
}

void
rperf_ractor_table_open(int timeline, uint64_t max_intervals)
{
    if (table.open)
        rperf_ractor_table_close();
    table.generation++;
    if (table.generation == 0)
        table.generation = 1;
    table.timeline = timeline;
    table.max_intervals = max_intervals;
    table.open = 1;
}

int
rperf_ractor_table_is_open(void)
{
    return table.open;
}

rperf_ractor_slot_t *
rperf_ractor_table_add(uintptr_t *token)
{
    if (!table.open)
        return NULL;
    int index = __atomic_fetch_add(&table.count, 1, __ATOMIC_RELAXED);
    if (index >= RPERF_MAX_RACTORS) {
        __atomic_store_n(&table.count, RPERF_MAX_RACTORS, __ATOMIC_RELAXED);
        return NULL;
    }
    rperf_ractor_slot_t *r = &table.slots[index];
    memset(r, 0, sizeof(*r));
    r->id = index + 1;
    r->ring = rperf_holder_ring_create(r->id);
    if (!r->ring)
        return NULL;
    if (table.timeline && table.max_intervals > 0 &&
        rperf_interval_buffer_init(&r->intervals, table.max_intervals) < 0) {
        /* No timeline for this Ractor: its intervals are counted as dropped. */
        memset(&r->intervals, 0, sizeof(r->intervals));
    }
    __atomic_store_n(&table.published[index], 1, __ATOMIC_RELEASE);
    *token = ((uintptr_t)table.generation << TOKEN_INDEX_BITS) | (uintptr_t)(index + 1);
    return r;
}

rperf_ractor_slot_t *
rperf_ractor_table_decode(uintptr_t token)
{
    if (!token || (uint32_t)(token >> TOKEN_INDEX_BITS) != table.generation)
        return NULL;
    return rperf_ractor_by_id((int)(token & ((1u << TOKEN_INDEX_BITS) - 1)));
}

rperf_ractor_slot_t *
rperf_ractor_by_id(int id)
{
    if (id < 1 || id > RPERF_MAX_RACTORS)
        return NULL;
    if (!__atomic_load_n(&table.published[id - 1], __ATOMIC_ACQUIRE))
        return NULL;
    return &table.slots[id - 1];
}

int
rperf_ractor_count(void)
{
    int n = __atomic_load_n(&table.count, __ATOMIC_ACQUIRE);
    return n < RPERF_MAX_RACTORS ? n : RPERF_MAX_RACTORS;
}

int
rperf_ractor_waiters(const rperf_ractor_slot_t *r)
{
    int n = __atomic_load_n(&r->waiters, __ATOMIC_RELAXED);
    return n > 0 ? n : 0;
}
