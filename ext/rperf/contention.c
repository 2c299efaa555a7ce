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
    rperf_contention_config_t cfg;

    int64_t interval_start_ns;
    int64_t interval_start_realtime_ns;
    int sequence;

    uint64_t orphan_events;          /* atomic: events of threads without a slot */
    uint64_t unattributed_intervals; /* atomic: intervals of unidentified Ractors */
    uint64_t coalesced;              /* atomic */
    uint64_t timed_events;           /* atomic */
    uint64_t timed_ns;               /* atomic */

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
    if (rperf_slot_pool_create(cfg->max_threads, err) < 0)
        return -1;
    /* Counters mode records no edges: the smallest table serves its cuts. */
    if (rperf_edges_create(cfg->counters_only ? 1 : cfg->max_edges, edge_lost) < 0) {
        rperf_slot_pool_destroy();
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
    run.interval_start_ns = now;
    run.interval_start_realtime_ns = rperf_realtime_ns();
    run.sequence = 0;
    run.orphan_events = run.unattributed_intervals = run.coalesced = 0;
    run.timed_events = run.timed_ns = 0;
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
    rperf_slot_write_end(slot);
}

void
rperf_contention_resume(VALUE caller, rperf_ractor_slot_t *r, int64_t now_ns)
{
    if (!run.active || !run.paused_at_ns)
        return;
    if (run.paused_at_ns > run.interval_start_ns)
        run.paused_ns += now_ns - run.paused_at_ns;
    else
        run.paused_ns += now_ns - run.interval_start_ns;
    run.paused_at_ns = 0;
    __atomic_store_n(&run.clip_ns, now_ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&run.epoch, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&run.edge_cut_ns, now_ns, __ATOMIC_RELAXED);

    rperf_thread_slot_t *slot = rperf_slot_claim(caller, now_ns);
    if (slot) {
        /* The caller is running now; whatever it was before is paused time. */
        rperf_slot_write_begin(slot);
        RPERF_STORE(slot->state, RPERF_STATE_RUNNING);
        RPERF_STORE(slot->state_since_ns, now_ns);
        RPERF_STORE(slot->timeline_from_ns, now_ns);
        RPERF_STORE(slot->ready_ns, 0);
        rperf_slot_write_end(slot);
        push_holder(r, now_ns, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    }
    if (r) {
        struct resume_reset rr = {slot, r, now_ns};
        rperf_slots_foreach(reset_one_after_pause, &rr);
    }
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

/* Within the seqlock: charge [since, now) to `state`, open `next`. */
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

/* Within the seqlock: READY proves the thread did not hold the GVL since
 * its last event; a repeated READY continues the wait that began earlier. */
static inline void
close_for_ready(rperf_thread_slot_t *slot, int64_t now)
{
    if (slot->state == RPERF_STATE_GVL_WAIT) {
        RPERF_STORE(slot->last_seen_ns, now);
        return;
    }
    int64_t blocked = now - clipped_since(slot);
    slot->ready_blocked_ns = blocked > 0 ? blocked : 0;
    charge(slot, RPERF_STATE_BLOCKED, now, RPERF_STATE_GVL_WAIT);
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

void
rperf_on_ready(rperf_thread_slot_t *slot, int64_t now)
{
    if (slot->exited)
        return;
    rperf_count_ready(slot, now);

    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    if (r && !slot->waiting_counted) {
        __atomic_fetch_add(&r->waiters, 1, __ATOMIC_RELAXED);
        slot->waiting_counted = r;
    }
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
            rperf_wait_defer(r->ring, rperf_contention_epoch(), slot->seq, slot->label_set_id, edge_from, now);
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
    if (r)
        rperf_holder_ring_push(r->ring, now, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id,
                               rperf_contention_epoch());
    return off;
}

void
rperf_on_suspended(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    int prior = slot->state;
    int held = held_state(prior);

    if (r && prior == RPERF_STATE_BLOCKED) {
        /* Duplicate SUSPENDED: the previous one did not give the GVL away
         * (an interrupted sleep), so the hand-off we recorded was this
         * thread still holding it. */
        rperf_holder_ring_reclaim_handoff(r->ring, slot->seq, slot->label_set_id);
    }
    rperf_slot_write_begin(slot);
    charge(slot, held, now, RPERF_STATE_BLOCKED);
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
    int prior = slot->state;
    charge(slot, prior == RPERF_STATE_GVL_WAIT ? RPERF_STATE_GVL_WAIT : RPERF_STATE_BLOCKED, now,
           RPERF_STATE_BLOCKED);
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
    rperf_slot_write_begin(slot);
    close_for_ready(slot, now);
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
    rperf_slot_write_begin(slot);
    charge(slot, held_state(slot->state), now, RPERF_STATE_BLOCKED);
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

static void
effective_totals(const rperf_slot_view_t *v, int64_t now, int64_t out[RPERF_STATE_COUNT])
{
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        out[i] = v->totals[i];
    if (v->exited)
        return;
    int64_t since = v->state_since_ns;
    int64_t clip = rperf_contention_clip_ns();
    if (since < clip)
        since = clip;
    int64_t d = accounting_now(now) - since;
    if (d > 0 && v->state >= 0 && v->state < RPERF_STATE_COUNT)
        out[v->state] += d;
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

/* Mutex held. */
static void
flush_slot_label(rperf_thread_slot_t *slot, int64_t now)
{
    int64_t eff[RPERF_STATE_COUNT];
    rperf_slot_totals_now(slot, now, eff);
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
}

void
rperf_contention_set_label(rperf_thread_slot_t *slot, int label_set_id)
{
    if (slot->label_set_id == label_set_id)
        return;
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
        slot->base_acquisitions = 0;
        slot->base_waits = 0;
        slot->base_hook_events = 0;
        return;
    }
    effective_totals(v, ctx->now, slot->base_totals);
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
    rperf_slot_pool_reset_dropped();
}
