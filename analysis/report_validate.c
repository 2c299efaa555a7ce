/* report_validate.c — cross-reference checks of a loaded or merged report.
 *
 * report_load.c checks each element alone; this file checks that the ids in
 * one array point into another (threads' Ractors, intervals' threads, label
 * sets and stacks, edges' waiters and holders, stacks' frames) and that the
 * keyed arrays have no duplicate keys. It sorts threads and label sets so the
 * lookups in report_model.c can bisect. It does not check the conservation
 * laws: those are properties of the profiler, which its own tests check.
 */
#include "report_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_thread(const void *a, const void *b)
{
    const rga_thread_t *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_label_set(const void *a, const void *b)
{
    const rga_label_set_t *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static rga_status_t bad_ref(rga_error_t *err, const char *array, size_t index, const char *field,
                            const char *what, int64_t value)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "%s[%zu]%s%s", array, index, field[0] == '[' ? "" : ".",
                 field);
    }
    return rga_error_set(err, RGA_ERR_REFERENCE, "%s %" PRId64 " is not in the report", what, value);
}

static rga_status_t bad_dup(rga_error_t *err, const char *array, size_t index, const char *field,
                            int64_t value)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "%s[%zu].%s", array, index, field);
    }
    return rga_error_set(err, RGA_ERR_SCHEMA, "duplicate %s %" PRId64, field, value);
}

static bool ractor_known(const rga_report_t *r, int64_t id)
{
    for (size_t i = 0; i < r->n_ractors; i++)
        if (r->ractors[i].id == id)
            return true;
    return false;
}

static bool label_known(const rga_report_t *r, int64_t id)
{
    /* A report without label_sets still implies the empty set 0. */
    return rga_report_label_set_index(r, id) >= 0 || (id == 0 && r->n_label_sets == 0);
}

rga_status_t rga_report_validate(rga_report_t *r, rga_error_t *err)
{
    for (size_t i = 0; i < r->n_ractors; i++)
        for (size_t j = 0; j < i; j++)
            if (r->ractors[i].id == r->ractors[j].id)
                return bad_dup(err, "ractors", i, "id", r->ractors[i].id);

    if (r->n_threads > 1) /* an empty array may be NULL, which qsort must not see */
        qsort(r->threads, r->n_threads, sizeof(*r->threads), cmp_thread);
    for (size_t i = 0; i < r->n_threads; i++) {
        if (i > 0 && r->threads[i].seq == r->threads[i - 1].seq)
            return bad_dup(err, "threads", i, "seq", r->threads[i].seq);
        if (!ractor_known(r, r->threads[i].ractor))
            return bad_ref(err, "threads", i, "ractor", "Ractor id", r->threads[i].ractor);
    }
    if (r->n_label_sets > 1)
        qsort(r->label_sets, r->n_label_sets, sizeof(*r->label_sets), cmp_label_set);
    for (size_t i = 1; i < r->n_label_sets; i++)
        if (r->label_sets[i].id == r->label_sets[i - 1].id)
            return bad_dup(err, "label_sets", i, "id", r->label_sets[i].id);

    for (size_t i = 0; i < r->n_label_totals; i++) {
        const rga_label_total_t *lt = &r->label_totals[i];
        if (rga_report_thread_index(r, lt->thread) < 0)
            return bad_ref(err, "label_totals", i, "thread", "thread seq", lt->thread);
        if (!label_known(r, lt->label_set))
            return bad_ref(err, "label_totals", i, "label_set", "label set id", lt->label_set);
    }
    for (size_t i = 0; i < r->n_stack_frames; i++) {
        if ((uint64_t)r->stack_frames[i] >= r->n_frames) {
            /* Find which stack holds this frame slot for the path. */
            size_t s = 0;
            while (s + 1 < r->n_stacks && r->stacks[s + 1].first <= i)
                s++;
            char field[32];
            snprintf(field, sizeof(field), "[%zu]", i - r->stacks[s].first);
            return bad_ref(err, "stacks", s, field, "frame id", r->stack_frames[i]);
        }
    }
    for (size_t i = 0; i < r->n_samples; i++) {
        const rga_sample_t *s = &r->samples[i];
        if ((uint64_t)s->stack >= r->n_stacks)
            return bad_ref(err, "samples", i, "[0]", "stack id", s->stack);
        if (rga_report_thread_index(r, s->thread) < 0)
            return bad_ref(err, "samples", i, "[2]", "thread seq", s->thread);
        if (!label_known(r, s->label_set))
            return bad_ref(err, "samples", i, "[3]", "label set id", s->label_set);
    }
    /* Intervals are the bulk: resolve seqs through a direct table when seqs
     * are small (they are dense from 1 in practice), else by bisection. */
    int64_t max_seq = r->n_threads ? r->threads[r->n_threads - 1].seq : 0;
    int32_t *seq_index = NULL;
    if (r->n_intervals > 0 && max_seq > 0 && max_seq <= (int64_t)(4 * r->n_threads + 1024)) {
        seq_index = malloc(((size_t)max_seq + 1) * sizeof(int32_t));
        if (seq_index) {
            for (int64_t q = 0; q <= max_seq; q++)
                seq_index[q] = -1;
            for (size_t t = 0; t < r->n_threads; t++)
                seq_index[r->threads[t].seq] = (int32_t)t;
        }
    }
    for (size_t i = 0; i < r->n_intervals; i++) {
        rga_interval_t *iv = &r->intervals[i];
        int64_t seq = iv->thread_index;
        long ti;
        if (seq_index)
            ti = seq <= max_seq ? seq_index[seq] : -1;
        else
            ti = rga_report_thread_index(r, seq);
        if (ti < 0) {
            free(seq_index);
            return bad_ref(err, "intervals", i, "[0]", "thread seq", seq);
        }
        iv->thread_index = (uint32_t)ti;
        if (!label_known(r, iv->label_set)) {
            free(seq_index);
            return bad_ref(err, "intervals", i, "[4]", "label set id", iv->label_set);
        }
        if (iv->stack >= 0 && (uint64_t)iv->stack >= r->n_stacks) {
            free(seq_index);
            return bad_ref(err, "intervals", i, "[5]", "stack id", iv->stack);
        }
    }
    free(seq_index);
    for (size_t i = 0; i < r->n_edges; i++) {
        const rga_edge_t *e = &r->edges[i];
        if (!ractor_known(r, e->ractor))
            return bad_ref(err, "edges", i, "ractor", "Ractor id", e->ractor);
        if (rga_report_thread_index(r, e->waiter) < 0)
            return bad_ref(err, "edges", i, "waiter", "thread seq", e->waiter);
        if (e->holder_kind == RGA_HOLDER_THREAD && rga_report_thread_index(r, e->holder) < 0)
            return bad_ref(err, "edges", i, "holder", "thread seq", e->holder);
        if (!label_known(r, e->waiter_label_set))
            return bad_ref(err, "edges", i, "waiter_label_set", "label set id", e->waiter_label_set);
        if (!label_known(r, e->holder_label_set))
            return bad_ref(err, "edges", i, "holder_label_set", "label set id", e->holder_label_set);
    }
    for (size_t i = 0; i < r->n_blame; i++) {
        const rga_blame_t *b = &r->blame[i];
        if ((uint64_t)b->stack >= r->n_stacks)
            return bad_ref(err, "blame", i, "[0]", "stack id", b->stack);
        if (rga_report_thread_index(r, b->holder) < 0)
            return bad_ref(err, "blame", i, "[1]", "thread seq", b->holder);
        if (!label_known(r, b->label_set))
            return bad_ref(err, "blame", i, "[2]", "label set id", b->label_set);
    }
    return RGA_OK;
}
