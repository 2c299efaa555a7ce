/*
 * release_stacks.c — open-addressing table (linear probing, load <= 1/2)
 * of the releasers' stacks, growing by doubling up to its bound. It does
 * NOT interpret stack ids or generations.
 */
#include "release_stacks.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_SLOTS 256u

static uint32_t
mix(uint32_t h, uint32_t word)
{
    h ^= word;
    h *= 0x9e3779b1u;
    return h ^ (h >> 15);
}

static uint32_t
hash_key(int waiter_seq, int release_index, uint32_t generation, uint32_t stack_id)
{
    uint32_t h = mix(0x811c9dc5u, (uint32_t)waiter_seq);
    h = mix(h, (uint32_t)release_index);
    h = mix(h, generation);
    return mix(h, stack_id);
}

int
rperf_release_stacks_init(rperf_release_stacks_t *t, uint32_t max_entries)
{
    memset(t, 0, sizeof(*t));
    t->max_entries = max_entries;
    t->slot_capacity = INITIAL_SLOTS;
    t->slots = calloc(t->slot_capacity, sizeof(uint32_t));
    if (!t->slots) {
        memset(t, 0, sizeof(*t));
        return -1;
    }
    return 0;
}

void
rperf_release_stacks_free(rperf_release_stacks_t *t)
{
    free(t->entries);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

static int
rehash(rperf_release_stacks_t *t)
{
    uint32_t capacity = t->slot_capacity * 2;
    uint32_t *slots = calloc(capacity, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t n = 0; n < t->count; n++) {
        const rperf_release_stack_t *e = &t->entries[n];
        uint32_t i = hash_key(e->waiter_seq, e->release_index, e->generation, e->stack_id) & (capacity - 1);
        while (slots[i])
            i = (i + 1) & (capacity - 1);
        slots[i] = n + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->slot_capacity = capacity;
    return 0;
}

int
rperf_release_stacks_add(rperf_release_stacks_t *t, int waiter_seq, int release_index, uint32_t generation,
                         uint32_t stack_id, int64_t ns)
{
    if (!t->slots)
        return -1;
    uint32_t hash = hash_key(waiter_seq, release_index, generation, stack_id);
    uint32_t mask = t->slot_capacity - 1;
    uint32_t i = hash & mask;
    for (uint32_t slot; (slot = t->slots[i]) != 0; i = (i + 1) & mask) {
        rperf_release_stack_t *e = &t->entries[slot - 1];
        if (e->waiter_seq == waiter_seq && e->release_index == release_index && e->generation == generation &&
            e->stack_id == stack_id) {
            e->ns += ns;
            e->count++;
            return 0;
        }
    }
    if (t->count >= t->max_entries)
        return -1;
    if (t->count == t->capacity) {
        uint32_t capacity = t->capacity ? t->capacity * 2 : 64;
        rperf_release_stack_t *grown = realloc(t->entries, capacity * sizeof(*grown));
        if (!grown)
            return -1;
        t->entries = grown;
        t->capacity = capacity;
    }
    if ((uint64_t)(t->count + 1) * 2 > t->slot_capacity) {
        if (rehash(t) < 0)
            return -1;
        mask = t->slot_capacity - 1;
        i = hash & mask;
        while (t->slots[i])
            i = (i + 1) & mask;
    }
    uint32_t n = t->count++;
    t->entries[n] = (rperf_release_stack_t){.waiter_seq = waiter_seq,
                                            .release_index = release_index,
                                            .generation = generation,
                                            .stack_id = stack_id,
                                            .ns = ns,
                                            .count = 1};
    t->slots[i] = n + 1;
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
    if (t->slots)
        memset(t->slots, 0, sizeof(uint32_t) * t->slot_capacity);
}
