/*
 * release_stacks.c — the releasers' stacks: entries in an array grown by
 * doubling up to its bound, found through a hash index. It does NOT
 * interpret stack ids or generations.
 */
#include "release_stacks.h"
#include "grow_array.h"

#include <stdlib.h>
#include <string.h>

typedef struct rs_key {
    int waiter_seq;
    int release_index;
    uint32_t generation;
    uint32_t stack_id;
} rs_key_t;

static uint32_t
hash_key(const rs_key_t *k)
{
    uint32_t h = rperf_hash_word(RPERF_HASH_SEED,
                                 ((uint64_t)(uint32_t)k->waiter_seq << 32) | (uint32_t)k->release_index);
    return rperf_hash_word(h, ((uint64_t)k->generation << 32) | k->stack_id);
}

static int
same_key(const void *table, const void *key, uint32_t id)
{
    const rperf_release_stack_t *e = &((const rperf_release_stacks_t *)table)->entries[id];
    const rs_key_t *k = key;
    return e->waiter_seq == k->waiter_seq && e->release_index == k->release_index &&
           e->generation == k->generation && e->stack_id == k->stack_id;
}

int
rperf_release_stacks_init(rperf_release_stacks_t *t, uint32_t max_entries)
{
    memset(t, 0, sizeof(*t));
    t->max_entries = max_entries;
    rperf_hash_index_init(&t->index);
    return rperf_hash_index_reserve(&t->index, 128);
}

void
rperf_release_stacks_free(rperf_release_stacks_t *t)
{
    free(t->entries);
    rperf_hash_index_free(&t->index);
    memset(t, 0, sizeof(*t));
}

int
rperf_release_stacks_add(rperf_release_stacks_t *t, int waiter_seq, int release_index, uint32_t generation,
                         uint32_t stack_id, int64_t ns)
{
    if (!t->index.nslots)
        return -1;
    rs_key_t k = {waiter_seq, release_index, generation, stack_id};
    uint32_t h = hash_key(&k);
    size_t slot;
    long found = rperf_hash_index_upsert(&t->index, h, same_key, t, &k, &slot);
    if (found >= 0) {
        t->entries[found].ns += ns;
        t->entries[found].count++;
        return 0;
    }
    if (found < -1 || t->count >= t->max_entries ||
        rperf_grow_array((void **)&t->entries, &t->capacity, (size_t)t->count + 1, sizeof(*t->entries), 64) < 0)
        return -1;
    uint32_t n = t->count++;
    t->entries[n] = (rperf_release_stack_t){.waiter_seq = waiter_seq,
                                            .release_index = release_index,
                                            .generation = generation,
                                            .stack_id = stack_id,
                                            .ns = ns,
                                            .count = 1};
    rperf_hash_index_put(&t->index, slot, h, n);
    return 0;
}

uint64_t
rperf_release_stacks_count_from(const rperf_release_stacks_t *t, uint32_t generation)
{
    uint64_t releases = 0;
    for (uint32_t n = 0; n < t->count; n++) {
        if (t->entries[n].generation >= generation)
            releases += t->entries[n].count;
    }
    return releases;
}

void
rperf_release_stacks_clear(rperf_release_stacks_t *t)
{
    t->count = 0;
    rperf_hash_index_clear(&t->index);
}
