/* key_table.h — time sums keyed by small tuples of integers.
 *
 * The root-cause views add up time per (root, thread, label set, ...) key,
 * millions of times for a large report. An rga_key_table_t maps a key of
 * RGA_KEY_WIDTH int64 values to RGA_KEY_SUMS int64 sums. Adds saturate at
 * INT64_MAX (rga_weight_add), so sums of an untrusted report's times never
 * wrap. Keys are found through a hash index (common/hash_index.h); the
 * entries of the last RGA_KEY_RECENT adds are checked first (a walk's adds come back
 * to a few keys: a thread's own running, its GVL holder, ...).
 *
 * Entries stay in the order they were first added (rga_key_table_t.entries,
 * n entries); callers copy and sort them. Keys are compared whole: unused key
 * fields must be given the same value (0 or -1) every time.
 *
 * Ownership: the table owns its arrays; free with rga_key_table_free().
 * Not thread-safe. No routine prints.
 */
#ifndef RGA_KEY_TABLE_H
#define RGA_KEY_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hash_index.h"

#define RGA_KEY_WIDTH 6
#define RGA_KEY_SUMS 2
#define RGA_KEY_RECENT 4

typedef struct rga_key_entry {
    int64_t key[RGA_KEY_WIDTH];
    int64_t sum[RGA_KEY_SUMS];
} rga_key_entry_t;

typedef struct rga_key_table {
    rga_key_entry_t *entries;
    size_t n, cap;
    rperf_hash_index_t index;
    size_t recent[RGA_KEY_RECENT]; /* entry index + 1 of the latest adds, 0 = none */
    unsigned next_recent;          /* the slot of recent the next new key takes */
} rga_key_table_t;

void rga_key_table_init(rga_key_table_t *t);
void rga_key_table_free(rga_key_table_t *t);

/* Adds a and b to the sums of key (an entry at zero when new). Returns the
 * entry's index, or -1 when out of memory (the table is unchanged). */
long rga_key_table_add(rga_key_table_t *t, const int64_t key[RGA_KEY_WIDTH], int64_t a, int64_t b);

/* The entry of key, or NULL. */
const rga_key_entry_t *rga_key_table_find(const rga_key_table_t *t, const int64_t key[RGA_KEY_WIDTH]);

#endif
