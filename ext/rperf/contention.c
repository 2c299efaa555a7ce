/*
 * contention.c — a profile's lifecycle (start, pause, resume, stop), the
 * flush of each thread's time into its label set's totals, and
 * report-interval bookkeeping (cuts, baselines, counters). The events are
 * contention_events.c's.
 *
 * Pause and resume follow contention_events.c's accounting rule: a
 * thread's open state ends at the pause, and restarts as blocked.
 *
 * This file does NOT handle hook events, does NOT build Ruby objects and
 * does NOT call the sampler.
 */
#include "contention.h"
#include "cause_table.h"
#include "clock.h"
#include "native_tid.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* lifecycle                                                           */

static int
recording_mode(void)
{
    return rperf_run.cfg.counters_only ? RPERF_RECORDING_COUNTERS : RPERF_RECORDING_FULL;
}

int
rperf_contention_start(const rperf_contention_config_t *cfg, int paused, const char **err)
{
    if (rperf_run.active) {
        *err = "profiler state already exists";
        return -1;
    }
    rperf_run.cfg = *cfg;
    if (cfg->counters_only)
        rperf_run.cfg.timeline = 0;
    if (rperf_cause_table_open() < 0) {
        *err = "cannot allocate the blocked-cause table";
        return -1;
    }
    if (rperf_slot_pool_create(cfg->max_threads, err) < 0) {
        rperf_cause_table_close();
        return -1;
    }
    /* Counters mode records no edges: the smallest table serves its cuts. */
    if (rperf_edges_create(cfg->counters_only ? 1 : cfg->max_edges, rperf_contention_edge_lost) < 0) {
        rperf_slot_pool_destroy();
        rperf_cause_table_close();
        *err = "cannot allocate the wait-edge table";
        return -1;
    }
    rperf_ractor_table_open(cfg->timeline, cfg->max_intervals > 0 ? (uint64_t)cfg->max_intervals : 0);
    int64_t now = rperf_now_ns();
    rperf_run.active = 1;
    rperf_run.forked_child = 0;
    rperf_run.epoch++;
    rperf_run.clip_ns = now;
    rperf_run.paused_at_ns = paused ? now : 0;
    rperf_run.paused_ns = 0;
    rperf_run.edge_cut_ns = now;
    rperf_run.release_cut_ns = now;
    rperf_run.interval_start_ns = now;
    rperf_run.interval_start_realtime_ns = rperf_realtime_ns();
    rperf_run.sequence = 0;
    rperf_run.orphan_events = rperf_run.unattributed_intervals = rperf_run.coalesced = 0;
    rperf_run.timed_events = rperf_run.timed_ns = 0;
    rperf_run.dropped_releases = 0;
    rperf_run.cut_phase = 0;
    return 0;
}

void
rperf_contention_begin_recording(VALUE caller, rperf_ractor_slot_t *main_ractor)
{
    int64_t now = rperf_run.interval_start_ns;
    main_ractor->main = 1;
    /* The caller runs: it holds the GVL right now. */
    rperf_thread_slot_t *slot = rperf_slot_claim(caller, now);
    if (slot) {
        slot->state = RPERF_STATE_RUNNING;
        slot->ractor = main_ractor;
        /* As a RESUMED would: the sampler's ticks find the holder by it. */
        slot->native_id = (int64_t)rperf_native_tid();
        __atomic_store_n(&main_ractor->holder_seq, slot->seq, __ATOMIC_RELEASE);
        rperf_contention_push_holder(main_ractor, now, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    }
    __atomic_store_n(&rperf_run.recording, rperf_run.paused_at_ns ? RPERF_RECORDING_OFF : recording_mode(),
                     __ATOMIC_RELEASE);
}

void
rperf_contention_destroy(void)
{
    __atomic_store_n(&rperf_run.recording, 0, __ATOMIC_RELEASE);
    rperf_ractor_table_close();
    rperf_slot_pool_destroy();
    rperf_edges_destroy();
    rperf_cause_table_close();
    pthread_mutex_lock(&rperf_run.label_mutex);
    rperf_label_totals_free(&rperf_run.labels);
    pthread_mutex_unlock(&rperf_run.label_mutex);
    rperf_run.active = 0;
    rperf_run.forked_child = 0;
}

void
rperf_contention_after_fork_child(void)
{
    /* Only flags: the child may not take locks other threads held. The
     * stale state is destroyed on the next Ruby-level call. */
    __atomic_store_n(&rperf_run.recording, 0, __ATOMIC_RELAXED);
    rperf_run.label_mutex = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    if (rperf_run.active) {
        rperf_run.forked_child = 1;
        rperf_slot_pool_abandon();
    }
}

void
rperf_contention_stop_recording(void)
{
    __atomic_store_n(&rperf_run.recording, 0, __ATOMIC_SEQ_CST);
}

void
rperf_contention_pause(int64_t now_ns)
{
    if (!rperf_run.active || rperf_run.paused_at_ns)
        return;
    __atomic_store_n(&rperf_run.recording, 0, __ATOMIC_RELEASE);
    rperf_run.paused_at_ns = now_ns;
}

/* Resume helper: threads of the caller's Ractor other than the caller do
 * not hold its GVL now, whatever state they had when the pause began (the
 * hooks did not follow them while paused). Like threads present at start,
 * they restart as blocked; a RESUMED without READY then proves a wait. */
struct resume_reset {
    rperf_thread_slot_t *caller;
    rperf_ractor_slot_t *ractor;
    int64_t now_ns;
};

static void
reset_one_after_pause(rperf_thread_slot_t *slot, void *arg)
{
    const struct resume_reset *rr = arg;
    if (slot == rr->caller || slot->exited)
        return;
    if (RPERF_LOAD(slot->ractor) != rr->ractor)
        return;
    rperf_slot_write_begin(slot);
    RPERF_STORE(slot->state, RPERF_STATE_BLOCKED);
    RPERF_STORE(slot->state_since_ns, rr->now_ns);
    RPERF_STORE(slot->timeline_from_ns, rr->now_ns);
    RPERF_STORE(slot->ready_ns, 0);
    /* What it waits in now was not seen: unknown. */
    rperf_contention_switch_method(slot, 0);
    RPERF_STORE(slot->ready_releaser, 0);
    rperf_slot_write_end(slot);
}

static void effective_totals(const rperf_slot_view_t *v, int64_t now, int64_t out[RPERF_STATE_COUNT]);
static void effective_methods(const rperf_slot_view_t *v, int64_t now, int64_t out[RPERF_SLOT_BLOCK_METHODS]);

/* Resume helper, before the clip moves: the state a thread of the caller's
 * Ractor had open at the pause ends at the pause, as accounting_now ends
 * it for every reader while paused. Charged here, its recorded part
 * [since, pause) stays in the thread's totals, its timeline and its wait
 * edges; dropped by the re-base, it would take back time that a report or
 * a label flush had already counted from the views (a report cut while the
 * state was open, a label switch), and the thread's next report and label
 * rows would lose as much of what came after the resume. */
static void
end_state_at_pause(rperf_thread_slot_t *slot, void *arg)
{
    const struct resume_reset *rr = arg;
    if (slot->exited || RPERF_LOAD(slot->ractor) != rr->ractor)
        return;
    int state = slot->state;
    if (state < 0 || state >= RPERF_STATE_COUNT)
        return;
    int64_t to = rperf_run.paused_at_ns;
    int64_t ready = slot->ready_ns;
    int64_t wait_from = rperf_slot_clipped_since(slot);
    int64_t blocked_from = slot->timeline_from_ns;
    rperf_ractor_slot_t *r = rr->ractor;
    rperf_slot_write_begin(slot);
    rperf_slot_charge(slot, state, to, state);
    int64_t cut = __atomic_load_n(&rperf_run.edge_cut_ns, __ATOMIC_RELAXED);
    int64_t edge_from = wait_from > cut ? wait_from : cut;
    if (state == RPERF_STATE_GVL_WAIT && !rperf_run.cfg.counters_only && edge_from < to) {
        /* In the write section, as at RESUMED: a report whose view shows
         * the wait ended finds it in the ring. */
        rperf_wait_defer(r->ring, rperf_contention_epoch(), slot->seq, slot->label_set_id, edge_from, to);
    }
    rperf_slot_write_end(slot);
    if (state == RPERF_STATE_GVL_WAIT && ready > blocked_from)
        rperf_contention_emit_interval(slot, r, RPERF_STATE_BLOCKED, ready);
    rperf_contention_emit_interval(slot, r, state, to);
}

/* Resume helper for threads of other Ractors, whose slots their own hooks
 * may be writing: their open state is not charged, so the time from its
 * start to the pause leaves their effective totals when the clip moves.
 * Baselines that counted it come down with it (they are the builder's and
 * the label table's, written with the main Ractor's GVL), or the thread's
 * next report and label rows would lose as much. */
static void
lower_bases_to_totals(rperf_thread_slot_t *slot, void *arg)
{
    const struct resume_reset *rr = arg;
    if (RPERF_LOAD(slot->ractor) == rr->ractor)
        return;
    rperf_slot_view_t v;
    rperf_slot_read(slot, &v);
    int64_t eff[RPERF_STATE_COUNT];
    int64_t meff[RPERF_SLOT_BLOCK_METHODS];
    effective_totals(&v, rr->now_ns, eff);
    effective_methods(&v, rr->now_ns, meff);
    for (int i = 0; i < RPERF_STATE_COUNT; i++) {
        if (slot->base_totals[i] > eff[i])
            slot->base_totals[i] = eff[i];
        if (slot->label_base[i] > eff[i])
            slot->label_base[i] = eff[i];
    }
    for (int i = 0; i < RPERF_SLOT_BLOCK_METHODS; i++) {
        if (slot->base_method_ns[i] > meff[i])
            slot->base_method_ns[i] = meff[i];
        if (slot->label_base_method_ns[i] > meff[i])
            slot->label_base_method_ns[i] = meff[i];
    }
}

void
rperf_contention_resume(VALUE caller, rperf_ractor_slot_t *r, int64_t now_ns)
{
    if (!rperf_run.active || !rperf_run.paused_at_ns)
        return;
    if (r) {
        struct resume_reset rr = {NULL, r, now_ns};
        rperf_slots_foreach(end_state_at_pause, &rr);
    }
    if (rperf_run.paused_at_ns > rperf_run.interval_start_ns)
        rperf_run.paused_ns += now_ns - rperf_run.paused_at_ns;
    else
        rperf_run.paused_ns += now_ns - rperf_run.interval_start_ns;
    rperf_run.paused_at_ns = 0;
    __atomic_store_n(&rperf_run.clip_ns, now_ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&rperf_run.epoch, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&rperf_run.edge_cut_ns, now_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&rperf_run.release_cut_ns, now_ns, __ATOMIC_RELAXED);

    rperf_thread_slot_t *slot = rperf_slot_claim(caller, now_ns);
    if (slot) {
        /* The caller is running now; whatever it was before is paused time. */
        rperf_slot_write_begin(slot);
        RPERF_STORE(slot->state, RPERF_STATE_RUNNING);
        RPERF_STORE(slot->state_since_ns, now_ns);
        RPERF_STORE(slot->timeline_from_ns, now_ns);
        RPERF_STORE(slot->ready_ns, 0);
        RPERF_STORE(slot->native_id, (int64_t)rperf_native_tid());
        rperf_slot_write_end(slot);
        if (r)
            __atomic_store_n(&r->holder_seq, slot->seq, __ATOMIC_RELEASE);
        rperf_contention_push_holder(r, now_ns, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    }
    struct resume_reset rr = {slot, r, now_ns};
    if (r)
        rperf_slots_foreach(reset_one_after_pause, &rr);
    pthread_mutex_lock(&rperf_run.label_mutex);
    rperf_slots_foreach(lower_bases_to_totals, &rr);
    pthread_mutex_unlock(&rperf_run.label_mutex);
    __atomic_store_n(&rperf_run.recording, recording_mode(), __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

/* Accounting stops while paused: the open state ends at the pause. */
static int64_t
accounting_now(int64_t now)
{
    if (rperf_run.paused_at_ns && rperf_run.paused_at_ns < now)
        return rperf_run.paused_at_ns;
    return now;
}

int64_t
rperf_contention_accounting_end(int64_t now)
{
    return accounting_now(now);
}

/* The time of the state open in the view, up to `now`. */
static int64_t
open_span(const rperf_slot_view_t *v, int64_t now)
{
    if (v->exited || v->state < 0 || v->state >= RPERF_STATE_COUNT)
        return 0;
    int64_t since = v->state_since_ns;
    int64_t clip = rperf_contention_clip_ns();
    if (since < clip)
        since = clip;
    int64_t d = accounting_now(now) - since;
    return d > 0 ? d : 0;
}

static void
effective_totals(const rperf_slot_view_t *v, int64_t now, int64_t out[RPERF_STATE_COUNT])
{
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        out[i] = v->totals[i];
    int64_t d = open_span(v, now);
    if (d > 0)
        out[v->state] += d;
}

/* Per method like effective_totals: the open blocked span counts. */
static void
effective_methods(const rperf_slot_view_t *v, int64_t now, int64_t out[RPERF_SLOT_BLOCK_METHODS])
{
    for (int i = 0; i < RPERF_SLOT_BLOCK_METHODS; i++)
        out[i] = i < v->nmethods ? v->methods[i].ns : 0;
    if (v->state == RPERF_STATE_BLOCKED && v->block_method >= 0 && v->block_method < RPERF_SLOT_BLOCK_METHODS)
        out[v->block_method] += open_span(v, now);
}

void
rperf_slot_methods_now(const rperf_slot_view_t *view, int64_t now, int64_t ns[RPERF_SLOT_BLOCK_METHODS])
{
    effective_methods(view, now, ns);
}

void
rperf_slot_report_methods(const rperf_thread_slot_t *slot, int64_t cut_ns, const rperf_slot_view_t *view,
                          rperf_slot_cause_delta_t *out)
{
    effective_methods(view, cut_ns, out->method_ns);
    for (int i = 0; i < RPERF_SLOT_BLOCK_METHODS; i++) {
        out->method_ns[i] -= slot->base_method_ns[i];
        if (out->method_ns[i] < 0)
            out->method_ns[i] = 0;
        out->method_count[i] = i < view->nmethods ? view->methods[i].count - slot->base_method_count[i] : 0;
    }
    for (int i = 0; i < RPERF_SLOT_RELEASES; i++) {
        if (i >= view->nreleases) {
            out->release_ns[i] = 0;
            out->release_count[i] = 0;
            continue;
        }
        out->release_ns[i] = view->releases[i].ns - slot->base_release_ns[i];
        if (out->release_ns[i] < 0)
            out->release_ns[i] = 0;
        out->release_count[i] = view->releases[i].count - slot->base_release_count[i];
    }
}

int64_t
rperf_slot_view_counted_to(const rperf_slot_view_t *view, int64_t cut_ns)
{
    if (view->exited)
        return view->last_seen_ns;
    return view->state_since_ns > cut_ns ? view->state_since_ns : cut_ns;
}

void
rperf_slot_view_totals_now(const rperf_slot_view_t *view, int64_t now, int64_t totals[RPERF_STATE_COUNT])
{
    effective_totals(view, now, totals);
}

void
rperf_slot_report_totals(const rperf_thread_slot_t *slot, int64_t cut_ns, const rperf_slot_view_t *view,
                         int64_t delta[RPERF_STATE_COUNT], uint64_t *acquisitions, uint64_t *waits)
{
    effective_totals(view, cut_ns, delta);
    for (int i = 0; i < RPERF_STATE_COUNT; i++) {
        delta[i] -= slot->base_totals[i];
        if (delta[i] < 0)
            delta[i] = 0;
    }
    *acquisitions = view->acquisitions - slot->base_acquisitions;
    *waits = view->waits - slot->base_waits;
}

/* ------------------------------------------------------------------ */
/* labels                                                              */

/* Mutex held. A method whose cause is not resolved yet (first seen since
 * the caller's rperf_cause_table_resolve_all) goes to "unknown". The view
 * it read goes to *view when view is not NULL. */
static void
flush_slot_label(rperf_thread_slot_t *slot, int64_t now, rperf_slot_view_t *view)
{
    int64_t eff[RPERF_STATE_COUNT];
    int64_t meff[RPERF_SLOT_BLOCK_METHODS];
    rperf_slot_view_t own;
    rperf_slot_view_t *vp = view ? view : &own;
    rperf_slot_read_counts(slot, vp);
    effective_totals(vp, now, eff);
    effective_methods(vp, now, meff);
    int64_t delta[RPERF_STATE_COUNT];
    int any = 0;
    for (int i = 0; i < RPERF_STATE_COUNT; i++) {
        delta[i] = eff[i] - slot->label_base[i];
        if (delta[i] < 0)
            delta[i] = 0;
        if (delta[i])
            any = 1;
    }
    if (!any)
        return;
    rperf_label_total_t *row = rperf_label_totals_row(&rperf_run.labels, slot->seq, RPERF_LOAD(slot->label_set_id));
    if (!row)
        return;
    for (int i = 0; i < RPERF_STATE_COUNT; i++) {
        row->totals[i] += delta[i];
        slot->label_base[i] += delta[i];
    }
    for (int i = 0; i < vp->nmethods; i++) {
        int64_t d = meff[i] - slot->label_base_method_ns[i];
        if (d <= 0)
            continue;
        int cause = rperf_cause_table_cause_if_resolved(vp->methods[i].frame);
        row->causes[cause < 0 ? RPERF_CAUSE_UNKNOWN : cause] += d;
        slot->label_base_method_ns[i] += d;
    }
}

int64_t
rperf_contention_set_label(rperf_thread_slot_t *slot, int label_set_id)
{
    return rperf_contention_switch_label(slot, label_set_id, NULL);
}

int64_t
rperf_contention_switch_label(rperf_thread_slot_t *slot, int label_set_id, rperf_slot_view_t *view)
{
    if (slot->label_set_id == label_set_id) {
        int64_t now = rperf_contention_now_clipped();
        if (view)
            rperf_slot_read_counts(slot, view);
        return now;
    }
    /* Names the methods blocked time waits in (it allocates: before the
     * clock reading and outside the mutex). */
    rperf_cause_table_resolve_all();
    int64_t now = rperf_contention_now_clipped();
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    pthread_mutex_lock(&rperf_run.label_mutex);
    int viewed = 0;
    if (rperf_contention_recording()) {
        flush_slot_label(slot, now, view);
        viewed = 1;
        /* The caller holds its GVL: close its running interval under the
         * old label so the timeline and the holder history switch too. */
        int prior = slot->state;
        if (prior == RPERF_STATE_RUNNING) {
            rperf_slot_write_begin(slot);
            rperf_slot_charge(slot, prior, now, prior);
            rperf_slot_write_end(slot);
            rperf_contention_emit_interval(slot, r, prior, now);
        }
    }
    RPERF_STORE(slot->label_set_id, label_set_id);
    pthread_mutex_unlock(&rperf_run.label_mutex);
    if (view && !viewed)
        rperf_slot_read_counts(slot, view);
    if (rperf_contention_recording())
        rperf_contention_push_holder(r, now, RPERF_HOLDER_THREAD, slot->seq, label_set_id);
    return now;
}

static void
flush_one(rperf_thread_slot_t *slot, void *arg)
{
    flush_slot_label(slot, *(int64_t *)arg, NULL);
}

void
rperf_contention_flush_labels(int64_t now)
{
    pthread_mutex_lock(&rperf_run.label_mutex);
    rperf_slots_foreach(flush_one, &now);
    pthread_mutex_unlock(&rperf_run.label_mutex);
}

rperf_label_total_t *
rperf_contention_label_totals(size_t *count, int clear)
{
    pthread_mutex_lock(&rperf_run.label_mutex);
    rperf_label_total_t *out = rperf_label_totals_copy(&rperf_run.labels, count);
    if (clear)
        rperf_label_totals_free(&rperf_run.labels);
    pthread_mutex_unlock(&rperf_run.label_mutex);
    return out;
}

/* ------------------------------------------------------------------ */
/* report intervals                                                    */

int64_t
rperf_contention_interval_start(void)
{
    return rperf_run.interval_start_ns;
}
int64_t
rperf_contention_interval_start_realtime(void)
{
    return rperf_run.interval_start_realtime_ns;
}
int
rperf_contention_sequence(void)
{
    return rperf_run.sequence;
}

typedef struct cut_ctx {
    const rperf_cut_t *cut;
    const rperf_slot_view_t *views; /* read at the cut, by seq - 1; state -1: none */
    int nviews;
    int clear;
    rperf_edge_list_t *extra;
} cut_ctx_t;

static const rperf_slot_view_t *
cut_view(const cut_ctx_t *ctx, int seq)
{
    if (seq < 1 || seq > ctx->nviews || ctx->views[seq - 1].state < 0)
        return NULL;
    return &ctx->views[seq - 1];
}

/* The view, not a fresh read: a thread of another Ractor may have resumed
 * since, and its totals in this report are those of the view. */
static void
cut_one(rperf_thread_slot_t *slot, void *arg)
{
    cut_ctx_t *ctx = arg;
    const rperf_slot_view_t *v = cut_view(ctx, slot->seq);
    /* Only READY-opened waits count; a blocked thread is not waiting. */
    if (!v || v->exited || v->state != RPERF_STATE_GVL_WAIT)
        return;
    int64_t from = v->state_since_ns;
    int64_t clip = rperf_contention_clip_ns();
    int64_t edge_cut = __atomic_load_n(&rperf_run.edge_cut_ns, __ATOMIC_RELAXED);
    if (from < clip)
        from = clip;
    if (from < edge_cut)
        from = edge_cut;
    int64_t to = accounting_now(ctx->cut->end_ns);
    if (to <= from)
        return;
    /* Another Ractor's ring is read under its lock while its holder goes on. */
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    rperf_wait_attribute(r ? r->ring : NULL, rperf_contention_epoch(), r ? r->id : 0, slot->seq,
                         RPERF_LOAD(slot->label_set_id), from, to, ctx->extra);
}

void
rperf_contention_cut_open_waits(const rperf_cut_t *cut, const rperf_slot_view_t *views, int nviews,
                                rperf_edge_list_t *extra)
{
    /* Counters mode keeps no holder history to split a wait over. */
    if (rperf_run.cfg.counters_only)
        return;
    cut_ctx_t ctx = {cut, views, nviews, 0, extra};
    rperf_slots_foreach(cut_one, &ctx);
}

/* A deferred wait belongs to this report when its thread's view already
 * shows it ended; a later one (a thread of another Ractor that resumed
 * after its view was read) is an open wait here (cut_one), so with clear
 * the next report takes only its part after the cut. */
static int
take_for_cut(rperf_pending_wait_t *p, void *arg)
{
    const cut_ctx_t *ctx = arg;
    if (ctx->cut->final)
        return 1;
    const rperf_slot_view_t *v = cut_view(ctx, p->waiter);
    if (v && p->to_ns <= v->state_since_ns)
        return 1;
    if (ctx->clear && p->from_ns < ctx->cut->end_ns)
        p->from_ns = ctx->cut->end_ns;
    return 0;
}

int
rperf_contention_cut_edges(const rperf_cut_t *cut, const rperf_slot_view_t *views, int nviews, int clear,
                           rperf_edge_list_t *out)
{
    cut_ctx_t ctx = {cut, views, nviews, clear, NULL};
    rperf_holder_ring_t *rings[RPERF_MAX_RACTORS];
    int n = rperf_ractor_count();
    for (int i = 0; i < n; i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i + 1);
        rings[i] = r ? r->ring : NULL;
    }
    return rperf_edges_cut(rings, n, take_for_cut, &ctx, clear, cut->end_ns, out);
}

void
rperf_contention_views_begin(int64_t clear_cut_ns)
{
    /* Before the phase store (seq_cst): a release that sees the phase of
     * the views or a later one also sees the new cut, and so does every
     * event whose slot write these views miss (rperf_event_write_begin). */
    if (clear_cut_ns > 0)
        __atomic_store_n(&rperf_run.release_cut_ns, clear_cut_ns, __ATOMIC_RELAXED);
    uint32_t phase = __atomic_load_n(&rperf_run.cut_phase, __ATOMIC_RELAXED);
    __atomic_store_n(&rperf_run.cut_phase, phase | 1u, __ATOMIC_SEQ_CST);
    /* Orders the store before the view reads (store-load): a release whose
     * second read of the phase missed it is in every view read after. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

uint32_t
rperf_contention_views_end(void)
{
    uint32_t phase = (__atomic_load_n(&rperf_run.cut_phase, __ATOMIC_RELAXED) | 1u) + 1u;
    /* Release: a release that reads the new phase first writes its slot
     * after every view was read. */
    __atomic_store_n(&rperf_run.cut_phase, phase, __ATOMIC_RELEASE);
    return phase / 2;
}

uint32_t
rperf_contention_release_generation(void)
{
    return __atomic_load_n(&rperf_run.cut_phase, __ATOMIC_ACQUIRE) / 2;
}

void
rperf_contention_get_stats(rperf_contention_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t events = __atomic_load_n(&rperf_run.orphan_events, __ATOMIC_RELAXED);
    int n = rperf_slot_count();
    for (int seq = 1; seq <= n; seq++) {
        rperf_thread_slot_t *slot = rperf_slot_by_seq(seq);
        if (slot)
            events += RPERF_LOAD(slot->hook_events) - slot->base_hook_events;
    }
    out->hook_events = events;
    uint64_t timed = __atomic_load_n(&rperf_run.timed_events, __ATOMIC_RELAXED);
    uint64_t timed_ns = __atomic_load_n(&rperf_run.timed_ns, __ATOMIC_RELAXED);
    out->hook_time_ns = timed ? (uint64_t)((double)events * (double)timed_ns / (double)timed) : 0;
    uint64_t dropped = __atomic_load_n(&rperf_run.unattributed_intervals, __ATOMIC_RELAXED);
    for (int i = 0; i < rperf_ractor_count(); i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i + 1);
        if (r)
            dropped += rperf_interval_buffer_take_dropped(&r->intervals, 0);
    }
    out->dropped_intervals = dropped;
    out->dropped_edges = rperf_edges_dropped(0);
    out->dropped_threads = rperf_slot_dropped();
    out->coalesced_intervals = __atomic_load_n(&rperf_run.coalesced, __ATOMIC_RELAXED);
    out->edge_lock_contended = rperf_edges_lock_contended(0);
    out->paused_ns = rperf_run.paused_ns;
    out->dropped_causes = rperf_cause_table_dropped(0);
    out->dropped_blocked_edges = __atomic_load_n(&rperf_run.dropped_releases, __ATOMIC_RELAXED);
    if (rperf_run.paused_at_ns) {
        int64_t from = rperf_run.paused_at_ns > rperf_run.interval_start_ns ? rperf_run.paused_at_ns
                                                                            : rperf_run.interval_start_ns;
        out->paused_ns += rperf_now_ns() - from;
    }
}

typedef struct baseline_ctx {
    int64_t now;
    const rperf_slot_view_t *views;
    int nviews;
} baseline_ctx_t;

static void
baseline_one(rperf_thread_slot_t *slot, void *arg)
{
    baseline_ctx_t *ctx = arg;
    const rperf_slot_view_t *v = NULL;
    if (ctx->views && slot->seq <= ctx->nviews && ctx->views[slot->seq - 1].state >= 0)
        v = &ctx->views[slot->seq - 1];
    if (!v) {
        /* Born after the views were read: not in the report just built, so
         * everything it did (and every wait it deferred) is the next one's. */
        memset(slot->base_totals, 0, sizeof(slot->base_totals));
        memset(slot->base_method_ns, 0, sizeof(slot->base_method_ns));
        memset(slot->base_method_count, 0, sizeof(slot->base_method_count));
        memset(slot->base_release_ns, 0, sizeof(slot->base_release_ns));
        memset(slot->base_release_count, 0, sizeof(slot->base_release_count));
        slot->base_acquisitions = 0;
        slot->base_waits = 0;
        slot->base_hook_events = 0;
        slot->counted_to_ns = 0;
        return;
    }
    slot->counted_to_ns = rperf_slot_view_counted_to(v, ctx->now);
    effective_totals(v, ctx->now, slot->base_totals);
    effective_methods(v, ctx->now, slot->base_method_ns);
    for (int i = 0; i < RPERF_SLOT_BLOCK_METHODS; i++)
        slot->base_method_count[i] = i < v->nmethods ? v->methods[i].count : 0;
    for (int i = 0; i < RPERF_SLOT_RELEASES; i++) {
        slot->base_release_ns[i] = i < v->nreleases ? v->releases[i].ns : 0;
        slot->base_release_count[i] = i < v->nreleases ? v->releases[i].count : 0;
    }
    slot->base_acquisitions = v->acquisitions;
    slot->base_waits = v->waits;
    slot->base_hook_events = RPERF_LOAD(slot->hook_events);
}

void
rperf_contention_begin_interval(int64_t now, int64_t now_realtime, const rperf_slot_view_t *views, int nviews)
{
    baseline_ctx_t ctx = {now, views, nviews};
    rperf_slots_foreach(baseline_one, &ctx);
    rperf_run.interval_start_ns = now;
    rperf_run.interval_start_realtime_ns = now_realtime;
    rperf_run.sequence++;
    rperf_run.paused_ns = 0;
    __atomic_store_n(&rperf_run.edge_cut_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&rperf_run.orphan_events, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rperf_run.unattributed_intervals, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rperf_run.coalesced, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < rperf_ractor_count(); i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i + 1);
        if (r)
            rperf_interval_buffer_take_dropped(&r->intervals, 1);
    }
    rperf_edges_dropped(1);
    rperf_edges_lock_contended(1);
    rperf_cause_table_dropped(1);
    __atomic_store_n(&rperf_run.dropped_releases, 0, __ATOMIC_RELAXED);
    rperf_slot_pool_reset_dropped();
}
