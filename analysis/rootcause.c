/* rootcause.c — wait chains followed to their root (see rootcause.h).
 *
 * The index groups the intervals per thread (a stable counting sort: each
 * thread's intervals are in time order in the report) and builds each
 * Ractor's holder timeline from its threads' running and GC intervals,
 * clipped so that no two overlap. A walk moves a cursor through the
 * explained span, so its pieces partition it whatever the intervals hold;
 * it recurses into a releaser over the sub-span the release covered.
 */
#include "rootcause.h"
#include "intern.h"
#include "profile_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hold {
    int64_t start, end, label_set;
    uint32_t thread;
    uint8_t gc;
} hold_t;

struct rga_rc_index {
    const rga_report_t *r;
    size_t *first;      /* n_threads + 1 offsets into order */
    size_t *order;      /* interval indices grouped by thread, in time order */
    int32_t *releaser;  /* by interval: releaser's thread index, -1 none */
    hold_t *holds;      /* per Ractor slot, in time order, disjoint */
    size_t *hold_first; /* n_ractors + 1 offsets into holds */
    size_t *hold_n;     /* by Ractor slot: holds kept after clipping */
    int32_t *ractor_of; /* by thread index: Ractor slot, -1 not identified */
    size_t *iv_hint;    /* by thread index: the last interval a walk started at */
    size_t *hold_hint;  /* by Ractor slot: the last holder segment a walk started at */
    uint8_t *on_chain;  /* by thread index: the walk is inside it */
    rga_rc_hop_t hops[RGA_RC_MAX_DEPTH + 2];
    size_t n_hops;
    rga_rc_piece_fn fn;
    void *arg;
    int64_t cycles, cycle_ns, depth, depth_ns;
};

bool
rga_rc_is_wait(const rga_interval_t *iv)
{
    return iv->state == RGA_STATE_GVL_WAIT || (iv->state == RGA_STATE_BLOCKED && RPERF_CAUSE_RELEASABLE(iv->cause));
}

const char *
rga_rc_kind_name(int kind)
{
    static const char *const names[RGA_RC_KIND_COUNT] = {"running", "gc",      "blocked", "handoff", "no_releaser",
                                                         "ractor",  "no_data", "cycle",   "depth"};
    return kind >= 0 && kind < RGA_RC_KIND_COUNT ? names[kind] : "unknown";
}

char *
rga_rc_root_what(const rga_rc_root_t *root, char *buf, size_t size)
{
    switch (root->kind) {
    case RGA_RC_RUNNING: snprintf(buf, size, "running"); break;
    case RGA_RC_GC: snprintf(buf, size, "GC"); break;
    case RGA_RC_BLOCKED: snprintf(buf, size, "blocked: %s", rga_cause_name(root->cause)); break;
    case RGA_RC_HANDOFF: snprintf(buf, size, "hand-off"); break;
    case RGA_RC_NO_RELEASER: snprintf(buf, size, "%s, releaser unknown", rga_cause_name(root->cause)); break;
    case RGA_RC_RACTOR: snprintf(buf, size, "waiting on another Ractor (cut)"); break;
    case RGA_RC_NO_DATA: snprintf(buf, size, "no data"); break;
    case RGA_RC_CYCLE: snprintf(buf, size, "cycle (cut)"); break;
    case RGA_RC_DEPTH: snprintf(buf, size, "chain too deep (cut)"); break;
    default: snprintf(buf, size, "unknown");
    }
    return buf;
}

char *
rga_rc_root_who(const rga_report_t *r, const rga_rc_root_t *root, char *buf, size_t size)
{
    if (root->thread < 0 || (size_t)root->thread >= r->n_threads)
        snprintf(buf, size, "[hand-off]");
    else
        rga_thread_label(r, r->threads[root->thread].seq, buf, size);
    return buf;
}

void
rga_rc_root_key(const rga_rc_root_t *root, int64_t key[RGA_KEY_WIDTH])
{
    key[0] = (int64_t)root->kind | (int64_t)root->cause << 8;
    key[1] = root->thread;
    key[2] = root->label_set;
    key[3] = key[4] = key[5] = 0;
}

/* ---- index ----------------------------------------------------------------------------- */

static int
cmp_hold(const void *a, const void *b)
{
    const hold_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}

/* The first of n entries from lo whose end is after t: the entries are in
 * time order and disjoint, so ends grow. hint is the last answer for these
 * entries: walks cross a thread's timeline in time order, so the answer is
 * usually at the hint or just after it (a gallop from it), and a bisection
 * finds it otherwise. hint is set to the answer. */
#define FIRST_ENDING_AFTER(lo, n, end_of, t, hint, out) \
    do { \
        size_t lo_ = (lo), hi_ = (lo) + (n), h_ = (hint); \
        if (h_ > lo_ && h_ <= hi_ && end_of(h_ - 1) <= (t)) { \
            size_t step_ = 1; \
            lo_ = h_; \
            while (lo_ + step_ < hi_ && end_of(lo_ + step_ - 1) <= (t)) { \
                lo_ += step_; \
                step_ *= 2; \
            } \
            if (lo_ + step_ < hi_) \
                hi_ = lo_ + step_; \
        } else if (h_ >= lo_ && h_ < hi_ && end_of(h_) > (t)) { \
            hi_ = h_ + 1; \
        } \
        while (lo_ < hi_) { \
            size_t mid_ = lo_ + (hi_ - lo_) / 2; \
            if (end_of(mid_) <= (t)) \
                lo_ = mid_ + 1; \
            else \
                hi_ = mid_; \
        } \
        (out) = (hint) = lo_; \
    } while (0)

static int
build_holds(rga_rc_index_t *ix)
{
    const rga_report_t *r = ix->r;
    size_t nr = r->n_ractors;
    ix->hold_first = calloc(nr + 1, sizeof(size_t));
    ix->hold_n = calloc(nr + 1, sizeof(size_t));
    size_t n = 0;
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        n += (iv->state == RGA_STATE_RUNNING || iv->state == RGA_STATE_GC_MARK || iv->state == RGA_STATE_GC_SWEEP) &&
             ix->ractor_of[iv->thread_index] >= 0;
    }
    ix->holds = malloc((n ? n : 1) * sizeof(hold_t));
    if (!ix->hold_first || !ix->hold_n || !ix->holds)
        return -1;
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        int32_t slot = ix->ractor_of[iv->thread_index];
        if ((iv->state == RGA_STATE_RUNNING || iv->state == RGA_STATE_GC_MARK || iv->state == RGA_STATE_GC_SWEEP) &&
            slot >= 0)
            ix->hold_first[slot + 1]++;
    }
    for (size_t s = 0; s < nr; s++)
        ix->hold_first[s + 1] += ix->hold_first[s];
    size_t *fill = calloc(nr ? nr : 1, sizeof(size_t));
    if (!fill)
        return -1;
    for (size_t i = 0; i < r->n_intervals; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        int32_t slot = ix->ractor_of[iv->thread_index];
        bool gc = iv->state == RGA_STATE_GC_MARK || iv->state == RGA_STATE_GC_SWEEP;
        if ((iv->state == RGA_STATE_RUNNING || gc) && slot >= 0)
            ix->holds[ix->hold_first[slot] + fill[slot]++] = (hold_t){iv->start_ns, iv->end_ns, iv->label_set,
                                                                      iv->thread_index, gc};
    }
    free(fill);
    /* In time order (a report is sorted by start; a merged or hand-made one
     * may not be), then clipped so that no two overlap. */
    for (size_t s = 0; s < nr; s++) {
        hold_t *h = &ix->holds[ix->hold_first[s]];
        size_t k = ix->hold_first[s + 1] - ix->hold_first[s], kept = 0;
        bool sorted = true;
        for (size_t i = 1; i < k && sorted; i++)
            sorted = cmp_hold(&h[i - 1], &h[i]) <= 0;
        if (!sorted)
            qsort(h, k, sizeof(*h), cmp_hold);
        int64_t last_end = INT64_MIN;
        for (size_t i = 0; i < k; i++) {
            hold_t x = h[i];
            if (x.start < last_end)
                x.start = last_end;
            if (x.end <= x.start)
                continue;
            h[kept++] = x;
            last_end = x.end;
        }
        ix->hold_n[s] = kept;
    }
    return 0;
}

rga_status_t
rga_rc_index_build(const rga_report_t *r, rga_rc_index_t **out, rga_error_t *err)
{
    *out = NULL;
    rga_rc_index_t *ix = calloc(1, sizeof(*ix));
    if (!ix)
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory indexing the timeline");
    ix->r = r;
    size_t nt = r->n_threads, ni = r->n_intervals;
    ix->first = calloc(nt + 1, sizeof(size_t));
    ix->order = malloc((ni ? ni : 1) * sizeof(size_t));
    ix->releaser = malloc((ni ? ni : 1) * sizeof(int32_t));
    ix->ractor_of = malloc((nt ? nt : 1) * sizeof(int32_t));
    ix->on_chain = calloc(nt ? nt : 1, 1);
    ix->iv_hint = calloc(nt ? nt : 1, sizeof(size_t));
    ix->hold_hint = calloc(r->n_ractors + 1, sizeof(size_t));
    if (!ix->first || !ix->order || !ix->releaser || !ix->ractor_of || !ix->on_chain || !ix->iv_hint ||
        !ix->hold_hint)
        goto nomem;
    for (size_t i = 0; i < ni; i++) {
        ix->first[r->intervals[i].thread_index + 1]++;
        ix->releaser[i] = -1;
    }
    for (size_t t = 0; t < nt; t++)
        ix->first[t + 1] += ix->first[t];
    size_t *fill = calloc(nt ? nt : 1, sizeof(size_t));
    if (!fill)
        goto nomem;
    for (size_t i = 0; i < ni; i++) {
        uint32_t t = r->intervals[i].thread_index;
        ix->order[ix->first[t] + fill[t]++] = i;
    }
    free(fill);
    for (size_t i = 0; i < r->n_interval_causes; i++) {
        const rga_interval_cause_t *c = &r->interval_causes[i];
        long rt = c->releaser > 0 ? rga_report_thread_index(r, c->releaser) : -1;
        if (c->interval < ni)
            ix->releaser[c->interval] = (int32_t)rt;
    }
    for (size_t t = 0; t < nt; t++) {
        ix->ractor_of[t] = -1;
        for (size_t s = 0; s < r->n_ractors; s++)
            if (r->ractors[s].id == r->threads[t].ractor && r->ractors[s].identified)
                ix->ractor_of[t] = (int32_t)s;
    }
    if (build_holds(ix) != 0)
        goto nomem;
    *out = ix;
    return RGA_OK;
nomem:
    rga_rc_index_free(ix);
    return rga_error_set(err, RGA_ERR_NOMEM, "out of memory indexing the timeline");
}

void
rga_rc_index_free(rga_rc_index_t *ix)
{
    if (!ix)
        return;
    free(ix->first);
    free(ix->order);
    free(ix->releaser);
    free(ix->holds);
    free(ix->hold_first);
    free(ix->hold_n);
    free(ix->ractor_of);
    free(ix->on_chain);
    free(ix->iv_hint);
    free(ix->hold_hint);
    free(ix);
}

void
rga_rc_index_cuts(const rga_rc_index_t *ix, int64_t *cycles, int64_t *cycle_ns, int64_t *depth, int64_t *depth_ns)
{
    *cycles = ix->cycles;
    *cycle_ns = ix->cycle_ns;
    *depth = ix->depth;
    *depth_ns = ix->depth_ns;
}

const size_t *
rga_rc_thread_intervals(const rga_rc_index_t *ix, size_t thread_index, size_t *n)
{
    *n = ix->first[thread_index + 1] - ix->first[thread_index];
    return &ix->order[ix->first[thread_index]];
}

/* ---- walks ----------------------------------------------------------------------------- */

static void
emit(rga_rc_index_t *ix, int64_t a, int64_t b, rga_rc_root_t root)
{
    if (b <= a)
        return;
    if (root.kind == RGA_RC_CYCLE) {
        ix->cycles++;
        ix->cycle_ns = rga_weight_add(ix->cycle_ns, b - a);
    } else if (root.kind == RGA_RC_DEPTH) {
        ix->depth++;
        ix->depth_ns = rga_weight_add(ix->depth_ns, b - a);
    }
    rga_rc_piece_t p = {a, b, ix->hops, ix->n_hops, root};
    ix->fn(&p, ix->arg);
}

static rga_rc_root_t
root_of(rga_rc_kind_t kind, int cause, long thread, int64_t label_set)
{
    return (rga_rc_root_t){(uint8_t)kind, (uint8_t)cause, (int32_t)thread, label_set};
}

#define HOLD_END(i) (ix->holds[(i)].end)

/* [a, b) of a GVL wait in Ractor slot: each moment to its holder. */
static void
walk_gvl(rga_rc_index_t *ix, int32_t slot, int64_t a, int64_t b)
{
    size_t lo = ix->hold_first[slot], n = ix->hold_n[slot], k;
    FIRST_ENDING_AFTER(lo, n, HOLD_END, a, ix->hold_hint[slot], k);
    int64_t t = a;
    for (; t < b && k < lo + n; k++) {
        const hold_t *h = &ix->holds[k];
        if (h->start >= b)
            break;
        if (h->start > t) {
            emit(ix, t, h->start, root_of(RGA_RC_HANDOFF, 0, -1, 0));
            t = h->start;
        }
        int64_t e = h->end < b ? h->end : b;
        emit(ix, t, e, root_of(h->gc ? RGA_RC_GC : RGA_RC_RUNNING, 0, h->thread, h->label_set));
        t = e;
    }
    emit(ix, t, b, root_of(RGA_RC_HANDOFF, 0, -1, 0));
}

static void walk_thread(rga_rc_index_t *ix, size_t ti, int64_t a, int64_t b);

/* [a, b) inside interval i of thread ti. */
static void
walk_interval(rga_rc_index_t *ix, size_t ti, size_t i, int64_t a, int64_t b)
{
    const rga_interval_t *iv = &ix->r->intervals[i];
    switch (iv->state) {
    case RGA_STATE_RUNNING: emit(ix, a, b, root_of(RGA_RC_RUNNING, 0, (long)ti, iv->label_set)); return;
    case RGA_STATE_GC_MARK:
    case RGA_STATE_GC_SWEEP: emit(ix, a, b, root_of(RGA_RC_GC, 0, (long)ti, iv->label_set)); return;
    case RGA_STATE_GVL_WAIT: {
        ix->hops[ix->n_hops++] = (rga_rc_hop_t){(uint32_t)ti, RGA_STATE_GVL_WAIT, 0, iv->label_set};
        int32_t slot = ix->ractor_of[ti];
        if (slot >= 0)
            walk_gvl(ix, slot, a, b);
        else /* a Ractor never identified: its holders are not known */
            emit(ix, a, b, root_of(RGA_RC_NO_DATA, 0, (long)ti, iv->label_set));
        ix->n_hops--;
        return;
    }
    default: break;
    }
    int cause = iv->cause;
    if (!RPERF_CAUSE_RELEASABLE(cause)) {
        emit(ix, a, b,
             root_of(cause == RGA_CAUSE_RACTOR ? RGA_RC_RACTOR : RGA_RC_BLOCKED, cause, (long)ti, iv->label_set));
        return;
    }
    int32_t rel = ix->releaser[i];
    if (rel < 0 || (size_t)rel == ti) { /* none known, or the waiter itself: no other thread woke it */
        emit(ix, a, b, root_of(RGA_RC_NO_RELEASER, cause, (long)ti, iv->label_set));
        return;
    }
    ix->hops[ix->n_hops++] = (rga_rc_hop_t){(uint32_t)ti, RGA_STATE_BLOCKED, (uint8_t)cause, iv->label_set};
    if (ix->on_chain[rel])
        emit(ix, a, b, root_of(RGA_RC_CYCLE, 0, rel, 0));
    else if (ix->n_hops > RGA_RC_MAX_DEPTH)
        emit(ix, a, b, root_of(RGA_RC_DEPTH, 0, rel, 0));
    else
        walk_thread(ix, (size_t)rel, a, b);
    ix->n_hops--;
}

#define IV_END(i) (ix->r->intervals[ix->order[(i)]].end_ns)

/* [a, b) of thread ti: its intervals in order, gaps as no data. */
static void
walk_thread(rga_rc_index_t *ix, size_t ti, int64_t a, int64_t b)
{
    ix->on_chain[ti] = 1;
    size_t lo = ix->first[ti], n = ix->first[ti + 1] - lo, k;
    FIRST_ENDING_AFTER(lo, n, IV_END, a, ix->iv_hint[ti], k);
    int64_t t = a;
    for (; t < b && k < lo + n; k++) {
        size_t i = ix->order[k];
        const rga_interval_t *iv = &ix->r->intervals[i];
        if (iv->start_ns >= b)
            break;
        if (iv->start_ns > t) {
            emit(ix, t, iv->start_ns, root_of(RGA_RC_NO_DATA, 0, (long)ti, 0));
            t = iv->start_ns;
        }
        int64_t e = iv->end_ns < b ? iv->end_ns : b;
        walk_interval(ix, ti, i, t, e);
        t = e;
    }
    emit(ix, t, b, root_of(RGA_RC_NO_DATA, 0, (long)ti, 0));
    ix->on_chain[ti] = 0;
}

void
rga_rc_explain(rga_rc_index_t *ix, size_t thread_index, int64_t from, int64_t to, rga_rc_piece_fn fn, void *arg)
{
    ix->fn = fn;
    ix->arg = arg;
    ix->n_hops = 0;
    if (to > from)
        walk_thread(ix, thread_index, from, to);
}

void
rga_rc_explain_interval(rga_rc_index_t *ix, size_t interval, int64_t from, int64_t to, rga_rc_piece_fn fn, void *arg)
{
    const rga_interval_t *iv = &ix->r->intervals[interval];
    int64_t a = iv->start_ns > from ? iv->start_ns : from, b = iv->end_ns < to ? iv->end_ns : to;
    if (b <= a)
        return;
    ix->fn = fn;
    ix->arg = arg;
    ix->n_hops = 0;
    ix->on_chain[iv->thread_index] = 1;
    walk_interval(ix, iv->thread_index, interval, a, b);
    ix->on_chain[iv->thread_index] = 0;
}

/* ---- the tables ---------------------------------------------------------------------------- */

/* An interval's pieces summed by root before they reach the tables: a
 * wait's pieces come back to a few roots (the GVL holders taking turns),
 * and each table add is a hash probe. */
typedef struct pending {
    rga_rc_root_t root;
    int hops; /* 0 own, 1 direct, 2 through another waiting thread */
    int64_t ns;
} pending_t;

#define PENDING 16

typedef struct collect {
    const rga_report_t *r;
    rga_rootcauses_t *rc;
    rga_key_table_t labels, flows;
    bool edges;    /* fill rc->edges too */
    size_t waiter; /* thread index of the explained interval */
    int64_t label; /* its label set */
    bool is_wait;  /* the interval waits on another thread */
    int wait;      /* then: -1 GVL, else its blocked cause */
    pending_t pending[PENDING];
    size_t n_pending;
    bool failed;
} collect_t;

static void
flush_pending(collect_t *c)
{
    for (size_t i = 0; i < c->n_pending; i++) {
        const pending_t *x = &c->pending[i];
        int64_t kc = (int64_t)x->root.kind | (int64_t)x->root.cause << 8;
        int64_t key[RGA_KEY_WIDTH] = {kc | (int64_t)(x->hops == 0) << 16, x->root.thread, c->label, 0, 0, 0};
        if (rga_key_table_add(&c->labels, key, x->ns, 0) < 0)
            c->failed = true;
        if (!c->is_wait)
            continue;
        int64_t seq = c->r->threads[c->waiter].seq, chain = x->hops == 2 ? x->ns : 0;
        int64_t flow[RGA_KEY_WIDTH] = {kc, x->root.thread,
                                       -1, seq,
                                       -1, c->wait < 0 ? RGA_STATE_GVL_WAIT : RGA_STATE_BLOCKED};
        int64_t part[RGA_KEY_WIDTH] = {kc, x->root.thread, x->root.label_set, 0, 0, 0};
        if (rga_key_table_add(&c->flows, flow, x->ns, chain) < 0 ||
            rga_key_table_add(&c->rc->parts, part, x->ns, 0) < 0)
            c->failed = true;
        int64_t edge[RGA_KEY_WIDTH] = {kc, x->root.thread, x->root.label_set, seq, c->label, c->wait};
        if (c->edges && rga_key_table_add(&c->rc->edges, edge, x->ns, chain) < 0)
            c->failed = true;
    }
    c->n_pending = 0;
}

static void
on_piece(const rga_rc_piece_t *p, void *arg)
{
    collect_t *c = arg;
    int hops = p->n_hops < 2 ? (int)p->n_hops : 2;
    for (size_t i = 0; i < c->n_pending; i++) {
        pending_t *x = &c->pending[i];
        if (x->hops == hops && x->root.kind == p->root.kind && x->root.cause == p->root.cause &&
            x->root.thread == p->root.thread && x->root.label_set == p->root.label_set) {
            x->ns = rga_weight_add(x->ns, p->end_ns - p->start_ns);
            return;
        }
    }
    if (c->n_pending == PENDING)
        flush_pending(c);
    c->pending[c->n_pending++] = (pending_t){p->root, hops, p->end_ns - p->start_ns};
}

static rga_rc_root_t
root_from_key(const int64_t *key)
{
    return (rga_rc_root_t){(uint8_t)(key[0] & 0xff), (uint8_t)((key[0] >> 8) & 0xff), (int32_t)key[1], -1};
}

static int
cmp_root_order(const rga_rc_root_t *x, const rga_rc_root_t *y)
{
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (int)x->cause - (int)y->cause;
}

static int
cmp_total(const void *a, const void *b)
{
    const rga_rc_total_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return cmp_root_order(&x->root, &y->root);
}

static int
cmp_share(const void *a, const void *b)
{
    const rga_rc_share_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    if (x->own != y->own)
        return x->own ? -1 : 1;
    if (x->wait_state != y->wait_state)
        return x->wait_state - y->wait_state;
    return cmp_root_order(&x->root, &y->root);
}

static int
cmp_flow(const void *a, const void *b)
{
    const rga_rc_share_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return cmp_share(a, b);
}

static int
cmp_label(const void *a, const void *b)
{
    const rga_rc_label_t *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? 1 : -1;
    return (x->label_set > y->label_set) - (x->label_set < y->label_set);
}

/* The flows into per-waiter shares, and the roots folded over waiters. */
static int
finish_flows(collect_t *c)
{
    rga_rootcauses_t *rc = c->rc;
    rga_key_table_t roots;
    rga_key_table_init(&roots);
    int failed = 0;
    for (size_t i = 0; i < c->flows.n && !failed; i++) {
        const rga_key_entry_t *e = &c->flows.entries[i];
        int64_t root[RGA_KEY_WIDTH] = {e->key[0], e->key[1], -1, 0, 0, 0};
        failed = rga_key_table_add(&roots, root, e->sum[0], e->sum[1]) < 0;
        rc->waited_ns = rga_weight_add(rc->waited_ns, e->sum[0]);
    }
    rc->flows = failed ? NULL : calloc(c->flows.n + 1, sizeof(*rc->flows));
    rc->roots = failed ? NULL : calloc(roots.n + 1, sizeof(*rc->roots));
    if (rc->flows && rc->roots) {
        for (size_t i = 0; i < c->flows.n; i++) {
            const rga_key_entry_t *e = &c->flows.entries[i];
            rc->flows[i] = (rga_rc_share_t){e->key[3], (int)e->key[5], false, root_from_key(e->key), e->sum[0]};
        }
        rc->n_flows = c->flows.n;
        qsort(rc->flows, rc->n_flows, sizeof(*rc->flows), cmp_flow);
        for (size_t i = 0; i < roots.n; i++)
            rc->roots[i] = (rga_rc_total_t){root_from_key(roots.entries[i].key), roots.entries[i].sum[0],
                                            roots.entries[i].sum[1]};
        rc->n_roots = roots.n;
        qsort(rc->roots, rc->n_roots, sizeof(*rc->roots), cmp_total);
    }
    rga_key_table_free(&roots);
    return rc->flows && rc->roots ? 0 : -1;
}

/* labels → label sets with their time and shares, largest first. */
static int
finish_labels(collect_t *c)
{
    rga_rootcauses_t *rc = c->rc;
    rc->label_shares = calloc(c->labels.n + 1, sizeof(*rc->label_shares));
    if (!rc->label_shares)
        return -1;
    for (size_t i = 0; i < c->labels.n; i++) {
        const rga_key_entry_t *e = &c->labels.entries[i];
        rc->label_shares[i] = (rga_rc_share_t){e->key[2], -1, (e->key[0] >> 16) != 0, root_from_key(e->key),
                                               e->sum[0]};
    }
    rc->n_label_shares = c->labels.n;
    qsort(rc->label_shares, rc->n_label_shares, sizeof(*rc->label_shares), cmp_share);
    size_t n = 0;
    for (size_t i = 0; i < rc->n_label_shares; i++)
        n += i == 0 || rc->label_shares[i].key != rc->label_shares[i - 1].key;
    rc->labels = calloc(n + 1, sizeof(*rc->labels));
    if (!rc->labels)
        return -1;
    for (size_t i = 0; i < rc->n_label_shares; i++) {
        const rga_rc_share_t *s = &rc->label_shares[i];
        if (i == 0 || s->key != rc->label_shares[i - 1].key)
            rc->labels[rc->n_labels++] = (rga_rc_label_t){s->key, 0, i, 0};
        rga_rc_label_t *l = &rc->labels[rc->n_labels - 1];
        l->time_ns = rga_weight_add(l->time_ns, s->ns);
        l->n++;
    }
    qsort(rc->labels, rc->n_labels, sizeof(*rc->labels), cmp_label);
    return 0;
}

rga_status_t
rga_rootcauses_build(const rga_report_t *r, const rga_filter_t *filter, rga_rootcauses_t *rc, rga_error_t *err)
{
    return rga_rootcauses_build_flags(r, filter, 0, rc, err);
}

rga_status_t
rga_rootcauses_build_flags(const rga_report_t *r, const rga_filter_t *filter, unsigned flags, rga_rootcauses_t *rc,
                           rga_error_t *err)
{
    memset(rc, 0, sizeof(*rc));
    rc->report = r;
    rga_key_table_init(&rc->parts);
    rga_key_table_init(&rc->edges);
    rc->available = r->n_intervals > 0;
    if (!rc->available)
        return RGA_OK;
    rga_rc_index_t *ix;
    rga_status_t st = rga_rc_index_build(r, &ix, err);
    if (st != RGA_OK)
        return st;
    collect_t c = {.r = r, .rc = rc, .edges = (flags & RGA_RC_EDGES) != 0};
    rga_key_table_init(&c.labels);
    rga_key_table_init(&c.flows);
    /* In the report's order (by start): the walks then move forward in time
     * together, so the timelines they read stay in the caches (three times
     * faster than thread by thread on a 1-million-interval report). */
    for (size_t i = 0; i < r->n_intervals && !c.failed; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        if (filter &&
            (!rga_filter_thread_index(filter, iv->thread_index) || !rga_filter_label_set(filter, r, iv->label_set)))
            continue;
        c.waiter = iv->thread_index;
        c.label = iv->label_set;
        c.is_wait = rga_rc_is_wait(iv);
        c.wait = iv->state == RGA_STATE_GVL_WAIT ? -1 : iv->cause;
        rga_rc_explain_interval(ix, i, INT64_MIN, INT64_MAX, on_piece, &c);
        flush_pending(&c);
    }
    rga_rc_index_cuts(ix, &rc->cycles, &rc->cycle_ns, &rc->depth_cuts, &rc->depth_ns);
    rga_rc_index_free(ix);
    if (c.failed || finish_flows(&c) != 0 || finish_labels(&c) != 0) {
        rga_key_table_free(&c.labels);
        rga_key_table_free(&c.flows);
        rga_rootcauses_free(rc);
        return rga_error_set(err, RGA_ERR_NOMEM, "out of memory following wait chains");
    }
    rga_key_table_free(&c.labels);
    rga_key_table_free(&c.flows);
    return RGA_OK;
}

void
rga_rootcauses_free(rga_rootcauses_t *rc)
{
    free(rc->roots);
    free(rc->flows);
    free(rc->labels);
    free(rc->label_shares);
    rga_key_table_free(&rc->parts);
    rga_key_table_free(&rc->edges);
    memset(rc, 0, sizeof(*rc));
}

/* ---- stacks ------------------------------------------------------------------------------ */

/* A sample's class: 0 running, 1 GC, 2 + cause blocked; -1 GVL wait (never a root). */
enum { CLASS_RUNNING = 0, CLASS_GC = 1, CLASS_BLOCKED = 2 };

struct rga_rc_stacks {
    const rga_report_t *r;
    size_t *order; /* sample indices by (thread, class, label set) */
    int32_t *klass;
    size_t n;
};

static const rga_rc_stacks_t *sort_stacks; /* qsort has no context argument */

static int
cmp_sample(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const rga_sample_t *x = &sort_stacks->r->samples[i], *y = &sort_stacks->r->samples[j];
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (sort_stacks->klass[i] != sort_stacks->klass[j])
        return sort_stacks->klass[i] < sort_stacks->klass[j] ? -1 : 1;
    if (x->label_set != y->label_set)
        return x->label_set < y->label_set ? -1 : 1;
    return (i > j) - (i < j);
}

/* The cause of each frame label that blocked_methods names (first row wins). */
static int
frame_causes(const rga_report_t *r, int8_t *cause_of_frame)
{
    rga_intern_t names;
    rga_intern_init(&names);
    uint8_t *cause = malloc(r->n_blocked_methods + 1);
    if (!cause)
        return -1;
    for (size_t i = 0; i < r->n_blocked_methods; i++) {
        size_t id = rga_intern(&names, r->blocked_methods[i].method);
        if (id == (size_t)-1)
            goto fail;
        if (id + 1 == names.n)
            cause[id] = r->blocked_methods[i].cause;
    }
    size_t known = names.n;
    for (size_t f = 0; f < r->n_frames; f++) {
        size_t id = known ? rga_intern(&names, r->frames[f].label) : (size_t)-2;
        if (id == (size_t)-1)
            goto fail;
        cause_of_frame[f] = (int8_t)(id < known ? cause[id] : RGA_CAUSE_UNKNOWN);
    }
    free(cause);
    rga_intern_free(&names);
    return 0;
fail:
    free(cause);
    rga_intern_free(&names);
    return -1;
}

rga_status_t
rga_rc_stacks_build(const rga_report_t *r, rga_rc_stacks_t **out, rga_error_t *err)
{
    *out = NULL;
    rga_rc_stacks_t *s = calloc(1, sizeof(*s));
    int8_t *cause_of_frame = malloc(r->n_frames ? r->n_frames : 1);
    if (!s || !cause_of_frame)
        goto nomem;
    s->r = r;
    s->order = malloc((r->n_samples ? r->n_samples : 1) * sizeof(size_t));
    s->klass = malloc((r->n_samples ? r->n_samples : 1) * sizeof(int32_t));
    if (!s->order || !s->klass || frame_causes(r, cause_of_frame) != 0)
        goto nomem;
    for (size_t i = 0; i < r->n_samples; i++) {
        const rga_sample_t *sm = &r->samples[i];
        int32_t k;
        switch (rga_stack_state(r, sm->stack)) {
        case RGA_SAMPLE_GC: k = CLASS_GC; break;
        case RGA_SAMPLE_GVL_WAIT: k = -1; break;
        case RGA_SAMPLE_BLOCKED: {
            const rga_stack_t *st = &r->stacks[sm->stack];
            int64_t f = st->depth > 1 ? r->stack_frames[st->first + 1] : -1;
            k = CLASS_BLOCKED + (f >= 0 ? cause_of_frame[f] : RGA_CAUSE_UNKNOWN);
            break;
        }
        default: k = CLASS_RUNNING;
        }
        s->klass[i] = k;
        if (k >= 0)
            s->order[s->n++] = i;
    }
    sort_stacks = s;
    qsort(s->order, s->n, sizeof(size_t), cmp_sample);
    sort_stacks = NULL;
    free(cause_of_frame);
    *out = s;
    return RGA_OK;
nomem:
    free(cause_of_frame);
    rga_rc_stacks_free(s);
    return rga_error_set(err, RGA_ERR_NOMEM, "out of memory grouping the samples");
}

void
rga_rc_stacks_free(rga_rc_stacks_t *s)
{
    if (!s)
        return;
    free(s->order);
    free(s->klass);
    free(s);
}

/* -1: before, 0: in, 1: after (thread, klass, and label_set unless any). */
static int
sample_vs(const rga_rc_stacks_t *s, size_t k, int64_t thread, int32_t klass, int64_t label_set, bool any)
{
    const rga_sample_t *x = &s->r->samples[s->order[k]];
    if (x->thread != thread)
        return x->thread < thread ? -1 : 1;
    if (s->klass[s->order[k]] != klass)
        return s->klass[s->order[k]] < klass ? -1 : 1;
    if (!any && x->label_set != label_set)
        return x->label_set < label_set ? -1 : 1;
    return 0;
}

/* [*lo, *hi) of the samples matching. */
static void
sample_range(const rga_rc_stacks_t *s, int64_t thread, int32_t klass, int64_t label_set, bool any, size_t *lo,
             size_t *hi)
{
    size_t a = 0, b = s->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (sample_vs(s, m, thread, klass, label_set, any) < 0)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    b = s->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (sample_vs(s, m, thread, klass, label_set, any) <= 0)
            a = m + 1;
        else
            b = m;
    }
    *hi = a;
}

bool
rga_rc_stacks_split(const rga_rc_stacks_t *s, const rga_rc_root_t *root, int64_t ns, rga_rc_stack_fn fn, void *arg)
{
    int32_t klass;
    switch (root->kind) {
    case RGA_RC_RUNNING: klass = CLASS_RUNNING; break;
    case RGA_RC_GC: klass = CLASS_GC; break;
    case RGA_RC_BLOCKED:
    case RGA_RC_NO_RELEASER:
    case RGA_RC_RACTOR: klass = CLASS_BLOCKED + root->cause; break;
    default: return false;
    }
    if (root->thread < 0 || (size_t)root->thread >= s->r->n_threads || ns <= 0)
        return false;
    int64_t seq = s->r->threads[root->thread].seq;
    size_t lo, hi;
    sample_range(s, seq, klass, root->label_set, root->label_set < 0, &lo, &hi);
    if (lo == hi)
        sample_range(s, seq, klass, 0, true, &lo, &hi);
    long double total = 0;
    size_t largest = lo;
    for (size_t k = lo; k < hi; k++) {
        const rga_sample_t *x = &s->r->samples[s->order[k]];
        total += (long double)x->weight_ns;
        if (x->weight_ns > s->r->samples[s->order[largest]].weight_ns)
            largest = k;
    }
    if (lo == hi || total <= 0)
        return false;
    /* Each stack's part rounded down, the rest to the heaviest: exact sum. */
    int64_t given = 0, rest_part = 0;
    for (size_t k = lo; k < hi; k++) {
        const rga_sample_t *x = &s->r->samples[s->order[k]];
        int64_t part = (int64_t)((long double)ns * (long double)x->weight_ns / total);
        if (part > ns - given)
            part = ns - given;
        given += part;
        if (k == largest)
            rest_part = part;
        else if (part > 0)
            fn(x->stack, part, arg);
    }
    fn(s->r->samples[s->order[largest]].stack, rest_part + (ns - given), arg);
    return true;
}

typedef struct stack_sum {
    rga_key_table_t by_stack;
    bool failed;
} stack_sum_t;

static void
add_stack(int64_t stack, int64_t ns, void *arg)
{
    stack_sum_t *ss = arg;
    int64_t key[RGA_KEY_WIDTH] = {stack, 0, 0, 0, 0, 0};
    if (rga_key_table_add(&ss->by_stack, key, ns, 0) < 0)
        ss->failed = true;
}

static int
cmp_stack_ns(const void *a, const void *b)
{
    const rga_rc_stack_t *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return (x->stack > y->stack) - (x->stack < y->stack);
}

long
rga_rc_top_stacks(const rga_key_table_t *parts, const rga_rc_stacks_t *s, const rga_rc_root_t *root,
                  rga_rc_stack_t *out, size_t capacity)
{
    stack_sum_t ss = {.failed = false};
    rga_key_table_init(&ss.by_stack);
    int64_t want[RGA_KEY_WIDTH];
    rga_rc_root_key(root, want);
    for (size_t i = 0; i < parts->n && !ss.failed; i++) {
        const rga_key_entry_t *e = &parts->entries[i];
        if (e->key[0] != want[0] || e->key[1] != want[1])
            continue;
        rga_rc_root_t part = *root;
        part.label_set = e->key[2];
        rga_rc_stacks_split(s, &part, e->sum[0], add_stack, &ss);
    }
    rga_rc_stack_t *all = ss.failed ? NULL : malloc((ss.by_stack.n + 1) * sizeof(*all));
    if (!all) {
        rga_key_table_free(&ss.by_stack);
        return -1;
    }
    for (size_t i = 0; i < ss.by_stack.n; i++)
        all[i] = (rga_rc_stack_t){ss.by_stack.entries[i].key[0], ss.by_stack.entries[i].sum[0]};
    qsort(all, ss.by_stack.n, sizeof(*all), cmp_stack_ns);
    size_t n = ss.by_stack.n < capacity ? ss.by_stack.n : capacity;
    memcpy(out, all, n * sizeof(*out));
    free(all);
    rga_key_table_free(&ss.by_stack);
    return (long)n;
}
