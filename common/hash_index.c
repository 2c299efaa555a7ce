/*
 * hash_index.c — the open-addressing id index (see hash_index.h). It does
 * NOT know any table's entries or keys.
 */
#include "hash_index.h"

#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 64

void
rperf_hash_index_init(rperf_hash_index_t *ix)
{
    memset(ix, 0, sizeof(*ix));
}

void
rperf_hash_index_free(rperf_hash_index_t *ix)
{
    free(ix->ids);
    free(ix->hashes);
    memset(ix, 0, sizeof(*ix));
}

void
rperf_hash_index_clear(rperf_hash_index_t *ix)
{
    if (ix->ids)
        memset(ix->ids, 0, ix->nslots * sizeof(*ix->ids));
    ix->count = 0;
}

int
rperf_hash_index_reserve(rperf_hash_index_t *ix, size_t n)
{
    if (n * 2 <= ix->nslots)
        return 0;
    size_t nslots = ix->nslots ? ix->nslots : MIN_SLOTS;
    while (n * 2 > nslots) {
        if (nslots > SIZE_MAX / 2 / sizeof(uint32_t))
            return -1;
        nslots *= 2;
    }
    uint32_t *ids = calloc(nslots, sizeof(*ids));
    uint32_t *hashes = malloc(nslots * sizeof(*hashes));
    if (!ids || !hashes) {
        free(ids);
        free(hashes);
        return -1;
    }
    for (size_t i = 0; i < ix->nslots; i++) {
        if (!ix->ids[i])
            continue;
        size_t j = ix->hashes[i] & (nslots - 1);
        while (ids[j])
            j = (j + 1) & (nslots - 1);
        ids[j] = ix->ids[i];
        hashes[j] = ix->hashes[i];
    }
    free(ix->ids);
    free(ix->hashes);
    ix->ids = ids;
    ix->hashes = hashes;
    ix->nslots = nslots;
    return 0;
}

/* The entry's id, or -1 with *slot at the empty slot that ends the probe. */
static long
probe(const rperf_hash_index_t *ix, uint32_t h, rperf_hash_same_fn same, const void *table, const void *key,
      size_t *slot)
{
    size_t mask = ix->nslots - 1;
    size_t i = h & mask;
    for (; ix->ids[i]; i = (i + 1) & mask) {
        if (ix->hashes[i] == h && same(table, key, ix->ids[i] - 1))
            return (long)(ix->ids[i] - 1);
    }
    *slot = i;
    return -1;
}

long
rperf_hash_index_find(const rperf_hash_index_t *ix, uint32_t h, rperf_hash_same_fn same, const void *table,
                      const void *key)
{
    size_t slot;
    return ix->nslots ? probe(ix, h, same, table, key, &slot) : -1;
}

long
rperf_hash_index_upsert(rperf_hash_index_t *ix, uint32_t h, rperf_hash_same_fn same, const void *table,
                        const void *key, size_t *slot)
{
    if (rperf_hash_index_reserve(ix, ix->count + 1) < 0)
        return -2;
    return probe(ix, h, same, table, key, slot);
}

void
rperf_hash_index_put(rperf_hash_index_t *ix, size_t slot, uint32_t h, uint32_t id)
{
    ix->ids[slot] = id + 1;
    ix->hashes[slot] = h;
    ix->count++;
}

uint32_t
rperf_hash_bytes(const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    uint32_t h = RPERF_HASH_SEED;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}
