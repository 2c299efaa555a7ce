/* key_table.c — sums keyed by integer tuples (see key_table.h). */
#include "key_table.h"
#include "grow_array.h"
#include "profile_model.h" /* rga_weight_add */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void
rga_key_table_init(rga_key_table_t *t)
{
    memset(t, 0, sizeof(*t));
}

void
rga_key_table_free(rga_key_table_t *t)
{
    free(t->entries);
    rperf_hash_index_free(&t->index);
    memset(t, 0, sizeof(*t));
}

static uint32_t
key_hash(const int64_t *key)
{
    uint32_t h = RPERF_HASH_SEED;
    for (int i = 0; i < RGA_KEY_WIDTH; i++)
        h = rperf_hash_word(h, (uint64_t)key[i]);
    return h;
}

static bool
same_key(const int64_t *a, const int64_t *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] && a[5] == b[5];
}

static int
same_entry(const void *table, const void *key, uint32_t id)
{
    return same_key(((const rga_key_table_t *)table)->entries[id].key, key);
}

const rga_key_entry_t *
rga_key_table_find(const rga_key_table_t *t, const int64_t key[RGA_KEY_WIDTH])
{
    long i = rperf_hash_index_find(&t->index, key_hash(key), same_entry, t, key);
    return i < 0 ? NULL : &t->entries[i];
}

long
rga_key_table_add(rga_key_table_t *t, const int64_t key[RGA_KEY_WIDTH], int64_t a, int64_t b)
{
    long i = -1;
    for (int k = 0; k < RGA_KEY_RECENT && i < 0; k++)
        if (t->recent[k] && same_key(t->entries[t->recent[k] - 1].key, key))
            i = (long)t->recent[k] - 1;
    if (i < 0) {
        uint32_t h = key_hash(key);
        size_t slot;
        i = rperf_hash_index_upsert(&t->index, h, same_entry, t, key, &slot);
        if (i < -1 ||
            (i < 0 && rperf_grow_array((void **)&t->entries, &t->cap, t->n + 1, sizeof(*t->entries), 64) < 0))
            return -1;
        if (i < 0) {
            i = (long)t->n++;
            memset(&t->entries[i], 0, sizeof(t->entries[i]));
            memcpy(t->entries[i].key, key, sizeof(int64_t) * RGA_KEY_WIDTH);
            rperf_hash_index_put(&t->index, slot, h, (uint32_t)i);
        }
        t->recent[t->next_recent] = (size_t)i + 1;
        t->next_recent = (t->next_recent + 1) % RGA_KEY_RECENT;
    }
    t->entries[i].sum[0] = rga_weight_add(t->entries[i].sum[0], a);
    t->entries[i].sum[1] = rga_weight_add(t->entries[i].sum[1], b);
    return i;
}
