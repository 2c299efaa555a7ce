/*
 * contention_events.h — the GVL and GC events, as the hooks hand them over:
 * each event closes the state the thread was in (the event proves which:
 * SUSPENDED that it held the GVL, READY that it did not, RESUMED that it
 * wanted it) and opens the next, charging the slot's totals and, in full
 * recording, the timeline, the holder ring and the wait edges.
 *
 * It does NOT install hooks (gvl_hooks.c, gc_hooks.c), does NOT find the
 * calling Ractor (the hooks pass it in the slot), does NOT sample stacks
 * (events return what the hooks hand to the sampler) and does NOT start,
 * pause or cut a profile (contention.c).
 *
 * Contract
 * - Everything here runs inside hooks: it never allocates, never calls
 *   Ruby beyond reading frames, never blocks (test/c/check_hook_calls.rb
 *   checks the first two on every path from the hooks).
 * - on_ready/on_exited may run without any GVL and in parallel with hooks
 *   of other Ractors; they touch only the slot and atomics.
 *   on_suspended/on_resumed/on_gc_* run while the thread is its Ractor's
 *   GVL holder, which serialises the Ractor's ring and interval buffer
 *   (the ring's own lock admits a report builder of another Ractor).
 * - The helpers at the end are contention.c's too (pause, resume, label
 *   switches run the same steps with the GVL held).
 */
#ifndef RPERF_CONTENTION_EVENTS_H
#define RPERF_CONTENTION_EVENTS_H

#include <ruby.h>
#include <stdint.h>
#include "contention_state.h"
#include "ractor_table.h"
#include "thread_slot.h"

enum rperf_gc_phase { RPERF_GC_PHASE_NONE = 0, RPERF_GC_PHASE_MARK = 1, RPERF_GC_PHASE_SWEEP = 2 };

/* What a RESUMED ended off the GVL, for the sampler's [GVL blocked] and
 * [GVL wait] frames: both 0 unless the thread waited and the profile is in
 * wall mode. */
typedef struct rperf_off_gvl {
    int64_t blocked_ns; /* the blocked time READY charged */
    int64_t wait_ns;    /* the wait that ends now */
} rperf_off_gvl_t;

/* The GC time an event closed (ns 0: none), for the sampler's GC frames. */
typedef struct rperf_gc_span {
    int state; /* RPERF_STATE_GC_MARK or RPERF_STATE_GC_SWEEP */
    int64_t ns;
} rperf_gc_span_t;

/* What a READY released, for the sampler's release stack (the hook hands
 * it on): releaser_seq 0 = no stack wanted (no releaser, a wait that is not
 * releasable, or a full release list). When lost_at_cut is set the release
 * happened while a report was reading the threads, so no report can tell
 * whether it is in its release edges: it gets no stack (counted). */
typedef struct rperf_release_event {
    int releaser_seq;    /* the GVL holder running on this native thread */
    int release_index;   /* the release's entry in the waiter's release list */
    uint32_t generation; /* report cuts completed before the release */
    int lost_at_cut;
    int64_t ns; /* the blocked time it ended: the same figure as its edge */
} rperf_release_event_t;

/* Full recording (RPERF_RECORDING_FULL): totals, timeline, holder ring,
 * wait edges and the Ractor's waiters count. */
rperf_release_event_t rperf_on_ready(rperf_thread_slot_t *slot, int64_t now);
/* The slot's native_id is set here; its ractor must be set before the call
 * when it can be known (the hook looks it up). */
rperf_off_gvl_t rperf_on_resumed(rperf_thread_slot_t *slot, int64_t now);
void rperf_on_suspended(rperf_thread_slot_t *slot, int64_t now);
/* Both modes: EXITED touches only the slot. */
void rperf_on_exited(rperf_thread_slot_t *slot, int64_t now);
/* Counters mode (RPERF_RECORDING_COUNTERS): the same state machine, only
 * the slot's seqlock'd totals and counts (no Ractor line is written). */
void rperf_count_ready(rperf_thread_slot_t *slot, int64_t now);
void rperf_count_resumed(rperf_thread_slot_t *slot, int64_t now);
void rperf_count_suspended(rperf_thread_slot_t *slot, int64_t now);
/* Paused: keep only the Ractor waiters counts right. */
void rperf_on_resumed_paused(rperf_thread_slot_t *slot);
void rperf_on_gc_enter(rperf_thread_slot_t *slot, int phase, int64_t now);
rperf_gc_span_t rperf_on_gc_exit(rperf_thread_slot_t *slot, int64_t now);
rperf_gc_span_t rperf_on_gc_phase(rperf_thread_slot_t *slot, int phase, int64_t now);
/* A blocked interval's `cause` byte: the cause when the method's cause is
 * already resolved, else RPERF_INTERVAL_CAUSE_PENDING | the thread's method
 * index (the report builder resolves it through the thread's slot). */
#define RPERF_INTERVAL_CAUSE_PENDING 0x80
uint8_t rperf_interval_cause_byte(uint32_t frame, int method);
/* Hook bookkeeping: counts the event; times one in 1024 (returns 1 when
 * the caller must call rperf_hook_timed_end with its start time). */
int rperf_hook_count_event(rperf_thread_slot_t *slot);
void rperf_hook_timed_end(int64_t start_ns);

/* ---- steps shared with contention.c ---- */
/* The slot's open state began at or after the clip. */
static inline int64_t
rperf_slot_clipped_since(const rperf_thread_slot_t *slot)
{
    int64_t since = slot->state_since_ns;
    int64_t clip = rperf_contention_clip_ns();
    return since < clip ? clip : since;
}

/* rperf_slot_write_begin, then the time the event takes: `now`, or the
 * last clearing cut when the event's clock read preceded that cut but its
 * write comes after (the hook was preempted in between, or ran on another
 * CPU while the cut read the views). The views missed it, so the report
 * before the cut counted the old state up to the cut. Taken at `now`, the
 * next report would count that span again in the new state (its totals
 * are cumulative) while its edges and timeline start at the cut. Dekker
 * with rperf_contention_views_begin: this load follows the version's
 * sequentially consistent CAS; the cut stores the time, fences, then reads
 * the version. Either its view sees this write, or this load sees the cut. */
static inline int64_t
rperf_event_write_begin(rperf_thread_slot_t *slot, int64_t now)
{
    rperf_slot_write_begin(slot);
    int64_t cut = __atomic_load_n(&rperf_run.release_cut_ns, __ATOMIC_SEQ_CST);
    return now < cut ? cut : now;
}

/* Within the seqlock: charge [since, now) to `state`, open `next`.
 * Blocked time belongs to the current method (rperf_contention_switch_method), so the
 * methods always sum to the blocked total. */
static inline void
rperf_slot_charge(rperf_thread_slot_t *slot, int state, int64_t now, int next)
{
    int64_t d = now - rperf_slot_clipped_since(slot);
    if (d > 0)
        RPERF_STORE(slot->totals[state], slot->totals[state] + d);
    RPERF_STORE(slot->state, next);
    RPERF_STORE(slot->state_since_ns, now);
    RPERF_STORE(slot->last_seen_ns, now);
}

/* The state a holder was in until now: GC work or running. */
static inline int
rperf_held_state(int prior)
{
    return (prior == RPERF_STATE_GC_MARK || prior == RPERF_STATE_GC_SWEEP) ? prior : RPERF_STATE_RUNNING;
}

/* Within the seqlock: the blocked time and spans of the method in
 * progress move into its entry, and `idx` becomes the method in progress. */
void rperf_contention_switch_method(rperf_thread_slot_t *slot, int idx);
/* Holder context only: append [from, to) in `state` to the Ractor's
 * timeline, folding it into the next interval when shorter than
 * min_interval_ns. */
void rperf_contention_emit_interval(rperf_thread_slot_t *slot, rperf_ractor_slot_t *r, int state, int64_t to);
/* The holder history of a Ractor; counters mode keeps none. */
void rperf_contention_push_holder(rperf_ractor_slot_t *r, int64_t now, int kind, int seq, int label_set_id);
/* Wait time a full edge table could not take (hook or builder context). */
void rperf_contention_edge_lost(int waiter, int64_t ns);

#endif
