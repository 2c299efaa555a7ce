/*
 * agg_table.c — the stack table and the weight table: entries in arrays
 * grown by doubling up to their bounds, found through hash indexes. It
 * does NOT interpret frame ids or weights.
 */
#include "agg_table.h"
#include "grow_array.h"

#include <stdlib.h>
#include <string.h>

typedef struct stack_key {
    const uint32_t *ids;
    uint32_t depth;
} stack_key_t;

typedef struct entry_key {
    uint32_t stack_id;
    int thread_seq;
    int label_set_id;
} entry_key_t;

static uint32_t
hash_stack(const uint32_t *ids, uint32_t depth)
{
    uint32_t h = RPERF_HASH_SEED;
    uint32_t i = 0;
    for (; i + 1 < depth; i += 2)
        h = rperf_hash_word(h, ((uint64_t)ids[i] << 32) | ids[i + 1]);
    if (i < depth)
        h = rperf_hash_word(h, ids[i]);
    return rperf_hash_word(h, depth);
}

static uint32_t
hash_entry(const entry_key_t *k)
{
    uint32_t h = rperf_hash_word(RPERF_HASH_SEED, ((uint64_t)k->stack_id << 32) | (uint32_t)k->thread_seq);
    return rperf_hash_word(h, (uint32_t)k->label_set_id);
}

static int
same_stack(const void *table, const void *key, uint32_t id)
{
    const rperf_agg_table_t *at = table;
    const stack_key_t *k = key;
    const rperf_agg_stack_t *s = &at->stacks[id];
    /* depth 0 (a sample with no frame at all) never touches the pool,
     * which may not exist yet: memcmp must not see its NULL. */
    return s->depth == k->depth &&
           (k->depth == 0 || memcmp(at->stack_pool + s->start, k->ids, sizeof(uint32_t) * k->depth) == 0);
}

static int
same_entry(const void *table, const void *key, uint32_t id)
{
    const rperf_agg_entry_t *e = &((const rperf_agg_table_t *)table)->entries[id];
    const entry_key_t *k = key;
    return e->stack_id == k->stack_id && e->thread_seq == k->thread_seq && e->label_set_id == k->label_set_id;
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
    if (rperf_hash_index_reserve(&at->stack_index, 512) < 0 || rperf_hash_index_reserve(&at->entry_index, 512) < 0) {
        rperf_agg_table_free(at);
        return -1;
    }
    return 0;
}

void
rperf_agg_table_free(rperf_agg_table_t *at)
{
    free(at->stack_pool);
    free(at->stacks);
    rperf_hash_index_free(&at->stack_index);
    free(at->entries);
    rperf_hash_index_free(&at->entry_index);
    free(at->raw);
    memset(at, 0, sizeof(*at));
}

uint32_t
rperf_agg_table_intern_stack(rperf_agg_table_t *at, const uint32_t *frame_ids, uint32_t depth)
{
    stack_key_t k = {frame_ids, depth};
    uint32_t h = hash_stack(frame_ids, depth);
    size_t slot;
    long found = rperf_hash_index_upsert(&at->stack_index, h, same_stack, at, &k, &slot);
    if (found >= 0)
        return (uint32_t)found;
    if (found < -1 || at->stack_count >= at->max_stacks || at->pool_count + depth > at->max_pool_frames)
        return RPERF_STACK_ID_NONE;
    if (rperf_grow_array((void **)&at->stacks, &at->stack_capacity, (size_t)at->stack_count + 1,
                         sizeof(rperf_agg_stack_t), 64) < 0 ||
        rperf_grow_array((void **)&at->stack_pool, &at->pool_capacity, at->pool_count + depth, sizeof(uint32_t),
                         64) < 0)
        return RPERF_STACK_ID_NONE;
    uint32_t id = at->stack_count++;
    at->stacks[id] = (rperf_agg_stack_t){.start = (uint32_t)at->pool_count, .depth = depth};
    if (depth)
        memcpy(at->stack_pool + at->pool_count, frame_ids, sizeof(uint32_t) * depth);
    at->pool_count += depth;
    rperf_hash_index_put(&at->stack_index, slot, h, id);
    return id;
}

int
rperf_agg_table_add(rperf_agg_table_t *at, uint32_t stack_id, int thread_seq, int label_set_id, int64_t weight_ns,
                    int64_t blame_ns)
{
    entry_key_t k = {stack_id, thread_seq, label_set_id};
    uint32_t h = hash_entry(&k);
    size_t slot;
    long found = rperf_hash_index_upsert(&at->entry_index, h, same_entry, at, &k, &slot);
    if (found >= 0) {
        at->entries[found].weight_ns += weight_ns;
        at->entries[found].blame_ns += blame_ns;
        return 0;
    }
    if (found < -1 || at->entry_count >= at->max_entries ||
        rperf_grow_array((void **)&at->entries, &at->entry_capacity, (size_t)at->entry_count + 1,
                         sizeof(rperf_agg_entry_t), 64) < 0)
        return -1;
    uint32_t n = at->entry_count++;
    at->entries[n] = (rperf_agg_entry_t){.stack_id = stack_id,
                                         .thread_seq = thread_seq,
                                         .label_set_id = label_set_id,
                                         .weight_ns = weight_ns,
                                         .blame_ns = blame_ns};
    rperf_hash_index_put(&at->entry_index, slot, h, n);
    return 0;
}

int
rperf_agg_table_log_raw(rperf_agg_table_t *at, uint32_t stack_id, int thread_seq, int label_set_id,
                        int64_t weight_ns)
{
    if (at->raw_count >= at->max_raw || rperf_grow_array((void **)&at->raw, &at->raw_capacity, at->raw_count + 1,
                                                         sizeof(rperf_raw_sample_t), 64) < 0)
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
    rperf_hash_index_clear(&at->stack_index);
    rperf_hash_index_clear(&at->entry_index);
}
