/* report_validate.c — cross-reference checks of a loaded or merged report.
 *
 * report_load.c checks each element alone; this file checks that the ids in
 * one array point into another (threads' Ractors, intervals' threads, label
 * sets and stacks, edges' waiters and holders, stacks' frames), that the
 * keyed arrays have no duplicate keys, that intervals are sorted and those of
 * one thread never overlap, and that every total the analysis computes fits
 * in int64_t (so no view can print a wrapped, negative time). Minor 1: every
 * interval_causes row names a blocked interval (thread seq + start) and a
 * cause id of `causes`, release edges and blocked methods name threads,
 * label sets and stacks that exist. It sorts
 * threads and label sets so the lookups in report_model.c can bisect. It does
 * not check the conservation laws: those are properties of the profiler,
 * which its own tests check.
 */
#include "report_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int
cmp_thread(const void *a, const void *b)
{
    const rga_thread_t *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int
cmp_label_set(const void *a, const void *b)
{
    const rga_label_set_t *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static rga_status_t
bad_ref(rga_error_t *err, const char *array, size_t index, const char *field, const char *what, int64_t value)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "%s[%zu]%s%s", array, index, field[0] == '[' ? "" : ".", field);
    }
    return rga_error_set(err, RGA_ERR_REFERENCE, "%s %" PRId64 " is not in the report", what, value);
}

static rga_status_t
bad_order(rga_error_t *err, size_t index, const char *fmt, size_t other)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "intervals[%zu]", index);
    }
    return rga_error_set(err, RGA_ERR_SCHEMA, fmt, other);
}

static rga_status_t
bad_dup(rga_error_t *err, const char *array, size_t index, const char *field, int64_t value)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "%s[%zu].%s", array, index, field);
    }
    return rga_error_set(err, RGA_ERR_SCHEMA, "duplicate %s %" PRId64, field, value);
}

static rga_status_t
too_big(rga_error_t *err, const char *array, size_t index, const char *field, const char *what)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "%s[%zu]%s%s", array, index, field[0] == '[' ? "" : ".", field);
    }
    return rga_error_set(err, RGA_ERR_SCHEMA,
                         "value too large: the report's %s would exceed %" PRId64
                         " (2^63-1), which the analysis cannot add up",
                         what, INT64_MAX);
}

#define ADD(total, value, array, index, field, what) \
    do { \
        if (__builtin_add_overflow((total), (value), &(total))) \
            return too_big(err, (array), (index), (field), (what)); \
    } while (0)

static const char *const state_fields[RGA_STATE_COUNT] = {"running_ns", "gvl_wait_ns", "blocked_ns", "gc_mark_ns",
                                                          "gc_sweep_ns"};

rga_status_t
rga_report_add_sums(const rga_report_t *r, rga_report_sums_t *sums, rga_error_t *err)
{
    for (size_t i = 0; i < r->n_threads; i++) {
        const rga_thread_t *t = &r->threads[i];
        for (int k = 0; k < RGA_STATE_COUNT; k++)
            ADD(sums->thread_ns, t->state_ns[k], "threads", i, state_fields[k], "total thread time");
        ADD(sums->lifetime_ns, t->last_seen_ns - t->first_seen_ns, "threads", i, "last_seen_ns",
            "total thread lifetime");
        ADD(sums->counts, t->acquisitions, "threads", i, "acquisitions", "total of acquisitions and waits");
        ADD(sums->counts, t->waits, "threads", i, "waits", "total of acquisitions and waits");
    }
    for (size_t i = 0; i < r->n_label_totals; i++)
        for (int k = 0; k < RGA_STATE_COUNT; k++)
            ADD(sums->label_ns, r->label_totals[i].state_ns[k], "label_totals", i, state_fields[k],
                "total label time");
    for (size_t i = 0; i < r->n_edges; i++) {
        ADD(sums->edge_wait_ns, r->edges[i].wait_ns, "edges", i, "wait_ns", "total edge wait");
        ADD(sums->edge_count, r->edges[i].count, "edges", i, "count", "total edge count");
    }
    for (size_t i = 0; i < r->n_threads; i++) {
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            ADD(sums->cause_ns, r->threads[i].cause_ns[c], "threads", i, "blocked_by_cause",
                "total blocked time by cause");
        ADD(sums->cause_ns, r->threads[i].release_unknown_ns, "threads", i, "release_unknown_ns",
            "total blocked time by cause");
    }
    for (size_t i = 0; i < r->n_label_totals; i++)
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            ADD(sums->label_cause_ns, r->label_totals[i].cause_ns[c], "label_totals", i, "blocked_by_cause",
                "total label blocked time by cause");
    for (size_t i = 0; i < r->n_blocked_edges; i++) {
        ADD(sums->blocked_edge_ns, r->blocked_edges[i].blocked_ns, "blocked_edges", i, "blocked_ns",
            "total release-edge time");
        ADD(sums->blocked_counts, r->blocked_edges[i].count, "blocked_edges", i, "count", "total blocked count");
    }
    for (size_t i = 0; i < r->n_blocked_methods; i++) {
        ADD(sums->blocked_method_ns, r->blocked_methods[i].blocked_ns, "blocked_methods", i, "blocked_ns",
            "total blocked-method time");
        ADD(sums->blocked_counts, r->blocked_methods[i].count, "blocked_methods", i, "count", "total blocked count");
    }
    for (size_t i = 0; i < r->n_samples; i++)
        ADD(sums->sample_ns, r->samples[i].weight_ns, "samples", i, "[1]", "total sample weight");
    for (size_t i = 0; i < r->n_blame; i++)
        ADD(sums->blame_ns, r->blame[i].blame_ns, "blame", i, "[3]", "total blame");
    const int64_t *stats = (const int64_t *)&r->stats;
    for (size_t i = 0; i < sizeof(r->stats) / sizeof(int64_t); i++) {
        if (__builtin_add_overflow(sums->stats, stats[i], &sums->stats)) {
            if (err) {
                err->line = err->column = 0;
                snprintf(err->path, sizeof(err->path), "stats");
            }
            return rga_error_set(err, RGA_ERR_SCHEMA,
                                 "counters too large: their total would exceed %" PRId64 " (2^63-1)", INT64_MAX);
        }
    }
    return RGA_OK;
}

/* Timestamps are placed on one axis by adding meta.start_monotonic_ns
 * (merging); the latest one must stay representable. */
static rga_status_t
check_axis(const rga_report_t *r, rga_error_t *err)
{
    int64_t latest = r->meta.duration_ns, sum;
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].last_seen_ns > latest)
            latest = r->threads[i].last_seen_ns;
    for (size_t i = 0; i < r->n_intervals; i++)
        if (r->intervals[i].end_ns > latest)
            latest = r->intervals[i].end_ns;
    if (__builtin_add_overflow(r->meta.start_monotonic_ns, latest, &sum)) {
        if (err) {
            err->line = err->column = 0;
            snprintf(err->path, sizeof(err->path), "meta.start_monotonic_ns");
        }
        return rga_error_set(err, RGA_ERR_SCHEMA,
                             "value too large: plus the report's latest time (%" PRId64 " ns) it exceeds %" PRId64
                             " (2^63-1)",
                             latest, INT64_MAX);
    }
    return RGA_OK;
}

static bool
ractor_known(const rga_report_t *r, int64_t id)
{
    for (size_t i = 0; i < r->n_ractors; i++)
        if (r->ractors[i].id == id)
            return true;
    return false;
}

static bool
label_known(const rga_report_t *r, int64_t id)
{
    /* A report without label_sets still implies the empty set 0. */
    return rga_report_label_set_index(r, id) >= 0 || (id == 0 && r->n_label_sets == 0);
}

/* A blocked interval as interval_causes rows look it up. */
typedef struct blocked_key {
    uint32_t thread_index;
    int64_t start_ns;
    size_t interval;
    size_t row; /* the row that matched it, SIZE_MAX = none yet */
} blocked_key_t;

static int
cmp_blocked_key(const void *a, const void *b)
{
    const blocked_key_t *x = a, *y = b;
    if (x->thread_index != y->thread_index)
        return x->thread_index < y->thread_index ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int
cmp_cause_row(const void *a, const void *b)
{
    const rga_interval_cause_t *x = a, *y = b;
    return (x->interval > y->interval) - (x->interval < y->interval);
}

static rga_status_t
bad_row(rga_error_t *err, size_t index, rga_status_t code, const char *fmt, int64_t a, int64_t b)
{
    if (err) {
        err->line = err->column = 0;
        snprintf(err->path, sizeof(err->path), "interval_causes[%zu]", index);
    }
    return rga_error_set(err, code, fmt, a, b);
}

/* Matches every interval_causes row to the blocked interval of its thread
 * that starts at its start_ns (intervals already resolved to thread
 * indexes), sets the interval's cause, and sorts the rows by interval. */
static rga_status_t
resolve_interval_causes(rga_report_t *r, rga_error_t *err)
{
    for (size_t i = 0; i < r->n_intervals; i++)
        r->intervals[i].cause = RGA_CAUSE_UNKNOWN;
    if (r->n_interval_causes == 0)
        return RGA_OK;
    size_t n_keys = 0;
    for (size_t i = 0; i < r->n_intervals; i++)
        n_keys += r->intervals[i].state == RGA_STATE_BLOCKED;
    blocked_key_t *keys = malloc((n_keys ? n_keys : 1) * sizeof(*keys));
    if (!keys)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory checking interval_causes");
    n_keys = 0;
    for (size_t i = 0; i < r->n_intervals; i++)
        if (r->intervals[i].state == RGA_STATE_BLOCKED)
            keys[n_keys++] = (blocked_key_t){r->intervals[i].thread_index, r->intervals[i].start_ns, i, SIZE_MAX};
    if (n_keys > 1)
        qsort(keys, n_keys, sizeof(*keys), cmp_blocked_key);
    rga_status_t st = RGA_OK;
    for (size_t i = 0; i < r->n_interval_causes && st == RGA_OK; i++) {
        rga_interval_cause_t *c = &r->interval_causes[i];
        long ti = rga_report_thread_index(r, c->thread);
        if (ti < 0) {
            st = bad_ref(err, "interval_causes", i, "[0]", "thread seq", c->thread);
            break;
        }
        if ((uint64_t)c->cause_id >= r->n_cause_ids) {
            st = bad_ref(err, "interval_causes", i, "[2]", "cause id (an index into causes)", c->cause_id);
            break;
        }
        if (c->releaser != 0 && rga_report_thread_index(r, c->releaser) < 0) {
            st = bad_ref(err, "interval_causes", i, "[3]", "releaser thread seq", c->releaser);
            break;
        }
        blocked_key_t want = {(uint32_t)ti, c->start_ns, 0, 0};
        blocked_key_t *k = n_keys ? bsearch(&want, keys, n_keys, sizeof(*keys), cmp_blocked_key) : NULL;
        if (!k) {
            st = bad_row(err, i, RGA_ERR_REFERENCE,
                         "matches no blocked interval: thread %" PRId64 " has none starting at %" PRId64 " ns",
                         c->thread, c->start_ns);
            break;
        }
        if (k->row != SIZE_MAX) {
            st = bad_row(err, i, RGA_ERR_SCHEMA,
                         "a second cause for the blocked interval of thread %" PRId64 " at %" PRId64 " ns",
                         c->thread, c->start_ns);
            break;
        }
        k->row = i;
        c->interval = k->interval;
        c->cause = r->cause_of_id[c->cause_id];
        r->intervals[k->interval].cause = c->cause;
    }
    free(keys);
    if (st == RGA_OK && r->n_interval_causes > 1)
        qsort(r->interval_causes, r->n_interval_causes, sizeof(*r->interval_causes), cmp_cause_row);
    return st;
}

/* Ids of the release edges and blocked methods. */
static rga_status_t
check_blocked_rows(const rga_report_t *r, rga_error_t *err)
{
    for (size_t i = 0; i < r->n_blocked_edges; i++) {
        const rga_blocked_edge_t *e = &r->blocked_edges[i];
        if (!ractor_known(r, e->ractor))
            return bad_ref(err, "blocked_edges", i, "ractor", "Ractor id", e->ractor);
        if (rga_report_thread_index(r, e->waiter) < 0)
            return bad_ref(err, "blocked_edges", i, "waiter", "thread seq", e->waiter);
        if (rga_report_thread_index(r, e->releaser) < 0)
            return bad_ref(err, "blocked_edges", i, "releaser", "thread seq", e->releaser);
        if (!label_known(r, e->waiter_label_set))
            return bad_ref(err, "blocked_edges", i, "waiter_label_set", "label set id", e->waiter_label_set);
        if (!label_known(r, e->releaser_label_set))
            return bad_ref(err, "blocked_edges", i, "releaser_label_set", "label set id", e->releaser_label_set);
        if (e->releaser_stack >= 0 && (uint64_t)e->releaser_stack >= r->n_stacks)
            return bad_ref(err, "blocked_edges", i, "releaser_stack", "stack id", e->releaser_stack);
    }
    for (size_t i = 0; i < r->n_blocked_methods; i++)
        if (rga_report_thread_index(r, r->blocked_methods[i].thread) < 0)
            return bad_ref(err, "blocked_methods", i, "thread", "thread seq", r->blocked_methods[i].thread);
    return RGA_OK;
}

rga_status_t
rga_report_validate(rga_report_t *r, rga_error_t *err)
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
    for (size_t i = 0; i < r->n_threads; i++)
        if (r->threads[i].label_set >= 0 && !label_known(r, r->threads[i].label_set))
            return bad_ref(err, "threads", i, "label_set", "label set id", r->threads[i].label_set);

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
    /* Per thread: the index of its latest interval so far (+1; 0 = none). */
    size_t *last_of_thread = r->n_intervals ? calloc(r->n_threads ? r->n_threads : 1, sizeof(size_t)) : NULL;
    if (r->n_intervals && !last_of_thread) {
        free(seq_index);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory checking the intervals");
    }
    for (size_t i = 0; i < r->n_intervals; i++) {
        rga_interval_t *iv = &r->intervals[i];
        int64_t seq = iv->thread_index;
        long ti;
        if (seq_index)
            ti = seq <= max_seq ? seq_index[seq] : -1;
        else
            ti = rga_report_thread_index(r, seq);
        rga_status_t bad = RGA_OK;
        if (ti < 0)
            bad = bad_ref(err, "intervals", i, "[0]", "thread seq", seq);
        else if (last_of_thread[ti] && iv->start_ns < r->intervals[last_of_thread[ti] - 1].start_ns)
            bad = bad_order(err, i,
                            "starts before intervals[%zu] of the same thread (a thread's intervals come "
                            "in time order)",
                            last_of_thread[ti] - 1);
        else if (last_of_thread[ti] && iv->start_ns < r->intervals[last_of_thread[ti] - 1].end_ns)
            bad = bad_order(err, i,
                            "overlaps intervals[%zu] of the same thread (a thread's intervals never overlap)",
                            last_of_thread[ti] - 1);
        if (bad != RGA_OK) {
            free(seq_index);
            free(last_of_thread);
            return bad;
        }
        last_of_thread[ti] = i + 1;
        iv->thread_index = (uint32_t)ti;
        if (!label_known(r, iv->label_set)) {
            free(seq_index);
            free(last_of_thread);
            return bad_ref(err, "intervals", i, "[4]", "label set id", iv->label_set);
        }
        if (iv->stack >= 0 && (uint64_t)iv->stack >= r->n_stacks) {
            free(seq_index);
            free(last_of_thread);
            return bad_ref(err, "intervals", i, "[5]", "stack id", iv->stack);
        }
    }
    free(seq_index);
    free(last_of_thread);
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
    rga_status_t st = resolve_interval_causes(r, err);
    if (st == RGA_OK)
        st = check_blocked_rows(r, err);
    if (st != RGA_OK)
        return st;
    r->has_causes = r->n_interval_causes || r->n_blocked_edges || r->n_blocked_methods;
    for (size_t i = 0; i < r->n_threads; i++)
        r->has_causes |= r->threads[i].has_causes;
    for (size_t i = 0; i < r->n_label_totals; i++)
        r->has_causes |= r->label_totals[i].has_causes;
    rga_report_sums_t sums = {0};
    st = rga_report_add_sums(r, &sums, err);
    return st == RGA_OK ? check_axis(r, err) : st;
}
