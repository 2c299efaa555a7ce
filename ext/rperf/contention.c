/*
 * contention.c — the state machine behind every GVL/GC event, the flush of
 * each thread's time into its label set's totals, and report-interval
 * bookkeeping (cuts, baselines, counters).
 *
 * Accounting rule: an event proves what the thread was doing just before
 * it (SUSPENDED: it held the GVL; READY: it did not; RESUMED: it wanted
 * it), so time since the previous event is charged to that proven state
 * rather than to the remembered one. Missed events (hooks enabled
 * mid-wait, a profile resumed after a pause, an interrupted sleep that
 * fires SUSPENDED without RESUMED) then cost accuracy only up to the next
 * event. The clock is read once per event by the caller.
 *
 * Counters mode (rperf_count_*) runs the same state machine on the slot
 * alone: no timeline, holder ring, wait edge or waiters count, so an event
 * writes only its own thread's slot line.
 *
 * This file does NOT install hooks, does NOT build Ruby objects, does NOT
 * call the sampler (events return what the hooks hand to it) and does NOT
 * allocate in any rperf_on_* path.
 */
#include "contention.h"
#include "cause_table.h"
#include "clock.h"
#include "native_tid.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int active;    /* a profile exists */
    int recording; /* atomic: enum rperf_recording */
    int forked_child;
    uint32_t epoch;       /* atomic: bumped at every resume */
    int64_t clip_ns;      /* atomic: accounting starts no earlier */
    int64_t paused_at_ns; /* 0 when not paused */
    int64_t paused_ns;    /* paused time within the report interval */
    int64_t edge_cut_ns;  /* atomic: waits before it were attributed at a cut */
    /* atomic: blocked time before it was reported at a clearing cut. Set
     * before that cut reads the views (edge_cut_ns only after the report is
     * built), so a release the views miss never reaches back past it. */
    int64_t release_cut_ns;
    rperf_contention_config_t cfg;

    int64_t interval_start_ns;
    int64_t interval_start_realtime_ns;
    int sequence;

    uint64_t orphan_events;          /* atomic: events of threads without a slot */
    uint64_t unattributed_intervals; /* atomic: intervals of unidentified Ractors */
    uint64_t coalesced;              /* atomic */
    uint64_t timed_events;           /* atomic */
    uint64_t timed_ns;               /* atomic */
    uint64_t dropped_releases;       /* atomic: releases a full per-waiter list could not take */
    /* atomic: twice the report cuts completed, odd while a report reads the
     * slot views; a release reads it around its slot write to know which
     * report's views include it (rperf_on_ready). */
    uint32_t cut_phase;

    /* Serialises each slot's label_base with the label table (a thread's
     * own label switch against the report builder's flush). */
    pthread_mutex_t label_mutex;
    rperf_label_totals_t labels;
} run = {.label_mutex = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------ */
/* lifecycle                                                           */

int
rperf_contention_active(void)
{
    return run.active && !run.forked_child;
}

int
rperf_contention_recording(void)
{
    /* seq_cst: pairs with rperf_contention_stop_recording and the pinned
     * hook's in-flight count; a plain load on x86. */
    return __atomic_load_n(&run.recording, __ATOMIC_SEQ_CST);
}

int
rperf_contention_forked_child_pending(void)
{
    return run.active && run.forked_child;
}

const rperf_contention_config_t *
rperf_contention_config(void)
{
    return &run.cfg;
}

int64_t
rperf_contention_clip_ns(void)
{
    return __atomic_load_n(&run.clip_ns, __ATOMIC_RELAXED);
}

uint32_t
rperf_contention_epoch(void)
{
    return __atomic_load_n(&run.epoch, __ATOMIC_RELAXED);
}

int64_t
rperf_contention_now_clipped(void)
{
    int64_t now = rperf_now_ns();
    int64_t clip = rperf_contention_clip_ns();
    return now < clip ? clip : now;
}

static void edge_lost(int waiter, int64_t ns);
static void switch_method(rperf_thread_slot_t *slot, int idx);

static int
recording_mode(void)
{
    return run.cfg.counters_only ? RPERF_RECORDING_COUNTERS : RPERF_RECORDING_FULL;
}

/* The holder history of a Ractor; counters mode keeps none. */
static void
push_holder(rperf_ractor_slot_t *r, int64_t now, int kind, int seq, int label_set_id)
{
    if (!r || run.cfg.counters_only)
        return;
    rperf_holder_ring_push(r->ring, now, kind, seq, label_set_id, rperf_contention_epoch());
}

int
rperf_contention_start(const rperf_contention_config_t *cfg, int paused, const char **err)
{
    if (run.active) {
        *err = "profiler state already exists";
        return -1;
    }
    run.cfg = *cfg;
    if (cfg->counters_only)
        run.cfg.timeline = 0;
    if (rperf_cause_table_open() < 0) {
        *err = "cannot allocate the blocked-cause table";
        return -1;
    }
    if (rperf_slot_pool_create(cfg->max_threads, err) < 0) {
        rperf_cause_table_close();
        return -1;
    }
    /* Counters mode records no edges: the smallest table serves its cuts. */
    if (rperf_edges_create(cfg->counters_only ? 1 : cfg->max_edges, edge_lost) < 0) {
        rperf_slot_pool_destroy();
        rperf_cause_table_close();
        *err = "cannot allocate the wait-edge table";
        return -1;
    }
    rperf_ractor_table_open(cfg->timeline, cfg->max_intervals > 0 ? (uint64_t)cfg->max_intervals : 0);
    int64_t now = rperf_now_ns();
    run.active = 1;
    run.forked_child = 0;
    run.epoch++;
    run.clip_ns = now;
    run.paused_at_ns = paused ? now : 0;
    run.paused_ns = 0;
    run.edge_cut_ns = now;
    run.release_cut_ns = now;
    run.interval_start_ns = now;
    run.interval_start_realtime_ns = rperf_realtime_ns();
    run.sequence = 0;
    run.orphan_events = run.unattributed_intervals = run.coalesced = 0;
    run.timed_events = run.timed_ns = 0;
    run.dropped_releases = 0;
    run.cut_phase = 0;
    return 0;
}

void
rperf_contention_begin_recording(VALUE caller, rperf_ractor_slot_t *main_ractor)
{
    int64_t now = run.interval_start_ns;
    main_ractor->main = 1;
    /* The caller runs: it holds the GVL right now. */
    rperf_thread_slot_t *slot = rperf_slot_claim(caller, now);
    if (slot) {
        slot->state = RPERF_STATE_RUNNING;
        slot->ractor = main_ractor;
        __atomic_store_n(&main_ractor->holder_seq, slot->seq, __ATOMIC_RELEASE);
        push_holder(main_ractor, now, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    }
    __atomic_store_n(&run.recording, run.paused_at_ns ? RPERF_RECORDING_OFF : recording_mode(), __ATOMIC_RELEASE);
}

void
rperf_contention_destroy(void)
{
    __atomic_store_n(&run.recording, 0, __ATOMIC_RELEASE);
    rperf_ractor_table_close();
    rperf_slot_pool_destroy();
    rperf_edges_destroy();
    rperf_cause_table_close();
    pthread_mutex_lock(&run.label_mutex);
    rperf_label_totals_free(&run.labels);
    pthread_mutex_unlock(&run.label_mutex);
    run.active = 0;
    run.forked_child = 0;
}

void
rperf_contention_after_fork_child(void)
{
    /* Only flags: the child may not take locks other threads held. The
     * stale state is destroyed on the next Ruby-level call. */
    __atomic_store_n(&run.recording, 0, __ATOMIC_RELAXED);
    run.label_mutex = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    if (run.active) {
        run.forked_child = 1;
        rperf_slot_pool_abandon();
    }
}

void
rperf_contention_stop_recording(void)
{
    __atomic_store_n(&run.recording, 0, __ATOMIC_SEQ_CST);
}

void
rperf_contention_pause(int64_t now_ns)
{
    if (!run.active || run.paused_at_ns)
        return;
    __atomic_store_n(&run.recording, 0, __ATOMIC_RELEASE);
    run.paused_at_ns = now_ns;
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
    switch_method(slot, 0);
    RPERF_STORE(slot->ready_releaser, 0);
    rperf_slot_write_end(slot);
}

static inline int64_t clipped_since(const rperf_thread_slot_t *slot);
static inline void charge(rperf_thread_slot_t *slot, int state, int64_t now, int next);
static void emit_interval(rperf_thread_slot_t *slot, rperf_ractor_slot_t *r, int state, int64_t to);
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
    int64_t to = run.paused_at_ns;
    int64_t ready = slot->ready_ns;
    int64_t wait_from = clipped_since(slot);
    int64_t blocked_from = slot->timeline_from_ns;
    rperf_ractor_slot_t *r = rr->ractor;
    rperf_slot_write_begin(slot);
    charge(slot, state, to, state);
    int64_t cut = __atomic_load_n(&run.edge_cut_ns, __ATOMIC_RELAXED);
    int64_t edge_from = wait_from > cut ? wait_from : cut;
    if (state == RPERF_STATE_GVL_WAIT && !run.cfg.counters_only && edge_from < to) {
        /* In the write section, as at RESUMED: a report whose view shows
         * the wait ended finds it in the ring. */
        rperf_wait_defer(r->ring, rperf_contention_epoch(), slot->seq, slot->label_set_id, edge_from, to);
    }
    rperf_slot_write_end(slot);
    if (state == RPERF_STATE_GVL_WAIT && ready > blocked_from)
        emit_interval(slot, r, RPERF_STATE_BLOCKED, ready);
    emit_interval(slot, r, state, to);
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
    if (!run.active || !run.paused_at_ns)
        return;
    if (r) {
        struct resume_reset rr = {NULL, r, now_ns};
        rperf_slots_foreach(end_state_at_pause, &rr);
    }
    if (run.paused_at_ns > run.interval_start_ns)
        run.paused_ns += now_ns - run.paused_at_ns;
    else
        run.paused_ns += now_ns - run.interval_start_ns;
    run.paused_at_ns = 0;
    __atomic_store_n(&run.clip_ns, now_ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&run.epoch, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&run.edge_cut_ns, now_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&run.release_cut_ns, now_ns, __ATOMIC_RELAXED);

    rperf_thread_slot_t *slot = rperf_slot_claim(caller, now_ns);
    if (slot) {
        /* The caller is running now; whatever it was before is paused time. */
        rperf_slot_write_begin(slot);
        RPERF_STORE(slot->state, RPERF_STATE_RUNNING);
        RPERF_STORE(slot->state_since_ns, now_ns);
        RPERF_STORE(slot->timeline_from_ns, now_ns);
        RPERF_STORE(slot->ready_ns, 0);
        rperf_slot_write_end(slot);
        if (r)
            __atomic_store_n(&r->holder_seq, slot->seq, __ATOMIC_RELEASE);
        push_holder(r, now_ns, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    }
    struct resume_reset rr = {slot, r, now_ns};
    if (r)
        rperf_slots_foreach(reset_one_after_pause, &rr);
    pthread_mutex_lock(&run.label_mutex);
    rperf_slots_foreach(lower_bases_to_totals, &rr);
    pthread_mutex_unlock(&run.label_mutex);
    __atomic_store_n(&run.recording, recording_mode(), __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ */
/* events                                                              */

static inline int64_t
clipped_since(const rperf_thread_slot_t *slot)
{
    int64_t since = slot->state_since_ns;
    int64_t clip = rperf_contention_clip_ns();
    return since < clip ? clip : since;
}

/* Within the seqlock: charge [since, now) to `state`, open `next`.
 * Blocked time belongs to the current method (switch_method), so the
 * methods always sum to the blocked total. */
static inline void
charge(rperf_thread_slot_t *slot, int state, int64_t now, int next)
{
    int64_t d = now - clipped_since(slot);
    if (d > 0)
        RPERF_STORE(slot->totals[state], slot->totals[state] + d);
    RPERF_STORE(slot->state, next);
    RPERF_STORE(slot->state_since_ns, now);
    RPERF_STORE(slot->last_seen_ns, now);
}

/* The state a holder was in until now: GC work or running. */
static inline int
held_state(int prior)
{
    return (prior == RPERF_STATE_GC_MARK || prior == RPERF_STATE_GC_SWEEP) ? prior : RPERF_STATE_RUNNING;
}

/* Within the seqlock: the blocked time and spans of the method in
 * progress move into its entry, and `idx` becomes the method in progress. */
static void
switch_method(rperf_thread_slot_t *slot, int idx)
{
    int cur = slot->block_method;
    if (idx == cur)
        return;
    int64_t blocked = slot->totals[RPERF_STATE_BLOCKED];
    rperf_blocked_method_t *m = &slot->methods[cur];
    RPERF_STORE(m->ns, m->ns + (blocked - slot->method_mark_ns));
    RPERF_STORE(m->count, m->count + (slot->blocked_spans - slot->span_mark));
    RPERF_STORE(slot->method_mark_ns, blocked);
    RPERF_STORE(slot->span_mark, slot->blocked_spans);
    RPERF_STORE(slot->block_method, idx);
}

/* Within the seqlock: the method list index of cause table id `frame`,
 * appended when new; 0 (unknown, counted as dropped) when the list is full. */
static int
method_index(rperf_thread_slot_t *slot, uint32_t frame)
{
    if (!frame)
        return 0;
    int n = slot->nmethods < 1 ? 1 : slot->nmethods;
    int idx = 0;
    for (int i = 1; i < n; i++) {
        if (slot->methods[i].frame == frame) {
            idx = i;
            break;
        }
    }
    if (!idx) {
        if (n >= RPERF_SLOT_BLOCK_METHODS) {
            rperf_cause_table_note_dropped();
            return 0;
        }
        idx = n;
        RPERF_STORE(slot->methods[idx].frame, frame);
        RPERF_STORE(slot->nmethods, n + 1);
    }
    return idx;
}

/* Within the seqlock, at SUSPENDED: the method index of leaf frame
 * `leaf`. A thread mostly blocks in one of the few methods it blocked in
 * lately: those skip the cause table (its probe and the frame's path). */
static inline int
leaf_method_index(rperf_thread_slot_t *slot, VALUE leaf)
{
    if (!leaf)
        return 0;
    for (int i = 0; i < RPERF_SLOT_LEAF_CACHE; i++) {
        if (slot->leaf_cache[i] == leaf)
            return slot->leaf_method[i];
    }
    int idx = method_index(slot, rperf_cause_table_intern(leaf));
    if (idx > 0) {
        int e = slot->leaf_next;
        slot->leaf_cache[e] = leaf;
        slot->leaf_method[e] = idx;
        slot->leaf_next = (e + 1) % RPERF_SLOT_LEAF_CACHE;
    }
    return idx;
}

/* Within the seqlock, at SUSPENDED: the blocked span that begins is
 * charged to the method of the leaf frame `leaf`. */
static inline void
begin_blocked(rperf_thread_slot_t *slot, VALUE leaf)
{
    int idx = leaf_method_index(slot, leaf);
    switch_method(slot, idx);
    RPERF_STORE(slot->blocked_spans, slot->blocked_spans + 1);
    RPERF_STORE(slot->ready_releaser, 0);
}

/* Within the seqlock: `ns` of the blocked span that ends now, released by
 * `releaser`, into the waiter's release list. Returns the entry's index, or
 * -1 when the list was full. */
static int
add_release(rperf_thread_slot_t *slot, int releaser, int releaser_label, int64_t ns)
{
    int waiter_label = slot->label_set_id;
    int method = slot->block_method;
    int n = slot->nreleases;
    for (int i = 0; i < n; i++) {
        rperf_release_t *rel = &slot->releases[i];
        if (rel->releaser == releaser && rel->releaser_label == releaser_label &&
            rel->waiter_label == waiter_label && rel->method == method) {
            RPERF_STORE(rel->ns, rel->ns + ns);
            RPERF_STORE(rel->count, rel->count + 1);
            return i;
        }
    }
    if (n >= RPERF_SLOT_RELEASES) {
        __atomic_fetch_add(&run.dropped_releases, 1, __ATOMIC_RELAXED);
        return -1;
    }
    rperf_release_t *rel = &slot->releases[n];
    RPERF_STORE(rel->releaser, releaser);
    RPERF_STORE(rel->releaser_label, releaser_label);
    RPERF_STORE(rel->waiter_label, waiter_label);
    RPERF_STORE(rel->method, method);
    RPERF_STORE(rel->ns, ns);
    RPERF_STORE(rel->count, 1);
    RPERF_STORE(slot->nreleases, n + 1);
    return n;
}

/* Within the seqlock: READY proves the thread did not hold the GVL since
 * its last event; a repeated READY continues the wait that began earlier.
 * `releaser` (0: none) is the thread that readied it; the span's part in
 * the current report interval becomes its release edge, whose index and
 * added time go to `*release` (index -1: none). */
static inline void
close_for_ready(rperf_thread_slot_t *slot, int64_t now, int releaser, int releaser_label,
                rperf_release_event_t *release)
{
    release->release_index = -1;
    if (slot->state == RPERF_STATE_GVL_WAIT) {
        RPERF_STORE(slot->last_seen_ns, now);
        return;
    }
    int64_t since = clipped_since(slot);
    int64_t blocked = now - since;
    slot->ready_blocked_ns = blocked > 0 ? blocked : 0;
    charge(slot, RPERF_STATE_BLOCKED, now, RPERF_STATE_GVL_WAIT);
    RPERF_STORE(slot->runnable_ns, now);
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        RPERF_STORE(slot->runnable_totals[i], slot->totals[i]);
    RPERF_STORE(slot->ready_releaser, releaser);
    if (releaser && slot->block_method > 0) {
        /* Before the last clear the span belongs to the previous report,
         * where it was open (no releaser yet). */
        int64_t cut = __atomic_load_n(&run.release_cut_ns, __ATOMIC_RELAXED);
        int64_t from = since > cut ? since : cut;
        if (now > from) {
            release->release_index = add_release(slot, releaser, releaser_label, now - from);
            release->ns = now - from;
        }
    }
    RPERF_STORE(slot->ready_ns, now);
}

/* Within the seqlock: RESUMED proves a wait (whatever `prior` was, unless
 * the thread was already running: a duplicate RESUMED). Without READY
 * (hooks enabled mid-wait, a thread present at start) the whole span since
 * the last event is taken as waiting. Returns 1 when it ended a wait. */
static inline int
close_for_resumed(rperf_thread_slot_t *slot, int prior, int64_t now)
{
    int waited = 0;
    if (prior == RPERF_STATE_GVL_WAIT || prior == RPERF_STATE_BLOCKED) {
        charge(slot, RPERF_STATE_GVL_WAIT, now, RPERF_STATE_RUNNING);
        waited = 1;
        RPERF_STORE(slot->acquisitions, slot->acquisitions + 1);
        if (prior == RPERF_STATE_GVL_WAIT && slot->ready_ns)
            RPERF_STORE(slot->waits, slot->waits + 1);
    } else {
        charge(slot, prior, now, RPERF_STATE_RUNNING);
    }
    RPERF_STORE(slot->ready_ns, 0);
    return waited;
}

/* Holder context only: append [from, to) in `state` to the Ractor's
 * timeline, folding it into the next interval when shorter than
 * min_interval_ns. */
static void
emit_interval(rperf_thread_slot_t *slot, rperf_ractor_slot_t *r, int state, int64_t to)
{
    int64_t from = slot->timeline_from_ns;
    int64_t clip = rperf_contention_clip_ns();
    if (from < clip)
        from = clip;
    if (to <= from)
        return;
    if (!run.cfg.timeline) {
        /* No timeline, but timeline_from_ns still marks where the next
         * state began: the [GVL blocked] weight at RESUMED is read from it. */
        RPERF_STORE(slot->timeline_from_ns, to);
        return;
    }
    if (run.cfg.min_interval_ns > 0 && to - from < run.cfg.min_interval_ns) {
        __atomic_fetch_add(&run.coalesced, 1, __ATOMIC_RELAXED);
        return;
    }
    RPERF_STORE(slot->timeline_from_ns, to);
    if (!r) {
        __atomic_fetch_add(&run.unattributed_intervals, 1, __ATOMIC_RELAXED);
        return;
    }
    rperf_interval_t rec = {
        .start_ns = from,
        .end_ns = to,
        .thread_seq = slot->seq,
        .label_set_id = slot->label_set_id,
        .stack_id = -1,
        .state = (uint8_t)state,
    };
    if (state == RPERF_STATE_BLOCKED) {
        rec.cause = rperf_interval_cause_byte(slot->methods[slot->block_method].frame, slot->block_method);
        rec.releaser_seq = slot->ready_releaser;
    }
    rperf_interval_buffer_push(&r->intervals, &rec);
}

static void
settle_waiter(rperf_thread_slot_t *slot)
{
    rperf_ractor_slot_t *counted = slot->waiting_counted;
    if (counted) {
        __atomic_fetch_sub(&counted->waiters, 1, __ATOMIC_RELAXED);
        slot->waiting_counted = NULL;
    }
}

uint8_t
rperf_interval_cause_byte(uint32_t frame, int method)
{
    int c = rperf_cause_table_cause_if_resolved(frame);
    return c >= 0 ? (uint8_t)c : (uint8_t)(RPERF_INTERVAL_CAUSE_PENDING | method);
}

/* READY from the GVL holder's own native thread: the holder is readying
 * this thread itself (Ruby 3.3 does so in the unblock function that
 * Mutex#unlock, Queue#push, ConditionVariable#signal and a finishing
 * thread's join wake-up call with the GVL held); it released the wait.
 * Any other READY (the thread's own wake-up after a timeout, IO readiness
 * or a signal, the timer thread under M:N) names no releaser. */
static int
releaser_of(const rperf_thread_slot_t *slot, int *label)
{
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    if (!r)
        return 0;
    int seq = __atomic_load_n(&r->holder_seq, __ATOMIC_ACQUIRE);
    if (!seq || seq == slot->seq)
        return 0;
    rperf_thread_slot_t *holder = rperf_slot_by_seq(seq);
    if (!holder || RPERF_LOAD(holder->native_id) != (int64_t)rperf_native_tid())
        return 0;
    *label = RPERF_LOAD(holder->label_set_id);
    return seq;
}

/* A release stack is wanted for a release into list entry `index` unless
 * the waiter's method is known to be no releasable wait (a Thread#wakeup
 * of a sleeper). A method not named yet may still be one: the report keeps
 * the stack only if it turns out releasable. */
static int
wants_release_stack(const rperf_thread_slot_t *slot, int index)
{
    if (index < 0)
        return 0;
    int method = slot->releases[index].method;
    if (method <= 0 || method >= RPERF_SLOT_BLOCK_METHODS)
        return 0;
    int cause = rperf_cause_table_cause_if_resolved(slot->methods[method].frame);
    return cause < 0 || RPERF_CAUSE_RELEASABLE(cause);
}

rperf_release_event_t
rperf_on_ready(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_release_event_t release = {0};
    if (slot->exited)
        return release;
    int releaser_label = 0;
    int releaser = releaser_of(slot, &releaser_label);
    /* Read before and after the slot write: unchanged and even, the write
     * is wholly before or wholly after the views of every report (see
     * rperf_contention_views_begin). */
    uint32_t phase_before = releaser ? __atomic_load_n(&run.cut_phase, __ATOMIC_ACQUIRE) : 0;
    rperf_slot_write_begin(slot);
    close_for_ready(slot, now, releaser, releaser_label, &release);
    rperf_slot_write_end(slot);
    if (releaser && wants_release_stack(slot, release.release_index)) {
        /* Orders the slot write before the second read (store-load). */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uint32_t phase_after = __atomic_load_n(&run.cut_phase, __ATOMIC_RELAXED);
        release.releaser_seq = releaser;
        release.generation = phase_before / 2;
        release.lost_at_cut = phase_before != phase_after || (phase_before & 1);
    }

    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    if (r && !slot->waiting_counted) {
        __atomic_fetch_add(&r->waiters, 1, __ATOMIC_RELAXED);
        slot->waiting_counted = r;
    }
    return release;
}

void
rperf_on_resumed_paused(rperf_thread_slot_t *slot)
{
    settle_waiter(slot);
}

static void
charge_unknown_edge(rperf_thread_slot_t *slot, int64_t ns)
{
    if (ns <= 0)
        return;
    __atomic_fetch_add(&slot->unknown_edge_ns, ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&slot->unknown_edge_count, 1, __ATOMIC_RELAXED);
}

/* Wait time a full edge table could not take (hook or builder context). */
static void
edge_lost(int waiter, int64_t ns)
{
    rperf_thread_slot_t *slot = rperf_slot_by_seq(waiter);
    if (slot)
        charge_unknown_edge(slot, ns);
}

rperf_off_gvl_t
rperf_on_resumed(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_off_gvl_t off = {0, 0};
    rperf_ractor_slot_t *r = slot->ractor;
    /* Every time: an M:N thread moves between native threads, and the
     * sampler signals the native thread that holds this Ractor's GVL.
     * Cached per native thread, so no system call after the first. */
    RPERF_STORE(slot->native_id, (int64_t)rperf_native_tid());
    /* After native_id (release): a READY that sees this holder also sees
     * the native thread it runs on. */
    if (r)
        __atomic_store_n(&r->holder_seq, slot->seq, __ATOMIC_RELEASE);

    int prior = slot->state;
    int64_t ready = slot->ready_ns;
    int64_t wait_from = clipped_since(slot);
    int64_t blocked_from = slot->timeline_from_ns;

    rperf_slot_write_begin(slot);
    int waited = close_for_resumed(slot, prior, now);
    if (waited) {
        /* Inside the write section: a report builder whose view of this
         * slot shows the wait ended must also find it in the ring (or the
         * unknown counter) when it cuts the edges, or the wait would count
         * in its totals and in no report's edges (the next one clips it to
         * its cut). */
        int64_t cut = __atomic_load_n(&run.edge_cut_ns, __ATOMIC_RELAXED);
        int64_t edge_from = wait_from > cut ? wait_from : cut;
        if (r) {
            /* The wait and this thread's holder segment under one lock. */
            rperf_holder_ring_resume(r->ring, rperf_contention_epoch(), slot->seq, slot->label_set_id, edge_from,
                                     now);
        } else {
            charge_unknown_edge(slot, now - edge_from);
        }
    }
    rperf_slot_write_end(slot);
    settle_waiter(slot);

    if (waited) {
        if (prior == RPERF_STATE_GVL_WAIT && ready > blocked_from) {
            emit_interval(slot, r, RPERF_STATE_BLOCKED, ready);
        }
        emit_interval(slot, r, RPERF_STATE_GVL_WAIT, now);
        if (run.cfg.wall_mode) {
            /* Exactly the blocked time READY charged (timeline_from_ns may
             * lie earlier when short intervals were folded). */
            off.blocked_ns = prior == RPERF_STATE_GVL_WAIT && ready ? slot->ready_blocked_ns : 0;
            off.wait_ns = now - wait_from;
        }
    } else {
        emit_interval(slot, r, prior, now);
    }
    if (r && !waited)
        rperf_holder_ring_push(r->ring, now, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id,
                               rperf_contention_epoch());
    return off;
}

/* The Ractor's GVL has no holder from now. Only the holder writes the
 * field (RESUMED, SUSPENDED), in GVL hand-off order: a plain store. In
 * Ruby 3.3 a thread's last event before EXITED is a SUSPENDED, so an exiting
 * thread is no holder any more. */
static void
clear_holder(rperf_ractor_slot_t *r)
{
    if (r)
        __atomic_store_n(&r->holder_seq, 0, __ATOMIC_RELAXED);
}

void
rperf_on_suspended(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    int prior = slot->state;
    int held = held_state(prior);
    /* Read while the thread still holds its GVL: no GC can move the frame. */
    VALUE leaf = rperf_cause_table_leaf(slot->thread);
    clear_holder(r);

    if (r && prior == RPERF_STATE_BLOCKED) {
        /* Duplicate SUSPENDED: the previous one did not give the GVL away
         * (an interrupted sleep), so the hand-off we recorded was this
         * thread still holding it. */
        rperf_holder_ring_reclaim_handoff(r->ring, slot->seq, slot->label_set_id);
    }
    rperf_slot_write_begin(slot);
    charge(slot, held, now, RPERF_STATE_BLOCKED);
    begin_blocked(slot, leaf);
    rperf_slot_write_end(slot);
    if (prior == RPERF_STATE_GVL_WAIT)
        settle_waiter(slot);

    emit_interval(slot, r, held, now);
    /* Hand-off segments remember who released (reported as holder 0). */
    if (r)
        rperf_holder_ring_push(r->ring, now, RPERF_HOLDER_HANDOFF, slot->seq, 0, rperf_contention_epoch());
}

void
rperf_on_exited(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_slot_write_begin(slot);
    int last = slot->state == RPERF_STATE_GVL_WAIT ? RPERF_STATE_GVL_WAIT : RPERF_STATE_BLOCKED;
    /* The state stays the one charged: without the GVL this hook cannot
     * write the Ractor's timeline, so the report builder emits the span
     * [timeline_from_ns, state_since_ns) in that state. */
    charge(slot, last, now, last);
    RPERF_STORE(slot->exited, 1);
    RPERF_STORE(slot->ready_ns, 0);
    rperf_slot_write_end(slot);
    settle_waiter(slot);
}

/* Counters mode: what rperf_on_ready/resumed/suspended do to the slot,
 * and nothing else. */
void
rperf_count_ready(rperf_thread_slot_t *slot, int64_t now)
{
    if (slot->exited)
        return;
    rperf_release_event_t none;
    rperf_slot_write_begin(slot);
    close_for_ready(slot, now, 0, 0, &none);
    rperf_slot_write_end(slot);
}

void
rperf_count_resumed(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_slot_write_begin(slot);
    close_for_resumed(slot, slot->state, now);
    rperf_slot_write_end(slot);
}

void
rperf_count_suspended(rperf_thread_slot_t *slot, int64_t now)
{
    VALUE leaf = rperf_cause_table_leaf(slot->thread);
    rperf_slot_write_begin(slot);
    charge(slot, held_state(slot->state), now, RPERF_STATE_BLOCKED);
    begin_blocked(slot, leaf);
    rperf_slot_write_end(slot);
}

static int
gc_state_for(int phase)
{
    return phase == RPERF_GC_PHASE_SWEEP ? RPERF_STATE_GC_SWEEP : RPERF_STATE_GC_MARK;
}

void
rperf_on_gc_enter(rperf_thread_slot_t *slot, int phase, int64_t now)
{
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    int gc_state = gc_state_for(phase);
    int held = held_state(slot->state);
    rperf_slot_write_begin(slot);
    charge(slot, held, now, gc_state);
    rperf_slot_write_end(slot);
    slot->gc_depth = 1;
    emit_interval(slot, r, held, now);
    push_holder(r, now, RPERF_HOLDER_GC, slot->seq, slot->label_set_id);
}

/* Both modes: GC work is on-CPU time of this thread, so the closed span
 * goes to the sampler's GC frames whatever the mode. */
rperf_gc_span_t
rperf_on_gc_phase(rperf_thread_slot_t *slot, int phase, int64_t now)
{
    rperf_gc_span_t span = {RPERF_STATE_GC_MARK, 0};
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    if (!slot->gc_depth || phase == RPERF_GC_PHASE_NONE)
        return span;
    int prior = slot->state;
    int next = gc_state_for(phase);
    if (prior == next || (prior != RPERF_STATE_GC_MARK && prior != RPERF_STATE_GC_SWEEP))
        return span;
    int64_t since = clipped_since(slot);
    rperf_slot_write_begin(slot);
    charge(slot, prior, now, next);
    rperf_slot_write_end(slot);
    emit_interval(slot, r, prior, now);
    span.state = prior;
    span.ns = now - since;
    return span;
}

rperf_gc_span_t
rperf_on_gc_exit(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_gc_span_t span = {RPERF_STATE_GC_MARK, 0};
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    int prior = slot->state;
    if (!slot->gc_depth)
        return span;
    slot->gc_depth = 0;
    if (prior != RPERF_STATE_GC_MARK && prior != RPERF_STATE_GC_SWEEP)
        return span;
    int64_t since = clipped_since(slot);
    rperf_slot_write_begin(slot);
    charge(slot, prior, now, RPERF_STATE_RUNNING);
    rperf_slot_write_end(slot);
    emit_interval(slot, r, prior, now);
    push_holder(r, now, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    span.state = prior;
    span.ns = now - since;
    return span;
}

int
rperf_hook_count_event(rperf_thread_slot_t *slot)
{
    if (!slot) {
        __atomic_fetch_add(&run.orphan_events, 1, __ATOMIC_RELAXED);
        return 0;
    }
    uint64_t n = slot->hook_events + 1;
    RPERF_STORE(slot->hook_events, n);
    /* Time the first event of each thread and every 1024th after. */
    return (n & 1023) == 1;
}

void
rperf_hook_timed_end(int64_t start_ns)
{
    int64_t d = rperf_now_ns() - start_ns;
    if (d < 0)
        d = 0;
    __atomic_fetch_add(&run.timed_events, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&run.timed_ns, (uint64_t)d, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

/* Accounting stops while paused: the open state ends at the pause. */
static int64_t
accounting_now(int64_t now)
{
    if (run.paused_at_ns && run.paused_at_ns < now)
        return run.paused_at_ns;
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

void
rperf_slot_view_totals_now(const rperf_slot_view_t *view, int64_t now, int64_t totals[RPERF_STATE_COUNT])
{
    effective_totals(view, now, totals);
}

void
rperf_slot_totals_now(const rperf_thread_slot_t *slot, int64_t now, int64_t totals[RPERF_STATE_COUNT])
{
    rperf_slot_view_t v;
    rperf_slot_read(slot, &v);
    effective_totals(&v, now, totals);
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
 * the caller's rperf_cause_table_resolve_all) goes to "unknown". */
static void
flush_slot_label(rperf_thread_slot_t *slot, int64_t now)
{
    int64_t eff[RPERF_STATE_COUNT];
    int64_t meff[RPERF_SLOT_BLOCK_METHODS];
    rperf_slot_view_t v;
    rperf_slot_read(slot, &v);
    effective_totals(&v, now, eff);
    effective_methods(&v, now, meff);
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
    rperf_label_total_t *row = rperf_label_totals_row(&run.labels, slot->seq, RPERF_LOAD(slot->label_set_id));
    if (!row)
        return;
    for (int i = 0; i < RPERF_STATE_COUNT; i++) {
        row->totals[i] += delta[i];
        slot->label_base[i] += delta[i];
    }
    for (int i = 0; i < v.nmethods; i++) {
        int64_t d = meff[i] - slot->label_base_method_ns[i];
        if (d <= 0)
            continue;
        int cause = rperf_cause_table_cause_if_resolved(v.methods[i].frame);
        row->causes[cause < 0 ? RPERF_CAUSE_UNKNOWN : cause] += d;
        slot->label_base_method_ns[i] += d;
    }
}

int64_t
rperf_contention_set_label(rperf_thread_slot_t *slot, int label_set_id)
{
    if (slot->label_set_id == label_set_id)
        return rperf_contention_now_clipped();
    /* Names the methods blocked time waits in (it allocates: before the
     * clock reading and outside the mutex). */
    rperf_cause_table_resolve_all();
    int64_t now = rperf_contention_now_clipped();
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    pthread_mutex_lock(&run.label_mutex);
    if (rperf_contention_recording()) {
        flush_slot_label(slot, now);
        /* The caller holds its GVL: close its running interval under the
         * old label so the timeline and the holder history switch too. */
        int prior = slot->state;
        if (prior == RPERF_STATE_RUNNING) {
            rperf_slot_write_begin(slot);
            charge(slot, prior, now, prior);
            rperf_slot_write_end(slot);
            emit_interval(slot, r, prior, now);
        }
    }
    RPERF_STORE(slot->label_set_id, label_set_id);
    pthread_mutex_unlock(&run.label_mutex);
    if (rperf_contention_recording())
        push_holder(r, now, RPERF_HOLDER_THREAD, slot->seq, label_set_id);
    return now;
}

static void
flush_one(rperf_thread_slot_t *slot, void *arg)
{
    flush_slot_label(slot, *(int64_t *)arg);
}

void
rperf_contention_flush_labels(int64_t now)
{
    pthread_mutex_lock(&run.label_mutex);
    rperf_slots_foreach(flush_one, &now);
    pthread_mutex_unlock(&run.label_mutex);
}

rperf_label_total_t *
rperf_contention_label_totals(size_t *count, int clear)
{
    pthread_mutex_lock(&run.label_mutex);
    rperf_label_total_t *out = rperf_label_totals_copy(&run.labels, count);
    if (clear)
        rperf_label_totals_free(&run.labels);
    pthread_mutex_unlock(&run.label_mutex);
    return out;
}

/* ------------------------------------------------------------------ */
/* report intervals                                                    */

int64_t
rperf_contention_interval_start(void)
{
    return run.interval_start_ns;
}
int64_t
rperf_contention_interval_start_realtime(void)
{
    return run.interval_start_realtime_ns;
}
int
rperf_contention_sequence(void)
{
    return run.sequence;
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
    int64_t edge_cut = __atomic_load_n(&run.edge_cut_ns, __ATOMIC_RELAXED);
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
    if (run.cfg.counters_only)
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
     * the views or a later one also sees the new cut. */
    if (clear_cut_ns > 0)
        __atomic_store_n(&run.release_cut_ns, clear_cut_ns, __ATOMIC_RELAXED);
    uint32_t phase = __atomic_load_n(&run.cut_phase, __ATOMIC_RELAXED);
    __atomic_store_n(&run.cut_phase, phase | 1u, __ATOMIC_SEQ_CST);
    /* Orders the store before the view reads (store-load): a release whose
     * second read of the phase missed it is in every view read after. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

uint32_t
rperf_contention_views_end(void)
{
    uint32_t phase = (__atomic_load_n(&run.cut_phase, __ATOMIC_RELAXED) | 1u) + 1u;
    /* Release: a release that reads the new phase first writes its slot
     * after every view was read. */
    __atomic_store_n(&run.cut_phase, phase, __ATOMIC_RELEASE);
    return phase / 2;
}

uint32_t
rperf_contention_release_generation(void)
{
    return __atomic_load_n(&run.cut_phase, __ATOMIC_ACQUIRE) / 2;
}

void
rperf_contention_get_stats(rperf_contention_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t events = __atomic_load_n(&run.orphan_events, __ATOMIC_RELAXED);
    int n = rperf_slot_count();
    for (int seq = 1; seq <= n; seq++) {
        rperf_thread_slot_t *slot = rperf_slot_by_seq(seq);
        if (slot)
            events += RPERF_LOAD(slot->hook_events) - slot->base_hook_events;
    }
    out->hook_events = events;
    uint64_t timed = __atomic_load_n(&run.timed_events, __ATOMIC_RELAXED);
    uint64_t timed_ns = __atomic_load_n(&run.timed_ns, __ATOMIC_RELAXED);
    out->hook_time_ns = timed ? (uint64_t)((double)events * (double)timed_ns / (double)timed) : 0;
    uint64_t dropped = __atomic_load_n(&run.unattributed_intervals, __ATOMIC_RELAXED);
    for (int i = 0; i < rperf_ractor_count(); i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i + 1);
        if (r)
            dropped += rperf_interval_buffer_take_dropped(&r->intervals, 0);
    }
    out->dropped_intervals = dropped;
    out->dropped_edges = rperf_edges_dropped(0);
    out->dropped_threads = rperf_slot_dropped();
    out->coalesced_intervals = __atomic_load_n(&run.coalesced, __ATOMIC_RELAXED);
    out->edge_lock_contended = rperf_edges_lock_contended(0);
    out->paused_ns = run.paused_ns;
    out->dropped_causes = rperf_cause_table_dropped(0);
    out->dropped_blocked_edges = __atomic_load_n(&run.dropped_releases, __ATOMIC_RELAXED);
    if (run.paused_at_ns) {
        int64_t from = run.paused_at_ns > run.interval_start_ns ? run.paused_at_ns : run.interval_start_ns;
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
        return;
    }
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
    run.interval_start_ns = now;
    run.interval_start_realtime_ns = now_realtime;
    run.sequence++;
    run.paused_ns = 0;
    __atomic_store_n(&run.edge_cut_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&run.orphan_events, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&run.unattributed_intervals, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&run.coalesced, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < rperf_ractor_count(); i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i + 1);
        if (r)
            rperf_interval_buffer_take_dropped(&r->intervals, 1);
    }
    rperf_edges_dropped(1);
    rperf_edges_lock_contended(1);
    rperf_cause_table_dropped(1);
    __atomic_store_n(&run.dropped_releases, 0, __ATOMIC_RELAXED);
    rperf_slot_pool_reset_dropped();
}
