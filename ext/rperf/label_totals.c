/*
 * label_totals.c — the (thread, label set) → totals table.
 *
 * FNV-1a over the two ids; the table doubles before it is half full, so a
 * probe always ends at an empty row. It does NOT lock (see the header).
 */
#include "label_totals.h"

#include <stdlib.h>

static size_t
label_hash(int seq, int label)
{
    uint32_t h = 2166136261u;
    h = (h ^ (uint32_t)seq) * 16777619u;
    h = (h ^ (uint32_t)label) * 16777619u;
    return h;
}

static int
grow(rperf_label_totals_t *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    rperf_label_total_t *rows = calloc(cap, sizeof(*rows));
    if (!rows)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        const rperf_label_total_t *old = &t->rows[i];
        if (!old->thread_seq)
            continue;
        size_t j = label_hash(old->thread_seq, old->label_set_id) & (cap - 1);
        while (rows[j].thread_seq)
            j = (j + 1) & (cap - 1);
        rows[j] = *old;
    }
    free(t->rows);
    t->rows = rows;
    t->cap = cap;
    return 0;
}

rperf_label_total_t *
rperf_label_totals_row(rperf_label_totals_t *t, int thread_seq, int label_set_id)
{
    if (thread_seq < 1)
        return NULL;
    if (t->used * 2 >= t->cap && grow(t) < 0)
        return NULL;
    size_t j = label_hash(thread_seq, label_set_id) & (t->cap - 1);
    for (;; j = (j + 1) & (t->cap - 1)) {
        rperf_label_total_t *row = &t->rows[j];
        if (!row->thread_seq) {
            row->thread_seq = thread_seq;
            row->label_set_id = label_set_id;
            t->used++;
            return row;
        }
        if (row->thread_seq == thread_seq && row->label_set_id == label_set_id)
            return row;
    }
}

rperf_label_total_t *
rperf_label_totals_copy(const rperf_label_totals_t *t, size_t *count)
{
    rperf_label_total_t *out = malloc((t->used ? t->used : 1) * sizeof(*out));
    size_t n = 0;
    if (out) {
        for (size_t i = 0; i < t->cap; i++)
            if (t->rows[i].thread_seq)
                out[n++] = t->rows[i];
    }
    *count = n;
    return out;
}

void
rperf_label_totals_free(rperf_label_totals_t *t)
{
    free(t->rows);
    t->rows = NULL;
    t->cap = t->used = 0;
}
