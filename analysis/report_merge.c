/* report_merge.c — one report from a snapshot series (see rga_report_merge in report.h).
 *
 * Reports of one process share thread seqs and the monotonic clock, so they
 * are put on one axis by shifting each by its meta.start_monotonic_ns. Label
 * sets, frames and stacks are renumbered by content (each report has its own
 * tables); keyed rows (threads, label totals, edges, blame, release edges,
 * blocked methods) are summed; interval_causes move with their intervals.
 * Blocked causes of a thread or label row that one input lacks (a minor-0
 * report) are counted as unknown, so causes keep summing to blocked_ns.
 * Dictionaries are jansson objects keyed by a text rendering of the key.
 * Refuses reports of different processes (pid), reports whose time ranges
 * overlap (the same report twice, or cuts that are not a series: their
 * totals would be counted twice), and inputs whose totals together would
 * overflow what the analysis adds up.
 */
#include "report_internal.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct merger {
    rga_report_t *out;
    rga_error_t *err;
    json_t *dict_labels, *dict_frames, *dict_stacks, *dict_totals, *dict_edges, *dict_blame, *dict_blocked_edges,
        *dict_blocked_methods;
    size_t cap_threads, cap_label_sets, cap_label_totals, cap_frames, cap_stacks, cap_stack_frames, cap_samples,
        cap_edges, cap_blame, cap_ractors, cap_interval_causes, cap_blocked_edges, cap_blocked_methods;
} merger_t;

static bool
grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*items, n * size);
    if (!p)
        return false;
    *items = p;
    *cap = n;
    return true;
}

#define GROW(m, arr, count, cap) \
    grow((void **)&(m)->out->arr, &(m)->cap, (m)->out->count + 1, sizeof(*(m)->out->arr))

/* Looks key up in dict; when absent stores next and returns it. -1 = no memory. */
static long
intern(json_t *dict, const char *key, size_t next)
{
    json_t *v = json_object_get(dict, key);
    if (v)
        return (long)json_integer_value(v);
    if (json_object_set_new_nocheck(dict, key, json_integer((json_int_t)next)) != 0)
        return -1;
    return (long)next;
}

/* Appends text to a growing key buffer. */
typedef struct keybuf {
    char *s;
    size_t len, cap;
} keybuf_t;

static bool
key_add(keybuf_t *k, const char *text)
{
    size_t n = strlen(text);
    if (!grow((void **)&k->s, &k->cap, k->len + n + 2, 1))
        return false;
    memcpy(k->s + k->len, text, n);
    k->len += n;
    k->s[k->len++] = '\x1f';
    k->s[k->len] = '\0';
    return true;
}

static bool
key_int(keybuf_t *k, int64_t v)
{
    char num[32];
    snprintf(num, sizeof(num), "%" PRId64, v);
    return key_add(k, num);
}

static char *
dupstr(const char *s)
{
    return strdup(s ? s : "");
}

static rga_status_t
nomem(merger_t *m)
{
    return rga_error_set(m->err, RGA_ERR_NOMEM, "out of memory merging reports");
}

static int
cmp_interval(const void *a, const void *b)
{
    const rga_interval_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->thread_index > y->thread_index) - (x->thread_index < y->thread_index);
}

/* New id of label set id of report in (label_map is by index; an unknown id
 * can only be the implied empty set, which maps to 0). */
static int64_t
map_label(const rga_report_t *in, const long *label_map, int64_t id)
{
    long i = rga_report_label_set_index(in, id);
    return i >= 0 ? label_map[i] : 0;
}

static int
cmp_thread_seq_time(const void *a, const void *b)
{
    const rga_thread_t *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (x->last_seen_ns > y->last_seen_ns) - (x->last_seen_ns < y->last_seen_ns);
}

/* a + b, or INT64_MAX when it does not fit: validation of the merged
 * report then refuses the total with a path, without overflowing here. */
static int64_t
sat_add(int64_t a, int64_t b)
{
    int64_t sum;
    return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

/* Adds one row's blocked causes into another's. A row without causes (a
 * minor-0 report of the series) counts its blocked time as unknown, so the
 * causes keep summing to blocked_ns. Call before adding the state times. */
static void
add_causes(int64_t *into, bool *into_has, int64_t into_blocked_ns, const int64_t *from, bool from_has,
           int64_t from_blocked_ns)
{
    if (!*into_has && !from_has)
        return;
    if (!*into_has) {
        memset(into, 0, RGA_CAUSE_COUNT * sizeof(int64_t));
        into[RGA_CAUSE_UNKNOWN] = into_blocked_ns;
    }
    if (from_has)
        for (int c = 0; c < RGA_CAUSE_COUNT; c++)
            into[c] = sat_add(into[c], from[c]);
    else
        into[RGA_CAUSE_UNKNOWN] = sat_add(into[RGA_CAUSE_UNKNOWN], from_blocked_ns);
    *into_has = true;
}

/* Folds the rows of one seq (sorted, latest last) into one: lifetimes span
 * all of them, totals add up, name and exited come from the latest. */
static bool
ractor_identified(const rga_report_t *r, int64_t id)
{
    for (size_t i = 0; i < r->n_ractors; i++)
        if (r->ractors[i].id == id)
            return r->ractors[i].identified;
    return false;
}

static void
coalesce_threads(rga_report_t *out)
{
    if (out->n_threads > 1) /* qsort must not see a NULL array, even empty */
        qsort(out->threads, out->n_threads, sizeof(*out->threads), cmp_thread_seq_time);
    size_t kept = 0;
    for (size_t i = 0; i < out->n_threads; i++) {
        rga_thread_t *t = &out->threads[i];
        if (kept == 0 || out->threads[kept - 1].seq != t->seq) {
            out->threads[kept++] = *t;
            continue;
        }
        rga_thread_t *n = &out->threads[kept - 1];
        if (t->first_seen_ns < n->first_seen_ns)
            n->first_seen_ns = t->first_seen_ns;
        n->last_seen_ns = t->last_seen_ns; /* sorted: t is the later one */
        /* A thread whose Ractor a later report identified is that Ractor's. */
        if (!ractor_identified(out, n->ractor) && ractor_identified(out, t->ractor))
            n->ractor = t->ractor;
        n->exited = t->exited;
        if (t->label_set >= 0)
            n->label_set = t->label_set;
        add_causes(n->cause_ns, &n->has_causes, n->state_ns[RGA_STATE_BLOCKED], t->cause_ns, t->has_causes,
                   t->state_ns[RGA_STATE_BLOCKED]);
        n->release_unknown_ns = sat_add(n->release_unknown_ns, t->release_unknown_ns);
        for (int s = 0; s < RGA_STATE_COUNT; s++)
            n->state_ns[s] += t->state_ns[s];
        n->acquisitions += t->acquisitions;
        n->waits += t->waits;
        if (t->name[0]) {
            free(n->name);
            n->name = t->name;
        } else {
            free(t->name);
        }
    }
    out->n_threads = kept;
}

/* One input's renumbering while it is merged (merge_one): the ids of its
 * label sets, frames and stacks in the merged report, and a key buffer.
 * Every step returns false when memory runs out. */
typedef struct merge_input {
    merger_t *m;
    int64_t shift;
    long *label_map, *frame_map, *stack_map;
    keybuf_t k;
} merge_input_t;

/* Ractors by id; main and identified when any input says so. */
static bool
merge_ractors(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_ractors; i++) {
        size_t j = 0;
        while (j < out->n_ractors && out->ractors[j].id != in->ractors[i].id)
            j++;
        if (j == out->n_ractors) {
            if (!GROW(x->m, ractors, n_ractors, cap_ractors))
                return false;
            out->ractors[out->n_ractors++] = in->ractors[i];
        } else {
            out->ractors[j].main |= in->ractors[i].main;
            out->ractors[j].identified |= in->ractors[i].identified;
        }
    }
    return true;
}

/* Threads are appended here and coalesced by seq once all inputs are in
 * (coalesce_threads), which keeps a merge of many threads O(n log n). */
static bool
merge_threads(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_threads; i++) {
        if (!GROW(x->m, threads, n_threads, cap_threads))
            return false;
        rga_thread_t *n = &out->threads[out->n_threads];
        *n = in->threads[i];
        n->name = dupstr(in->threads[i].name);
        if (!n->name)
            return false;
        out->n_threads++;
        n->first_seen_ns += x->shift;
        n->last_seen_ns += x->shift;
    }
    return true;
}

/* Label sets renumbered by content; label_map takes the input's ids. */
static bool
merge_label_sets(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_label_sets; i++) {
        const rga_label_set_t *ls = &in->label_sets[i];
        x->k.len = 0;
        if (!key_add(&x->k, ""))
            return false;
        for (size_t j = 0; j < ls->n_labels; j++)
            if (!key_add(&x->k, ls->keys[j]) || !key_add(&x->k, ls->values[j]))
                return false;
        /* The empty set keeps id 0; others are numbered after it. */
        size_t next = out->n_label_sets;
        long id = intern(x->m->dict_labels, x->k.s, next);
        if (id < 0)
            return false;
        x->label_map[i] = id;
        if ((size_t)id == next) {
            if (!GROW(x->m, label_sets, n_label_sets, cap_label_sets))
                return false;
            rga_label_set_t *n = &out->label_sets[out->n_label_sets];
            memset(n, 0, sizeof(*n));
            n->id = id;
            out->n_label_sets++;
            n->keys = calloc(ls->n_labels + 1, sizeof(char *));
            n->values = calloc(ls->n_labels + 1, sizeof(char *));
            if (!n->keys || !n->values)
                return false;
            for (size_t j = 0; j < ls->n_labels; j++) {
                n->keys[j] = dupstr(ls->keys[j]);
                n->values[j] = dupstr(ls->values[j]);
                n->n_labels++;
                if (!n->keys[j] || !n->values[j])
                    return false;
            }
        }
    }
    return true;
}

/* The threads just appended take the merged label ids. */
static bool
merge_thread_labels(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_threads; i++) {
        rga_thread_t *t = &out->threads[out->n_threads - in->n_threads + i];
        if (t->label_set >= 0)
            t->label_set = map_label(in, x->label_map, t->label_set);
    }
    return true;
}

/* Frames renumbered by (path, label); frame_map takes the input's ids. */
static bool
merge_frames(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_frames; i++) {
        x->k.len = 0;
        if (!key_add(&x->k, in->frames[i].path) || !key_add(&x->k, in->frames[i].label))
            return false;
        long id = intern(x->m->dict_frames, x->k.s, out->n_frames);
        if (id < 0)
            return false;
        x->frame_map[i] = id;
        if ((size_t)id == out->n_frames) {
            if (!GROW(x->m, frames, n_frames, cap_frames))
                return false;
            rga_frame_t *f = &out->frames[out->n_frames++];
            f->path = dupstr(in->frames[i].path);
            f->label = dupstr(in->frames[i].label);
            if (!f->path || !f->label)
                return false;
        }
    }
    return true;
}

/* Stacks renumbered by their merged frames; stack_map takes the input's ids. */
static bool
merge_stacks(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_stacks; i++) {
        const rga_stack_t *st = &in->stacks[i];
        x->k.len = 0;
        if (!key_add(&x->k, "s"))
            return false;
        for (uint32_t j = 0; j < st->depth; j++)
            if (!key_int(&x->k, x->frame_map[in->stack_frames[st->first + j]]))
                return false;
        long id = intern(x->m->dict_stacks, x->k.s, out->n_stacks);
        if (id < 0)
            return false;
        x->stack_map[i] = id;
        if ((size_t)id == out->n_stacks) {
            if (!GROW(x->m, stacks, n_stacks, cap_stacks) ||
                !grow((void **)&out->stack_frames, &x->m->cap_stack_frames, out->n_stack_frames + st->depth + 1,
                      sizeof(int64_t)))
                return false;
            for (uint32_t j = 0; j < st->depth; j++)
                out->stack_frames[out->n_stack_frames + j] = x->frame_map[in->stack_frames[st->first + j]];
            out->stacks[out->n_stacks++] = (rga_stack_t){out->n_stack_frames, st->depth};
            out->n_stack_frames += st->depth;
        }
    }
    return true;
}

/* Label totals summed per (thread, label set), causes kept summing to blocked time. */
static bool
merge_label_totals(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_label_totals; i++) {
        const rga_label_total_t *lt = &in->label_totals[i];
        int64_t ls = map_label(in, x->label_map, lt->label_set);
        x->k.len = 0;
        if (!key_int(&x->k, lt->thread) || !key_int(&x->k, ls))
            return false;
        long id = intern(x->m->dict_totals, x->k.s, out->n_label_totals);
        if (id < 0)
            return false;
        if ((size_t)id == out->n_label_totals) {
            if (!GROW(x->m, label_totals, n_label_totals, cap_label_totals))
                return false;
            out->label_totals[out->n_label_totals] = *lt;
            out->label_totals[out->n_label_totals++].label_set = ls;
        } else {
            rga_label_total_t *o = &out->label_totals[id];
            add_causes(o->cause_ns, &o->has_causes, o->state_ns[RGA_STATE_BLOCKED], lt->cause_ns, lt->has_causes,
                       lt->state_ns[RGA_STATE_BLOCKED]);
            for (int s = 0; s < RGA_STATE_COUNT; s++)
                o->state_ns[s] += lt->state_ns[s];
        }
    }
    return true;
}

/* Samples appended with merged stack and label ids. */
static bool
merge_samples(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_samples; i++) {
        if (!GROW(x->m, samples, n_samples, cap_samples))
            return false;
        rga_sample_t s = in->samples[i];
        s.stack = x->stack_map[s.stack];
        s.label_set = map_label(in, x->label_map, s.label_set);
        out->samples[out->n_samples++] = s;
    }
    return true;
}

/* Intervals shifted onto the series' clock; validate() resolves their threads. */
static bool
merge_intervals(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_intervals; i++) {
        rga_interval_t iv = in->intervals[i];
        iv.start_ns += x->shift;
        iv.end_ns += x->shift;
        iv.thread_index = (uint32_t)in->threads[iv.thread_index].seq; /* validate() resolves it */
        iv.label_set = (uint32_t)map_label(in, x->label_map, iv.label_set);
        if (iv.stack >= 0)
            iv.stack = (int32_t)x->stack_map[iv.stack];
        out->intervals[out->n_intervals++] = iv;
    }
    return true;
}

/* Wait edges summed per key. */
static bool
merge_edges(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_edges; i++) {
        rga_edge_t e = in->edges[i];
        e.waiter_label_set = map_label(in, x->label_map, e.waiter_label_set);
        e.holder_label_set = map_label(in, x->label_map, e.holder_label_set);
        x->k.len = 0;
        if (!key_int(&x->k, e.ractor) || !key_int(&x->k, e.waiter) || !key_int(&x->k, e.holder_kind) ||
            !key_int(&x->k, e.holder) || !key_int(&x->k, e.waiter_label_set) || !key_int(&x->k, e.holder_label_set))
            return false;
        long id = intern(x->m->dict_edges, x->k.s, out->n_edges);
        if (id < 0)
            return false;
        if ((size_t)id == out->n_edges) {
            if (!GROW(x->m, edges, n_edges, cap_edges))
                return false;
            out->edges[out->n_edges++] = e;
        } else {
            out->edges[id].wait_ns += e.wait_ns;
            out->edges[id].count += e.count;
        }
    }
    return true;
}

/* Blame summed per (stack, holder, label set). */
static bool
merge_blame(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_blame; i++) {
        rga_blame_t b = in->blame[i];
        b.stack = x->stack_map[b.stack];
        b.label_set = map_label(in, x->label_map, b.label_set);
        x->k.len = 0;
        if (!key_int(&x->k, b.stack) || !key_int(&x->k, b.holder) || !key_int(&x->k, b.label_set))
            return false;
        long id = intern(x->m->dict_blame, x->k.s, out->n_blame);
        if (id < 0)
            return false;
        if ((size_t)id == out->n_blame) {
            if (!GROW(x->m, blame, n_blame, cap_blame))
                return false;
            out->blame[out->n_blame++] = b;
        } else {
            out->blame[id].blame_ns += b.blame_ns;
        }
    }
    return true;
}

/* Interval causes shifted with their intervals. */
static bool
merge_interval_causes(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_interval_causes; i++) {
        if (!GROW(x->m, interval_causes, n_interval_causes, cap_interval_causes))
            return false;
        rga_interval_cause_t c = in->interval_causes[i];
        c.start_ns += x->shift;
        c.cause_id = c.cause; /* the merged report's causes are the reader's own numbering */
        out->interval_causes[out->n_interval_causes++] = c;
    }
    return true;
}

/* Release edges summed per key. */
static bool
merge_blocked_edges(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_blocked_edges; i++) {
        rga_blocked_edge_t e = in->blocked_edges[i];
        e.waiter_label_set = map_label(in, x->label_map, e.waiter_label_set);
        e.releaser_label_set = map_label(in, x->label_map, e.releaser_label_set);
        if (e.releaser_stack >= 0)
            e.releaser_stack = x->stack_map[e.releaser_stack];
        x->k.len = 0;
        if (!key_int(&x->k, e.ractor) || !key_int(&x->k, e.waiter) || !key_int(&x->k, e.releaser) ||
            !key_int(&x->k, e.cause) || !key_int(&x->k, e.waiter_label_set) ||
            !key_int(&x->k, e.releaser_label_set) || !key_int(&x->k, e.releaser_stack))
            return false;
        long id = intern(x->m->dict_blocked_edges, x->k.s, out->n_blocked_edges);
        if (id < 0)
            return false;
        if ((size_t)id == out->n_blocked_edges) {
            if (!GROW(x->m, blocked_edges, n_blocked_edges, cap_blocked_edges))
                return false;
            out->blocked_edges[out->n_blocked_edges++] = e;
        } else {
            rga_blocked_edge_t *o = &out->blocked_edges[id];
            o->blocked_ns += e.blocked_ns;
            o->count += e.count;
        }
    }
    return true;
}

/* Blocked methods summed per (thread, cause, method). */
static bool
merge_blocked_methods(merge_input_t *x, const rga_report_t *in, rga_report_t *out)
{
    for (size_t i = 0; i < in->n_blocked_methods; i++) {
        const rga_blocked_method_t *bm = &in->blocked_methods[i];
        x->k.len = 0;
        if (!key_int(&x->k, bm->thread) || !key_int(&x->k, bm->cause) || !key_add(&x->k, bm->method))
            return false;
        long id = intern(x->m->dict_blocked_methods, x->k.s, out->n_blocked_methods);
        if (id < 0)
            return false;
        if ((size_t)id == out->n_blocked_methods) {
            if (!GROW(x->m, blocked_methods, n_blocked_methods, cap_blocked_methods))
                return false;
            rga_blocked_method_t *o = &out->blocked_methods[out->n_blocked_methods];
            *o = *bm;
            o->method = dupstr(bm->method);
            if (!o->method)
                return false;
            out->n_blocked_methods++;
        } else {
            out->blocked_methods[id].blocked_ns += bm->blocked_ns;
            out->blocked_methods[id].count += bm->count;
        }
    }
    return true;
}

static rga_status_t
merge_one(merger_t *m, const rga_report_t *in, int64_t shift)
{
    merge_input_t x = {.m = m, .shift = shift};
    x.label_map = calloc(in->n_label_sets + 1, sizeof(long));
    x.frame_map = calloc(in->n_frames + 1, sizeof(long));
    x.stack_map = calloc(in->n_stacks + 1, sizeof(long));
    /* In this order: label sets before what refers to them, frames before stacks. */
    bool ok = x.label_map && x.frame_map && x.stack_map && merge_ractors(&x, in, m->out) &&
              merge_threads(&x, in, m->out) && merge_label_sets(&x, in, m->out) &&
              merge_thread_labels(&x, in, m->out) && merge_frames(&x, in, m->out) && merge_stacks(&x, in, m->out) &&
              merge_label_totals(&x, in, m->out) && merge_samples(&x, in, m->out) &&
              merge_intervals(&x, in, m->out) && merge_edges(&x, in, m->out) && merge_blame(&x, in, m->out) &&
              merge_interval_causes(&x, in, m->out) && merge_blocked_edges(&x, in, m->out) &&
              merge_blocked_methods(&x, in, m->out);
    free(x.k.s);
    free(x.label_map);
    free(x.frame_map);
    free(x.stack_map);
    return ok ? RGA_OK : nomem(m);
}

/* A snapshot series covers disjoint ranges [start, start + duration) of one
 * monotonic clock, and everything it adds up fits together. Reports are
 * named by their position among the inputs (1-based). */
static rga_status_t
check_series(rga_report_t *const *reports, size_t n, rga_error_t *err)
{
    rga_report_sums_t sums = {0};
    for (size_t i = 0; i < n; i++) {
        rga_status_t st = rga_report_add_sums(reports[i], &sums, err);
        if (st != RGA_OK) {
            if (err) {
                char reason[sizeof(err->reason)];
                snprintf(reason, sizeof(reason), "%s", err->reason);
                rga_error_set(err, st, "report %zu: %s (summed over the merged reports)", i + 1, reason);
            }
            return st;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const rga_meta_t *a = &reports[i]->meta;
        for (size_t j = i + 1; j < n; j++) {
            const rga_meta_t *b = &reports[j]->meta;
            /* Both ends fit: the loader checked start + latest time. */
            bool overlap = a->start_monotonic_ns < b->start_monotonic_ns + b->duration_ns &&
                           b->start_monotonic_ns < a->start_monotonic_ns + a->duration_ns;
            if (!overlap)
                continue;
            if (err)
                err->path[0] = '\0';
            if (a->start_monotonic_ns == b->start_monotonic_ns && a->duration_ns == b->duration_ns)
                return rga_error_set(err, RGA_ERR_ARGUMENT,
                                     "reports %zu and %zu cover the same time of process %" PRId64
                                     " (the same report twice?); merging would count it twice",
                                     i + 1, j + 1, a->pid);
            return rga_error_set(err, RGA_ERR_ARGUMENT,
                                 "reports %zu and %zu overlap in time (process %" PRId64 ", monotonic %" PRId64
                                 "+%" PRId64 " ns and %" PRId64 "+%" PRId64
                                 " ns); only a snapshot series (snapshot(clear: true)) can be merged",
                                 i + 1, j + 1, a->pid, a->start_monotonic_ns, a->duration_ns, b->start_monotonic_ns,
                                 b->duration_ns);
        }
    }
    return RGA_OK;
}

rga_status_t
rga_report_merge(rga_report_t *const *reports, size_t n, rga_report_t **result, rga_error_t *err)
{
    *result = NULL;
    if (n == 0)
        return rga_error_set(err, RGA_ERR_ARGUMENT, "no reports to merge");
    merger_t m = {0};
    m.err = err;
    rga_status_t st = RGA_ERR_NOMEM;
    size_t first = 0;
    size_t total_intervals = 0;
    for (size_t i = 0; i < n; i++) {
        if (reports[i]->meta.pid != reports[0]->meta.pid) {
            st = rga_error_set(err, RGA_ERR_ARGUMENT,
                               "cannot merge reports of different processes (pid %" PRId64 " and %" PRId64 ")",
                               reports[0]->meta.pid, reports[i]->meta.pid);
            goto done;
        }
        if (reports[i]->meta.start_monotonic_ns < reports[first]->meta.start_monotonic_ns)
            first = i;
        total_intervals += reports[i]->n_intervals;
    }
    int64_t minor = 0; /* the newest input's: the merged report may carry its keys */
    for (size_t i = 0; i < n; i++)
        if (reports[i]->minor > minor)
            minor = reports[i]->minor;
    st = check_series(reports, n, err);
    if (st != RGA_OK)
        goto done;
    const rga_report_t *base = reports[first];
    m.out = calloc(1, sizeof(rga_report_t));
    m.dict_labels = json_object();
    m.dict_frames = json_object();
    m.dict_stacks = json_object();
    m.dict_totals = json_object();
    m.dict_edges = json_object();
    m.dict_blame = json_object();
    m.dict_blocked_edges = json_object();
    m.dict_blocked_methods = json_object();
    if (!m.out || !m.dict_labels || !m.dict_frames || !m.dict_stacks || !m.dict_totals || !m.dict_edges ||
        !m.dict_blame || !m.dict_blocked_edges || !m.dict_blocked_methods)
        goto nomem;
    rga_report_t *out = m.out;
    out->version = base->version;
    out->minor = minor;
    out->meta = base->meta;
    out->meta.tool = dupstr(base->meta.tool);
    out->meta.tool_version = dupstr(base->meta.tool_version);
    out->meta.ruby_version = dupstr(base->meta.ruby_version);
    out->meta.program = dupstr(base->meta.program);
    out->meta.mode = dupstr(base->meta.mode);
    out->meta.recording = dupstr(base->meta.recording);
    out->meta.sequence = 0;
    out->cause_of_id = malloc(RGA_CAUSE_COUNT);
    if (!out->cause_of_id)
        goto nomem;
    for (int c = 0; c < RGA_CAUSE_COUNT; c++)
        out->cause_of_id[c] = (uint8_t)c;
    out->n_cause_ids = RGA_CAUSE_COUNT;
    if (!out->meta.tool || !out->meta.tool_version || !out->meta.ruby_version || !out->meta.program ||
        !out->meta.mode || !out->meta.recording)
        goto nomem;
    out->intervals = malloc((total_intervals ? total_intervals : 1) * sizeof(rga_interval_t));
    if (!out->intervals)
        goto nomem;
    /* The empty label set is id 0 in every report; make it 0 here too. */
    if (intern(m.dict_labels, "\x1f", 0) < 0 ||
        !grow((void **)&out->label_sets, &m.cap_label_sets, 1, sizeof(rga_label_set_t)))
        goto nomem;
    memset(&out->label_sets[0], 0, sizeof(rga_label_set_t));
    out->label_sets[0].keys = calloc(1, sizeof(char *));
    out->label_sets[0].values = calloc(1, sizeof(char *));
    out->n_label_sets = 1;
    if (!out->label_sets[0].keys || !out->label_sets[0].values)
        goto nomem;
    int64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        const rga_report_t *in = reports[i];
        int64_t shift = in->meta.start_monotonic_ns - base->meta.start_monotonic_ns;
        st = merge_one(&m, in, shift);
        if (st != RGA_OK)
            goto done;
        if (shift + in->meta.duration_ns > end)
            end = shift + in->meta.duration_ns;
        const rga_stats_t *s = &in->stats;
        rga_stats_t *o = &out->stats;
#define SUM_STAT(name, counter) o->name += s->name;
        RPERF_REPORT_STATS(SUM_STAT)
#undef SUM_STAT
    }
    out->meta.duration_ns = end;
    coalesce_threads(out);
    qsort(out->intervals, out->n_intervals, sizeof(rga_interval_t), cmp_interval);
    st = rga_report_validate(out, err);
    if (st == RGA_OK) {
        *result = out;
        m.out = NULL;
    }
    goto done; /* the one exit: dictionaries go, and the result unless it was handed over */
nomem:
    st = nomem(&m);
done:
    json_decref(m.dict_labels);
    json_decref(m.dict_frames);
    json_decref(m.dict_stacks);
    json_decref(m.dict_totals);
    json_decref(m.dict_edges);
    json_decref(m.dict_blame);
    json_decref(m.dict_blocked_edges);
    json_decref(m.dict_blocked_methods);
    rga_report_free(m.out);
    return st;
}
