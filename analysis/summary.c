/* summary.c — computing rga_summary_t from a report (see summary.h).
 *
 * Arithmetic only: sums, groupings and sorts. Formatting lives in
 * summary_text.c and summary_json.c.
 */
#include "summary.h"
#include "term_text.h"

#include <stdlib.h>
#include <string.h>

int64_t
rga_summary_gc_ns(const int64_t *state_ns)
{
    return state_ns[RGA_STATE_GC_MARK] + state_ns[RGA_STATE_GC_SWEEP];
}

char *
rga_label_set_text(const rga_report_t *r, int64_t label_set, char *buf, size_t size)
{
    long i = rga_report_label_set_index(r, label_set);
    if (i < 0 || r->label_sets[i].n_labels == 0) {
        snprintf(buf, size, "(no labels)");
        return buf;
    }
    const rga_label_set_t *ls = &r->label_sets[i];
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < ls->n_labels && used + 1 < size; j++) {
        int n = snprintf(buf + used, size - used, "%s%s=%s", j ? ", " : "", ls->keys[j], ls->values[j]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    /* Cut text stays valid UTF-8 (JSON writers refuse anything else). */
    buf[rga_text_prefix_bytes(buf, size - 1)] = '\0';
    return buf;
}

char *
rga_stack_text(const rga_report_t *r, int64_t stack, int max_frames, char *buf, size_t size)
{
    buf[0] = '\0';
    if (stack < 0 || (uint64_t)stack >= r->n_stacks) {
        snprintf(buf, size, "(no stack)");
        return buf;
    }
    const rga_stack_t *s = &r->stacks[stack];
    size_t used = 0;
    int shown = 0;
    for (uint32_t i = 0; i < s->depth && shown < max_frames && used + 1 < size; i++) {
        int64_t fid = r->stack_frames[s->first + i];
        const rga_frame_t *f = &r->frames[fid];
        if (fid <= RGA_FRAME_GC_SWEEP && f->path[0] == '<')
            continue;
        int n = snprintf(buf + used, size - used, "%s%s (%s)", shown ? " < " : "", f->label, f->path);
        if (n < 0)
            break;
        used += (size_t)n;
        shown++;
    }
    if (shown == 0)
        snprintf(buf, size, "%s", s->depth > 0 ? r->frames[r->stack_frames[s->first]].label : "(empty stack)");
    buf[rga_text_prefix_bytes(buf, size - 1)] = '\0';
    return buf;
}

static int
cmp_label_by_wait(const void *a, const void *b)
{
    const rga_summary_label_t *x = a, *y = b;
    int64_t wx = x->state_ns[RGA_STATE_GVL_WAIT], wy = y->state_ns[RGA_STATE_GVL_WAIT];
    if (wx != wy)
        return wx < wy ? 1 : -1;
    return (x->label_set > y->label_set) - (x->label_set < y->label_set);
}

static int
cmp_holder(const void *a, const void *b)
{
    const rga_summary_holder_t *x = a, *y = b;
    if (x->wait_ns != y->wait_ns)
        return x->wait_ns < y->wait_ns ? 1 : -1;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int
cmp_stack(const void *a, const void *b)
{
    const rga_summary_stack_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return (x->stack > y->stack) - (x->stack < y->stack);
}

/* qsort has no context argument; waiters are sorted through this pointer. */
static const rga_summary_thread_t *sort_threads;

static int
cmp_waiter(const void *a, const void *b)
{
    const rga_summary_thread_t *x = &sort_threads[*(const size_t *)a], *y = &sort_threads[*(const size_t *)b];
    int64_t wx = x->state_ns[RGA_STATE_GVL_WAIT], wy = y->state_ns[RGA_STATE_GVL_WAIT];
    if (wx != wy)
        return wx < wy ? 1 : -1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Collects the non-zero entries of sums[0..n) into a sorted stack list. */
static rga_summary_stack_t *
collect_stacks(const int64_t *sums, size_t n, size_t *count)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += sums[i] > 0;
    rga_summary_stack_t *list = calloc(k ? k : 1, sizeof(*list));
    if (!list)
        return NULL;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (sums[i] > 0)
            list[k++] = (rga_summary_stack_t){(int64_t)i, sums[i]};
    qsort(list, k, sizeof(*list), cmp_stack);
    *count = k;
    return list;
}

static int
cmp_release_key(const void *a, const void *b)
{
    const rga_summary_release_t *x = a, *y = b;
    if (x->releaser != y->releaser)
        return (x->releaser > y->releaser) - (x->releaser < y->releaser);
    if (x->waiter != y->waiter)
        return (x->waiter > y->waiter) - (x->waiter < y->waiter);
    if (x->idle != y->idle)
        return x->idle - y->idle;
    return x->cause - y->cause;
}

static int
cmp_release(const void *a, const void *b)
{
    const rga_summary_release_t *x = a, *y = b;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns < y->blocked_ns ? 1 : -1;
    return cmp_release_key(a, b);
}

static int
cmp_method(const void *a, const void *b)
{
    const rga_blocked_method_t *x = *(const rga_blocked_method_t *const *)a,
                               *y = *(const rga_blocked_method_t *const *)b;
    if (x->cause != y->cause)
        return (int)x->cause - (int)y->cause;
    if (x->blocked_ns != y->blocked_ns)
        return x->blocked_ns < y->blocked_ns ? 1 : -1;
    if (x->thread != y->thread)
        return (x->thread > y->thread) - (x->thread < y->thread);
    return strcmp(x->method, y->method);
}

/* Release edges summed per (releaser, waiter, cause) over label sets, plus
 * each waiter's time with no releaser; the blocked methods of the listed
 * threads; the releasers' stacks weighted by the blocked time they ended
 * (stack_sums: scratch of n_stacks). 0, or -1 when out of memory. */
static int
build_causes(const rga_report_t *r, const rga_filter_t *filter, rga_summary_t *s, int64_t *stack_sums)
{
    s->has_causes = r->has_causes;
    if (!r->has_causes)
        return 0;
    s->releases = calloc(r->n_blocked_edges + s->n_threads + 1, sizeof(*s->releases));
    s->methods = calloc(r->n_blocked_methods + 1, sizeof(*s->methods));
    if (!s->releases || !s->methods)
        return -1;
    bool labelled = false;
    for (size_t i = 0; i < r->n_label_sets && !labelled; i++)
        labelled = r->label_sets[i].n_labels > 0;
    for (size_t i = 0; i < r->n_blocked_edges; i++) {
        const rga_blocked_edge_t *e = &r->blocked_edges[i];
        if (rga_filter_thread(filter, r, e->waiter) && rga_filter_label_set(filter, r, e->waiter_label_set))
            s->releases[s->n_releases++] = (rga_summary_release_t){e->releaser,
                                                                   e->waiter,
                                                                   e->cause,
                                                                   labelled && e->waiter_label_set == 0 &&
                                                                       (e->cause == RGA_CAUSE_QUEUE ||
                                                                        e->cause == RGA_CAUSE_CONDVAR),
                                                                   e->blocked_ns,
                                                                   e->count};
    }
    /* Fold the label sets apart: equal (releaser, waiter, cause) are adjacent once sorted by key. */
    if (s->n_releases > 1)
        qsort(s->releases, s->n_releases, sizeof(*s->releases), cmp_release_key);
    size_t kept = 0;
    for (size_t i = 0; i < s->n_releases; i++) {
        rga_summary_release_t *k = kept ? &s->releases[kept - 1] : NULL, *x = &s->releases[i];
        if (k && cmp_release_key(k, x) == 0) {
            k->blocked_ns += x->blocked_ns;
            k->count += x->count;
        } else {
            s->releases[kept++] = *x;
        }
    }
    s->n_releases = kept;
    /* release_unknown_ns is per thread, not per label set: shown without a label filter only. */
    for (size_t i = 0; i < s->n_threads && !filter->labels_active; i++)
        if (s->threads[i].release_unknown_ns > 0)
            s->releases[s->n_releases++] = (rga_summary_release_t){
                0, s->threads[i].seq, RGA_CAUSE_UNKNOWN, false, s->threads[i].release_unknown_ns, 0};
    if (s->n_releases > 1)
        qsort(s->releases, s->n_releases, sizeof(*s->releases), cmp_release);
    for (size_t i = 0; i < r->n_blocked_methods; i++)
        if (rga_filter_thread(filter, r, r->blocked_methods[i].thread))
            s->methods[s->n_methods++] = &r->blocked_methods[i];
    if (s->n_methods > 1)
        qsort(s->methods, s->n_methods, sizeof(*s->methods), cmp_method);
    memset(stack_sums, 0, (r->n_stacks ? r->n_stacks : 1) * sizeof(int64_t));
    for (size_t i = 0; i < r->n_blocked_edges; i++) {
        const rga_blocked_edge_t *e = &r->blocked_edges[i];
        if (e->releaser_stack >= 0 && rga_filter_thread(filter, r, e->releaser) &&
            rga_filter_label_set(filter, r, e->releaser_label_set))
            stack_sums[e->releaser_stack] += e->blocked_ns;
    }
    s->release_stacks = collect_stacks(stack_sums, r->n_stacks, &s->n_release_stacks);
    return s->release_stacks ? 0 : -1;
}

int64_t
rga_summary_drop_ppm(const rga_summary_drop_t *d)
{
    if (d->of > 0)
        return (int64_t)((double)d->dropped * 1e6 / (double)d->of + 0.5);
    if (d->total_ns > 0)
        return (int64_t)((double)d->share_ns * 1e6 / (double)d->total_ns + 0.5);
    return 1000000; /* nothing to weigh it against: assume it matters */
}

/* Each drop against the events of its kind, counted over the whole report
 * (drops are not per thread or label set, so filters do not narrow them). */
static void
build_drops(const rga_report_t *r, rga_summary_t *s)
{
    const rga_stats_t *st = &r->stats;
    int64_t waits = 0, releases = 0, blocked = 0, unknown = 0;
    for (size_t i = 0; i < r->n_edges; i++)
        waits += r->edges[i].count;
    for (size_t i = 0; i < r->n_blocked_edges; i++)
        releases += r->blocked_edges[i].count;
    for (size_t i = 0; i < r->n_threads; i++) {
        blocked += r->threads[i].state_ns[RGA_STATE_BLOCKED];
        unknown += r->threads[i].cause_ns[RGA_CAUSE_UNKNOWN];
    }
    const rga_summary_drop_t all[RGA_SUMMARY_DROP_KINDS] = {
        {"samples", "samples", "missing from the stack views", st->dropped_samples,
         st->sampling_count + st->dropped_samples, 0, 0},
        {"aggregation", "samples", "not aggregated into stacks (stack table full)", st->dropped_aggregation,
         st->sampling_count, 0, 0},
        {"intervals", "timeline intervals", "gaps in the timeline and root causes; totals unaffected",
         st->dropped_intervals, (int64_t)r->n_intervals + st->dropped_intervals, 0, 0},
        {"edges", "GVL waits", "their wait is charged to an unknown holder", st->dropped_edges, waits, 0, 0},
        {"threads", "threads", "not profiled at all (thread pool full)", st->dropped_threads,
         (int64_t)r->n_threads + st->dropped_threads, 0, 0},
        {"label_sets", "label sets", "their time is charged to no labels", st->dropped_label_sets,
         (int64_t)r->n_label_sets + st->dropped_label_sets, 0, 0},
        {"causes", "blocked events", "their time is charged to cause unknown", st->dropped_causes, 0, unknown,
         blocked},
        {"blocked_edges", "releases", "their time is in no releaser found", st->dropped_blocked_edges,
         releases + st->dropped_blocked_edges, 0, 0},
        {"release_stacks", "releases", "their time is kept, without the releaser's stack",
         st->dropped_release_stacks, st->release_stacks + st->dropped_release_stacks, 0, 0},
    };
    for (size_t i = 0; i < RGA_SUMMARY_DROP_KINDS; i++) {
        if (all[i].dropped <= 0)
            continue;
        s->drops[s->n_drops] = all[i];
        if (rga_summary_drop_ppm(&all[i]) >= RGA_SUMMARY_DROP_MATERIAL_PPM)
            s->drops_material = true;
        s->n_drops++;
    }
}

/* Threads (their totals from label_totals under a label filter) and label
 * sets with any time or thread, most waiting first. -1: out of memory. */
static int
build_threads_and_labels(const rga_report_t *r, const rga_filter_t *filter, rga_summary_t *s)
{
    size_t nt = r->n_threads, nl = r->n_label_sets ? r->n_label_sets : 1;
    long *row_of_thread = calloc(nt ? nt : 1, sizeof(long));
    if (!row_of_thread)
        return -1;
    for (size_t i = 0; i < nt; i++) {
        row_of_thread[i] = -1;
        if (!rga_filter_thread_index(filter, i))
            continue;
        const rga_thread_t *t = &r->threads[i];
        rga_summary_thread_t *st = &s->threads[s->n_threads];
        st->seq = t->seq;
        st->name = t->name;
        st->ractor = t->ractor;
        st->lifetime_ns = t->last_seen_ns - t->first_seen_ns;
        st->acquisitions = t->acquisitions;
        st->waits = t->waits;
        st->exited = t->exited;
        if (!filter->labels_active) {
            memcpy(st->state_ns, t->state_ns, sizeof(st->state_ns));
            memcpy(st->cause_ns, t->cause_ns, sizeof(st->cause_ns));
            st->has_causes = t->has_causes;
            st->release_unknown_ns = t->release_unknown_ns;
        }
        row_of_thread[i] = (long)s->n_threads++;
    }
    /* Label totals: per label set, and per thread under a label filter. */
    for (size_t i = 0; i < nl; i++)
        s->labels[i].label_set = r->n_label_sets ? r->label_sets[i].id : 0;
    for (size_t i = 0; i < r->n_label_totals; i++) {
        const rga_label_total_t *lt = &r->label_totals[i];
        long ti = rga_report_thread_index(r, lt->thread);
        if (ti < 0 || row_of_thread[ti] < 0 || !rga_filter_label_set(filter, r, lt->label_set))
            continue;
        long li = rga_report_label_set_index(r, lt->label_set);
        if (li < 0)
            li = 0;
        for (int k = 0; k < RGA_STATE_COUNT; k++) {
            s->labels[li].state_ns[k] += lt->state_ns[k];
            if (filter->labels_active)
                s->threads[row_of_thread[ti]].state_ns[k] += lt->state_ns[k];
        }
        if (lt->has_causes) {
            rga_summary_thread_t *th = &s->threads[row_of_thread[ti]];
            s->labels[li].has_causes = true;
            if (filter->labels_active)
                th->has_causes = true;
            for (int c = 0; c < RGA_CAUSE_COUNT; c++) {
                s->labels[li].cause_ns[c] += lt->cause_ns[c];
                if (filter->labels_active)
                    th->cause_ns[c] += lt->cause_ns[c];
            }
        }
        s->labels[li].n_threads++;
    }
    free(row_of_thread);
    size_t kept = 0;
    for (size_t i = 0; i < nl; i++) {
        int64_t any = 0;
        for (int k = 0; k < RGA_STATE_COUNT; k++)
            any += s->labels[i].state_ns[k];
        if (any > 0 || s->labels[i].n_threads > 0)
            s->labels[kept++] = s->labels[i];
    }
    s->n_labels = kept;
    qsort(s->labels, s->n_labels, sizeof(*s->labels), cmp_label_by_wait);

    return 0;
}

/* The whole report's totals, each Ractor's, and the threads that waited. */
static void
build_totals(const rga_report_t *r, rga_summary_t *s)
{
    for (size_t i = 0; i < r->n_ractors; i++) {
        s->ractors[i].id = r->ractors[i].id;
        s->ractors[i].main = r->ractors[i].main;
        s->ractors[i].identified = r->ractors[i].identified;
    }
    s->n_ractors = r->n_ractors;
    for (size_t i = 0; i < s->n_threads; i++) {
        const rga_summary_thread_t *t = &s->threads[i];
        for (int k = 0; k < RGA_STATE_COUNT; k++)
            s->total_ns[k] += t->state_ns[k];
        s->total_lifetime_ns += t->lifetime_ns;
        for (size_t j = 0; j < s->n_ractors; j++) {
            if (s->ractors[j].id == t->ractor) {
                s->ractors[j].n_threads++;
                s->ractors[j].lifetime_ns += t->lifetime_ns;
                for (int k = 0; k < RGA_STATE_COUNT; k++)
                    s->ractors[j].state_ns[k] += t->state_ns[k];
            }
        }
        if (t->state_ns[RGA_STATE_GVL_WAIT] > 0)
            s->waiters[s->n_waiters++] = i;
    }
    sort_threads = s->threads;
    qsort(s->waiters, s->n_waiters, sizeof(size_t), cmp_waiter);
    sort_threads = NULL;
}

/* Who held the GVL while the selected threads waited: one slot per thread,
 * then gc, handoff and unknown; those with any wait, most first. */
static void
build_holders(const rga_report_t *r, const rga_filter_t *filter, rga_summary_t *s)
{
    size_t nt = r->n_threads;
    for (size_t i = 0; i < nt; i++) {
        s->holders[i].kind = RGA_HOLDER_THREAD;
        s->holders[i].seq = r->threads[i].seq;
    }
    s->holders[nt].kind = RGA_HOLDER_GC;
    s->holders[nt + 1].kind = RGA_HOLDER_HANDOFF;
    s->holders[nt + 2].kind = RGA_HOLDER_UNKNOWN;
    for (size_t i = 0; i < r->n_edges; i++) {
        const rga_edge_t *e = &r->edges[i];
        if (!rga_filter_thread(filter, r, e->waiter) || !rga_filter_label_set(filter, r, e->waiter_label_set))
            continue;
        size_t slot;
        if (e->holder_kind == RGA_HOLDER_THREAD)
            slot = (size_t)rga_report_thread_index(r, e->holder);
        else
            slot = nt + (size_t)e->holder_kind - 1;
        s->holders[slot].wait_ns += e->wait_ns;
        s->holders[slot].count += e->count;
        s->total_edge_wait_ns += e->wait_ns;
    }
    size_t kept = 0;
    for (size_t i = 0; i < nt + 3; i++)
        if (s->holders[i].wait_ns > 0 || s->holders[i].count > 0)
            s->holders[kept++] = s->holders[i];
    s->n_holders = kept;
    qsort(s->holders, s->n_holders, sizeof(*s->holders), cmp_holder);
}

/* Where the selected threads waited (samples ending in [GVL wait]) and what
 * made others wait (blame), by stack. stack_sums: zeroed, one per stack.
 * -1: out of memory. */
static int
build_stacks(const rga_report_t *r, const rga_filter_t *filter, rga_summary_t *s, int64_t *stack_sums)
{
    /* Wait stacks: samples whose leaf is the synthetic [GVL wait] frame. */
    for (size_t i = 0; i < r->n_samples; i++) {
        const rga_sample_t *sm = &r->samples[i];
        const rga_stack_t *st = &r->stacks[sm->stack];
        if (st->depth == 0 || r->stack_frames[st->first] != RGA_FRAME_GVL_WAIT)
            continue;
        if (!rga_filter_thread(filter, r, sm->thread) || !rga_filter_label_set(filter, r, sm->label_set))
            continue;
        stack_sums[sm->stack] += sm->weight_ns;
    }
    s->wait_stacks = collect_stacks(stack_sums, r->n_stacks, &s->n_wait_stacks);
    if (!s->wait_stacks)
        return -1;
    memset(stack_sums, 0, (r->n_stacks ? r->n_stacks : 1) * sizeof(int64_t));
    for (size_t i = 0; i < r->n_blame; i++) {
        const rga_blame_t *b = &r->blame[i];
        if (!rga_filter_thread(filter, r, b->holder) || !rga_filter_label_set(filter, r, b->label_set))
            continue;
        stack_sums[b->stack] += b->blame_ns;
    }
    s->blame_stacks = collect_stacks(stack_sums, r->n_stacks, &s->n_blame_stacks);
    if (!s->blame_stacks)
        return -1;
    return 0;
}

rga_status_t
rga_summary_build(const rga_report_t *r, const rga_filter_t *filter, rga_summary_t *s, rga_error_t *err)
{
    rga_status_t st = RGA_OK;
    memset(s, 0, sizeof(*s));
    s->report = r;
    s->duration_ns = r->meta.duration_ns;
    size_t nt = r->n_threads, nl = r->n_label_sets ? r->n_label_sets : 1;
    int64_t *stack_sums = NULL;
    s->threads = calloc(nt ? nt : 1, sizeof(*s->threads));
    s->ractors = calloc(r->n_ractors ? r->n_ractors : 1, sizeof(*s->ractors));
    s->labels = calloc(nl, sizeof(*s->labels));
    s->waiters = calloc(nt ? nt : 1, sizeof(size_t));
    s->holders = calloc(nt + 4, sizeof(*s->holders));
    stack_sums = calloc(r->n_stacks ? r->n_stacks : 1, sizeof(int64_t));
    if (!s->threads || !s->ractors || !s->labels || !s->waiters || !s->holders || !stack_sums)
        goto nomem;

    if (build_threads_and_labels(r, filter, s) != 0)
        goto nomem;
    build_totals(r, s);
    build_holders(r, filter, s);
    if (build_stacks(r, filter, s, stack_sums) != 0)
        goto nomem;
    if (build_causes(r, filter, s, stack_sums) != 0)
        goto nomem;
    build_drops(r, s);
    if ((st = rga_rootcauses_build(r, filter, &s->roots, err)) != RGA_OK ||
        (s->roots.available && (st = rga_rc_stacks_build(r, &s->root_stacks, err)) != RGA_OK)) {
        rga_summary_free(s);
        goto done;
    }
    goto done;
nomem:
    st = rga_error_set(err, RGA_ERR_NOMEM, "out of memory building the summary");
    rga_summary_free(s);
done:
    free(stack_sums);
    return st;
}

void
rga_summary_free(rga_summary_t *s)
{
    free(s->threads);
    free(s->ractors);
    free(s->labels);
    free(s->waiters);
    free(s->holders);
    free(s->wait_stacks);
    free(s->blame_stacks);
    free(s->releases);
    free(s->methods);
    free(s->release_stacks);
    rga_rootcauses_free(&s->roots);
    rga_rc_stacks_free(s->root_stacks);
    memset(s, 0, sizeof(*s));
}

const char *
rga_summary_no_roots_reason(const rga_report_t *r)
{
    if (r->n_intervals > 0)
        return "";
    if (r->meta.recording && strcmp(r->meta.recording, "counters") == 0)
        return "the report was recorded in counters mode, which keeps no timeline; root causes need a full "
               "recording";
    return "the report has no timeline (counters mode or timeline: false); root causes need a full recording";
}
