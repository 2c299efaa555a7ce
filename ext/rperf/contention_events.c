/*
 * contention_events.c — the state machine behind every GVL/GC event: each
 * hook's event closes the thread's state and opens the next.
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
 * Only code the hooks run lives here (test/c/check_hook_calls.rb checks
 * it). This file does NOT install hooks, does NOT build Ruby objects, does
 * NOT call the sampler (events return what the hooks hand to it) and does
 * NOT allocate.
 */
#include "contention_events.h"
#include "cause_table.h"
#include "clock.h"
#include "interval_buffer.h"
#include "native_tid.h"
#include "wait_edges.h"

/* The holder history of a Ractor; counters mode keeps none. */
void
rperf_contention_push_holder(rperf_ractor_slot_t *r, int64_t now, int kind, int seq, int label_set_id)
{
    if (!r || rperf_run.cfg.counters_only)
        return;
    rperf_holder_ring_push(r->ring, now, kind, seq, label_set_id, rperf_contention_epoch());
}

/* Within the seqlock: the blocked time and spans of the method in
 * progress move into its entry, and `idx` becomes the method in progress. */
void
rperf_contention_switch_method(rperf_thread_slot_t *slot, int idx)
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
    rperf_contention_switch_method(slot, idx);
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
        __atomic_fetch_add(&rperf_run.dropped_releases, 1, __ATOMIC_RELAXED);
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
    int64_t since = rperf_slot_clipped_since(slot);
    int64_t blocked = now - since;
    slot->ready_blocked_ns = blocked > 0 ? blocked : 0;
    rperf_slot_charge(slot, RPERF_STATE_BLOCKED, now, RPERF_STATE_GVL_WAIT);
    RPERF_STORE(slot->runnable_ns, now);
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        RPERF_STORE(slot->runnable_totals[i], slot->totals[i]);
    RPERF_STORE(slot->ready_releaser, releaser);
    if (releaser && slot->block_method > 0) {
        /* Before the last clear the span belongs to the previous report,
         * where it was open (no releaser yet). */
        int64_t cut = __atomic_load_n(&rperf_run.release_cut_ns, __ATOMIC_RELAXED);
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
        rperf_slot_charge(slot, RPERF_STATE_GVL_WAIT, now, RPERF_STATE_RUNNING);
        waited = 1;
        RPERF_STORE(slot->acquisitions, slot->acquisitions + 1);
        if (prior == RPERF_STATE_GVL_WAIT && slot->ready_ns)
            RPERF_STORE(slot->waits, slot->waits + 1);
    } else {
        rperf_slot_charge(slot, prior, now, RPERF_STATE_RUNNING);
    }
    RPERF_STORE(slot->ready_ns, 0);
    return waited;
}

/* Holder context only: append [from, to) in `state` to the Ractor's
 * timeline, folding it into the next interval when shorter than
 * min_interval_ns. */
void
rperf_contention_emit_interval(rperf_thread_slot_t *slot, rperf_ractor_slot_t *r, int state, int64_t to)
{
    int64_t from = slot->timeline_from_ns;
    int64_t clip = rperf_contention_clip_ns();
    if (from < clip)
        from = clip;
    if (to <= from)
        return;
    if (!rperf_run.cfg.timeline) {
        /* No timeline, but timeline_from_ns still marks where the next
         * state began: the [GVL blocked] weight at RESUMED is read from it. */
        RPERF_STORE(slot->timeline_from_ns, to);
        return;
    }
    if (rperf_run.cfg.min_interval_ns > 0 && to - from < rperf_run.cfg.min_interval_ns) {
        __atomic_fetch_add(&rperf_run.coalesced, 1, __ATOMIC_RELAXED);
        return;
    }
    RPERF_STORE(slot->timeline_from_ns, to);
    if (!r) {
        __atomic_fetch_add(&rperf_run.unattributed_intervals, 1, __ATOMIC_RELAXED);
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
    uint32_t phase_before = releaser ? __atomic_load_n(&rperf_run.cut_phase, __ATOMIC_ACQUIRE) : 0;
    now = rperf_event_write_begin(slot, now);
    close_for_ready(slot, now, releaser, releaser_label, &release);
    rperf_slot_write_end(slot);
    if (releaser && wants_release_stack(slot, release.release_index)) {
        /* Orders the slot write before the second read (store-load). */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uint32_t phase_after = __atomic_load_n(&rperf_run.cut_phase, __ATOMIC_RELAXED);
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
void
rperf_contention_edge_lost(int waiter, int64_t ns)
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
    int64_t wait_from = rperf_slot_clipped_since(slot);
    int64_t blocked_from = slot->timeline_from_ns;

    now = rperf_event_write_begin(slot, now);
    int waited = close_for_resumed(slot, prior, now);
    if (waited) {
        /* Inside the write section: a report builder whose view of this
         * slot shows the wait ended must also find it in the ring (or the
         * unknown counter) when it cuts the edges, or the wait would count
         * in its totals and in no report's edges (the next one clips it to
         * its cut). */
        int64_t cut = __atomic_load_n(&rperf_run.edge_cut_ns, __ATOMIC_RELAXED);
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
            rperf_contention_emit_interval(slot, r, RPERF_STATE_BLOCKED, ready);
        }
        rperf_contention_emit_interval(slot, r, RPERF_STATE_GVL_WAIT, now);
        if (rperf_run.cfg.wall_mode) {
            /* Exactly the blocked time READY charged (timeline_from_ns may
             * lie earlier when short intervals were folded). */
            off.blocked_ns = prior == RPERF_STATE_GVL_WAIT && ready ? slot->ready_blocked_ns : 0;
            off.wait_ns = now - wait_from;
        }
    } else {
        rperf_contention_emit_interval(slot, r, prior, now);
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
    int held = rperf_held_state(prior);
    /* Read while the thread still holds its GVL: no GC can move the frame. */
    VALUE leaf = rperf_cause_table_leaf(slot->thread);
    clear_holder(r);

    if (r && prior == RPERF_STATE_BLOCKED) {
        /* Duplicate SUSPENDED: the previous one did not give the GVL away
         * (an interrupted sleep), so the hand-off we recorded was this
         * thread still holding it. */
        rperf_holder_ring_reclaim_handoff(r->ring, slot->seq, slot->label_set_id);
    }
    now = rperf_event_write_begin(slot, now);
    rperf_slot_charge(slot, held, now, RPERF_STATE_BLOCKED);
    begin_blocked(slot, leaf);
    rperf_slot_write_end(slot);
    if (prior == RPERF_STATE_GVL_WAIT)
        settle_waiter(slot);

    rperf_contention_emit_interval(slot, r, held, now);
    /* Hand-off segments remember who released (reported as holder 0). */
    if (r)
        rperf_holder_ring_push(r->ring, now, RPERF_HOLDER_HANDOFF, slot->seq, 0, rperf_contention_epoch());
}

void
rperf_on_exited(rperf_thread_slot_t *slot, int64_t now)
{
    now = rperf_event_write_begin(slot, now);
    int last = slot->state == RPERF_STATE_GVL_WAIT ? RPERF_STATE_GVL_WAIT : RPERF_STATE_BLOCKED;
    /* The state stays the one charged: without the GVL this hook cannot
     * write the Ractor's timeline, so the report builder emits the span
     * [timeline_from_ns, state_since_ns) in that state. */
    rperf_slot_charge(slot, last, now, last);
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
    now = rperf_event_write_begin(slot, now);
    close_for_ready(slot, now, 0, 0, &none);
    rperf_slot_write_end(slot);
}

void
rperf_count_resumed(rperf_thread_slot_t *slot, int64_t now)
{
    now = rperf_event_write_begin(slot, now);
    close_for_resumed(slot, slot->state, now);
    rperf_slot_write_end(slot);
}

void
rperf_count_suspended(rperf_thread_slot_t *slot, int64_t now)
{
    VALUE leaf = rperf_cause_table_leaf(slot->thread);
    now = rperf_event_write_begin(slot, now);
    rperf_slot_charge(slot, rperf_held_state(slot->state), now, RPERF_STATE_BLOCKED);
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
    int held = rperf_held_state(slot->state);
    now = rperf_event_write_begin(slot, now);
    rperf_slot_charge(slot, held, now, gc_state);
    rperf_slot_write_end(slot);
    slot->gc_depth = 1;
    rperf_contention_emit_interval(slot, r, held, now);
    rperf_contention_push_holder(r, now, RPERF_HOLDER_GC, slot->seq, slot->label_set_id);
}

/* Both modes: GC work is on-CPU time of this thread, so the closed span
 * goes to the sampler's GC frames whatever the mode. */
/* The GC phase `prior` ends now and `next` begins: its time is charged,
 * its interval emitted, and it is returned for the sampler's GC frames. */
static rperf_gc_span_t
close_gc_span(rperf_thread_slot_t *slot, rperf_ractor_slot_t *r, int prior, int64_t now, int next)
{
    int64_t since = rperf_slot_clipped_since(slot);
    now = rperf_event_write_begin(slot, now);
    rperf_slot_charge(slot, prior, now, next);
    rperf_slot_write_end(slot);
    rperf_contention_emit_interval(slot, r, prior, now);
    return (rperf_gc_span_t){prior, now - since};
}

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
    return close_gc_span(slot, r, prior, now, next);
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
    span = close_gc_span(slot, r, prior, now, RPERF_STATE_RUNNING);
    rperf_contention_push_holder(r, now, RPERF_HOLDER_THREAD, slot->seq, slot->label_set_id);
    return span;
}

int
rperf_hook_count_event(rperf_thread_slot_t *slot)
{
    if (!slot) {
        __atomic_fetch_add(&rperf_run.orphan_events, 1, __ATOMIC_RELAXED);
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
    __atomic_fetch_add(&rperf_run.timed_events, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&rperf_run.timed_ns, (uint64_t)d, __ATOMIC_RELAXED);
}
