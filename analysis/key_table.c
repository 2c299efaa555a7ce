/* key_table.c — sums keyed by integer tuples (see key_table.h). */
#include "key_table.h"
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
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

static size_t
key_hash(const int64_t *key, size_t n_slots)
{
    uint64_t h = (uint64_t)key[0] * 0x9E3779B97F4A7C15ull ^ (uint64_t)key[1] * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)key[2] * 0x165667B19E3779F9ull ^ (uint64_t)key[3] * 0xD6E8FEB86659FD93ull ^
                 (uint64_t)key[4] * 0x27D4EB2F165667C5ull ^ (uint64_t)key[5] * 0x94D049BB133111EBull;
    h ^= h >> 29;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
    return (size_t)(h & (n_slots - 1));
}

static bool
same_key(const int64_t *a, const int64_t *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] && a[5] == b[5];
}

static int
grow_slots(rga_key_table_t *t)
{
    size_t n = t->n_slots ? t->n_slots * 2 : 64;
    size_t *slots = calloc(n, sizeof(size_t));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t h = key_hash(t->entries[i].key, n);
        while (slots[h])
            h = (h + 1) & (n - 1);
        slots[h] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n;
    return 0;
}

static long
find_slot(const rga_key_table_t *t, const int64_t *key, size_t *slot)
{
    size_t h = key_hash(key, t->n_slots);
    for (; t->slots[h]; h = (h + 1) & (t->n_slots - 1))
        if (same_key(t->entries[t->slots[h] - 1].key, key))
            return (long)(t->slots[h] - 1);
    *slot = h;
    return -1;
}

const rga_key_entry_t *
rga_key_table_find(const rga_key_table_t *t, const int64_t key[RGA_KEY_WIDTH])
{
    size_t slot;
    if (t->n_slots == 0)
        return NULL;
    long i = find_slot(t, key, &slot);
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
        size_t slot = 0;
        if ((t->n + 1) * 2 > t->n_slots && grow_slots(t) != 0)
            return -1;
        i = find_slot(t, key, &slot);
        if (i < 0) {
            if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 64;
                rga_key_entry_t *p = realloc(t->entries, cap * sizeof(*p));
                if (!p)
                    return -1;
                t->entries = p;
                t->cap = cap;
            }
            i = (long)t->n++;
            memset(&t->entries[i], 0, sizeof(t->entries[i]));
            memcpy(t->entries[i].key, key, sizeof(int64_t) * RGA_KEY_WIDTH);
            t->slots[slot] = (size_t)i + 1;
        }
        t->recent[t->next_recent] = (size_t)i + 1;
        t->next_recent = (t->next_recent + 1) % RGA_KEY_RECENT;
    }
    t->entries[i].sum[0] = rga_weight_add(t->entries[i].sum[0], a);
    t->entries[i].sum[1] = rga_weight_add(t->entries[i].sum[1], b);
    return i;
}
