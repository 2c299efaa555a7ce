/*
 * agg_table.c — open-addressing hash tables (linear probing, load <= 1/2)
 * over a stack pool and an entry array; both grow by doubling up to their
 * bounds. It does NOT interpret frame ids or weights.
 */
#include "agg_table.h"

#include <stdlib.h>
#include <string.h>

static uint32_t
fnv1a(uint32_t h, uint32_t word)
{
    for (int i = 0; i < 4; i++) {
        h ^= (word >> (8 * i)) & 0xffu;
        h *= 16777619u;
    }
    return h;
}

static uint32_t
hash_stack(const uint32_t *ids, uint32_t depth)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < depth; i++)
        h = fnv1a(h, ids[i]);
    return fnv1a(h, depth);
}

static uint32_t
hash_key(uint32_t stack_id, int thread_seq, int label_set_id)
{
    uint32_t h = fnv1a(2166136261u, stack_id);
    h = fnv1a(h, (uint32_t)thread_seq);
    return fnv1a(h, (uint32_t)label_set_id);
}

/* Grows `*array` (elements of `size` bytes) to hold `needed`, doubling. */
static int
reserve(void **array, size_t *capacity, size_t needed, size_t size)
{
    if (needed <= *capacity)
        return 0;
    size_t capacity_new = *capacity ? *capacity : 256;
    while (capacity_new < needed)
        capacity_new *= 2;
    void *grown = realloc(*array, capacity_new * size);
    if (!grown)
        return -1;
    *array = grown;
    *capacity = capacity_new;
    return 0;
}

int
rperf_agg_table_init(rperf_agg_table_t *at, uint32_t max_stacks, uint32_t max_entries, size_t max_pool_frames,
                     size_t max_raw)
{
    memset(at, 0, sizeof(*at));
    at->max_stacks = max_stacks;
    at->max_entries = max_entries;
    at->max_pool_frames = max_pool_frames;
    at->max_raw = max_raw;
    at->stack_slot_capacity = 1024;
    at->entry_slot_capacity = 1024;
    at->stack_slots = calloc(at->stack_slot_capacity, sizeof(uint32_t));
    at->entry_slots = calloc(at->entry_slot_capacity, sizeof(uint32_t));
    if (!at->stack_slots || !at->entry_slots)
        goto fail;
    return 0;
fail:
    rperf_agg_table_free(at);
    return -1;
}

void
rperf_agg_table_free(rperf_agg_table_t *at)
{
    free(at->stack_pool);
    free(at->stacks);
    free(at->stack_slots);
    free(at->entries);
    free(at->entry_slots);
    free(at->raw);
    memset(at, 0, sizeof(*at));
}

static int
rehash_stacks(rperf_agg_table_t *at)
{
    uint32_t capacity = at->stack_slot_capacity * 2;
    uint32_t *slots = calloc(capacity, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t id = 0; id < at->stack_count; id++) {
        uint32_t i = at->stacks[id].hash & (capacity - 1);
        while (slots[i])
            i = (i + 1) & (capacity - 1);
        slots[i] = id + 1;
    }
    free(at->stack_slots);
    at->stack_slots = slots;
    at->stack_slot_capacity = capacity;
    return 0;
}

uint32_t
rperf_agg_table_intern_stack(rperf_agg_table_t *at, const uint32_t *frame_ids, uint32_t depth)
{
    uint32_t hash = hash_stack(frame_ids, depth);
    uint32_t mask = at->stack_slot_capacity - 1;
    uint32_t i = hash & mask;
    for (uint32_t entry; (entry = at->stack_slots[i]) != 0; i = (i + 1) & mask) {
        const rperf_agg_stack_t *s = &at->stacks[entry - 1];
        /* depth 0 (a sample with no frame at all) never touches the pool,
         * which may not exist yet: memcmp must not see its NULL. */
        if (s->hash == hash && s->depth == depth &&
            (depth == 0 || memcmp(at->stack_pool + s->start, frame_ids, sizeof(uint32_t) * depth) == 0))
            return entry - 1;
    }
    if (at->stack_count >= at->max_stacks || at->pool_count + depth > at->max_pool_frames)
        return RPERF_STACK_ID_NONE;
    size_t stack_capacity = at->stack_capacity;
    if (reserve((void **)&at->stacks, &stack_capacity, (size_t)at->stack_count + 1, sizeof(rperf_agg_stack_t)) < 0 ||
        reserve((void **)&at->stack_pool, &at->pool_capacity, at->pool_count + depth, sizeof(uint32_t)) < 0)
        return RPERF_STACK_ID_NONE;
    at->stack_capacity = (uint32_t)stack_capacity;
    if ((uint64_t)(at->stack_count + 1) * 2 > at->stack_slot_capacity) {
        if (rehash_stacks(at) < 0)
            return RPERF_STACK_ID_NONE;
        mask = at->stack_slot_capacity - 1;
        i = hash & mask;
        while (at->stack_slots[i])
            i = (i + 1) & mask;
    }
    uint32_t id = at->stack_count++;
    at->stacks[id] = (rperf_agg_stack_t){.start = (uint32_t)at->pool_count, .depth = depth, .hash = hash};
    if (depth)
        memcpy(at->stack_pool + at->pool_count, frame_ids, sizeof(uint32_t) * depth);
    at->pool_count += depth;
    at->stack_slots[i] = id + 1;
    return id;
}

static int
rehash_entries(rperf_agg_table_t *at)
{
    uint32_t capacity = at->entry_slot_capacity * 2;
    uint32_t *slots = calloc(capacity, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t n = 0; n < at->entry_count; n++) {
        const rperf_agg_entry_t *e = &at->entries[n];
        uint32_t i = hash_key(e->stack_id, e->thread_seq, e->label_set_id) & (capacity - 1);
        while (slots[i])
            i = (i + 1) & (capacity - 1);
        slots[i] = n + 1;
    }
    free(at->entry_slots);
    at->entry_slots = slots;
    at->entry_slot_capacity = capacity;
    return 0;
}

int
rperf_agg_table_add(rperf_agg_table_t *at, uint32_t stack_id, int thread_seq, int label_set_id, int64_t weight_ns,
                    int64_t blame_ns)
{
    uint32_t hash = hash_key(stack_id, thread_seq, label_set_id);
    uint32_t mask = at->entry_slot_capacity - 1;
    uint32_t i = hash & mask;
    for (uint32_t slot; (slot = at->entry_slots[i]) != 0; i = (i + 1) & mask) {
        rperf_agg_entry_t *e = &at->entries[slot - 1];
        if (e->stack_id == stack_id && e->thread_seq == thread_seq && e->label_set_id == label_set_id) {
            e->weight_ns += weight_ns;
            e->blame_ns += blame_ns;
            return 0;
        }
    }
    if (at->entry_count >= at->max_entries)
        return -1;
    size_t entry_capacity = at->entry_capacity;
    if (reserve((void **)&at->entries, &entry_capacity, (size_t)at->entry_count + 1, sizeof(rperf_agg_entry_t)) < 0)
        return -1;
    at->entry_capacity = (uint32_t)entry_capacity;
    if ((uint64_t)(at->entry_count + 1) * 2 > at->entry_slot_capacity) {
        if (rehash_entries(at) < 0)
            return -1;
        mask = at->entry_slot_capacity - 1;
        i = hash & mask;
        while (at->entry_slots[i])
            i = (i + 1) & mask;
    }
    uint32_t n = at->entry_count++;
    at->entries[n] = (rperf_agg_entry_t){.stack_id = stack_id,
                                         .thread_seq = thread_seq,
                                         .label_set_id = label_set_id,
                                         .weight_ns = weight_ns,
                                         .blame_ns = blame_ns};
    at->entry_slots[i] = n + 1;
    return 0;
}

int
rperf_agg_table_log_raw(rperf_agg_table_t *at, uint32_t stack_id, int thread_seq, int label_set_id,
                        int64_t weight_ns)
{
    if (at->raw_count >= at->max_raw)
        return -1;
    if (reserve((void **)&at->raw, &at->raw_capacity, at->raw_count + 1, sizeof(rperf_raw_sample_t)) < 0)
        return -1;
    at->raw[at->raw_count++] = (rperf_raw_sample_t){.stack_id = stack_id,
                                                    .thread_seq = thread_seq,
                                                    .label_set_id = label_set_id,
                                                    .weight_ns = weight_ns};
    return 0;
}

void
rperf_agg_table_clear(rperf_agg_table_t *at)
{
    at->pool_count = 0;
    at->stack_count = 0;
    at->entry_count = 0;
    at->raw_count = 0;
    if (at->stack_slots)
        memset(at->stack_slots, 0, sizeof(uint32_t) * at->stack_slot_capacity);
    if (at->entry_slots)
        memset(at->entry_slots, 0, sizeof(uint32_t) * at->entry_slot_capacity);
}
