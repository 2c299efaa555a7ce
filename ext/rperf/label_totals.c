/*
 * label_totals.c — the (thread, label set) → totals table: rows in an
 * array grown by doubling, found through a hash index. It does NOT lock
 * (see the header).
 */
#include "label_totals.h"
#include "grow_array.h"

#include <stdlib.h>
#include <string.h>

typedef struct row_key {
    int seq;
    int label;
} row_key_t;

static uint32_t
row_hash(const row_key_t *k)
{
    return rperf_hash_word(RPERF_HASH_SEED, ((uint64_t)(uint32_t)k->seq << 32) | (uint32_t)k->label);
}

static int
same_row(const void *table, const void *key, uint32_t id)
{
    const rperf_label_total_t *row = &((const rperf_label_totals_t *)table)->rows[id];
    const row_key_t *k = key;
    return row->thread_seq == k->seq && row->label_set_id == k->label;
}

rperf_label_total_t *
rperf_label_totals_row(rperf_label_totals_t *t, int thread_seq, int label_set_id)
{
    if (thread_seq < 1)
        return NULL;
    row_key_t k = {thread_seq, label_set_id};
    uint32_t h = row_hash(&k);
    size_t slot;
    long id = rperf_hash_index_upsert(&t->index, h, same_row, t, &k, &slot);
    if (id >= 0)
        return &t->rows[id];
    if (id < -1 || rperf_grow_array((void **)&t->rows, &t->cap, t->used + 1, sizeof(*t->rows), 64) < 0)
        return NULL;
    rperf_label_total_t *row = &t->rows[t->used];
    memset(row, 0, sizeof(*row));
    row->thread_seq = thread_seq;
    row->label_set_id = label_set_id;
    rperf_hash_index_put(&t->index, slot, h, (uint32_t)t->used++);
    return row;
}

rperf_label_total_t *
rperf_label_totals_copy(const rperf_label_totals_t *t, size_t *count)
{
    rperf_label_total_t *out = malloc((t->used ? t->used : 1) * sizeof(*out));
    *count = out ? t->used : 0;
    if (out && t->used)
        memcpy(out, t->rows, t->used * sizeof(*out));
    return out;
}

void
rperf_label_totals_free(rperf_label_totals_t *t)
{
    free(t->rows);
    rperf_hash_index_free(&t->index);
    memset(t, 0, sizeof(*t));
}
