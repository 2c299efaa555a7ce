/*
 * hash_index.h — the open-addressing index behind every hash table of the
 * extension and the analysis library: it maps a key to the dense id of
 * its entry. The table keeps its entries in an array of its own, in the
 * order they were added; the index keeps, per slot, the entry's id + 1
 * (0: empty) and the key's hash. Growing then hashes nothing again, and a
 * slot whose hash differs costs no key comparison. Slots are a power of
 * two, probed linearly, at most half full, so every probe ends at an
 * empty slot.
 *
 * It does NOT own, store or compare keys: the caller's `same` callback
 * compares a key with an entry. It does NOT lock, and never calls Ruby.
 * Hooks do not use it (upsert may allocate): the wait edge table
 * (wait_edges.c) is fixed at start, and the cause table (cause_table.c)
 * is read without locks.
 *
 * Contract
 * - init zeroes (no allocation); free releases the slots; clear empties
 *   the index and keeps its memory.
 * - reserve(n): room for n entries. Returns 0, or -1 when out of memory
 *   (the index is unchanged).
 * - find: the id of the entry with hash `h` that same(table, key, id)
 *   accepts, or -1.
 * - upsert: find, making room for one more entry first. Returns the id,
 *   or -1 with *slot where the key goes (file the new entry there with
 *   put, before any other upsert), or -2 when out of memory.
 * - put: files entry `id` at the slot an upsert gave.
 * - A table grows its entry array with rperf_grow_array (grow_array.h).
 * - Ids are uint32: every table's entries are bounded far below that.
 */
#ifndef RPERF_HASH_INDEX_H
#define RPERF_HASH_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct rperf_hash_index {
    uint32_t *ids;    /* per slot: entry id + 1, 0 = empty */
    uint32_t *hashes; /* per slot: the hash of that entry's key */
    size_t nslots;    /* 0 or a power of two */
    size_t count;     /* entries filed */
} rperf_hash_index_t;

/* Nonzero when `key` is the key of entry `id` of `table`. */
typedef int (*rperf_hash_same_fn)(const void *table, const void *key, uint32_t id);

void rperf_hash_index_init(rperf_hash_index_t *ix);
void rperf_hash_index_free(rperf_hash_index_t *ix);
void rperf_hash_index_clear(rperf_hash_index_t *ix);
int rperf_hash_index_reserve(rperf_hash_index_t *ix, size_t n);
long rperf_hash_index_find(const rperf_hash_index_t *ix, uint32_t h, rperf_hash_same_fn same, const void *table,
                           const void *key);
long rperf_hash_index_upsert(rperf_hash_index_t *ix, uint32_t h, rperf_hash_same_fn same, const void *table,
                             const void *key, size_t *slot);
void rperf_hash_index_put(rperf_hash_index_t *ix, size_t slot, uint32_t h, uint32_t id);

/* Hashes: FNV-1a over bytes, and a word at a time for keys made of
 * integers (start from RPERF_HASH_SEED, fold each word in order). */
#define RPERF_HASH_SEED 2166136261u
uint32_t rperf_hash_bytes(const void *bytes, size_t len);

static inline uint32_t
rperf_hash_word(uint32_t h, uint64_t word)
{
    h = (h ^ (uint32_t)word) * 16777619u;
    h = (h ^ (uint32_t)(word >> 32)) * 16777619u;
    return h ^ (h >> 15);
}

#endif
