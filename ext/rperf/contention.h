/*
 * contention.h — exact per-thread state accounting and the report-interval
 * bookkeeping around it.
 *
 * The GVL and GC hooks report events here; each event closes the state the
 * thread was in (the event itself proves which state that was: SUSPENDED
 * proves the thread held the GVL, READY that it did not, RESUMED that it was
 * waiting) and opens the next. Closing charges the elapsed time to the
 * slot's totals, emits a timeline interval and, for waits, the wait edges;
 * in counters mode (cfg.counters_only) it charges the totals alone.
 * This file does NOT install hooks (gvl_hooks.c, gc_hooks.c), does NOT
 * find out which Ractor is calling (ractor_registry.h: callers pass the
 * Ractor in), does NOT sample stacks (the events return the time the hooks
 * hand to the sampler) and does NOT build Ruby objects (report_builder.c).
 *
 * Contract
 * - rperf_contention_start/begin_recording/stop/destroy, set_label and the
 *   readers: Ruby context with the GVL (start/stop/destroy on the main
 *   Ractor only); they may allocate.
 * - rperf_on_*: called from hooks; never allocate, never call Ruby, never
 *   block. on_ready/on_exited may run without any GVL and in parallel with
 *   hooks of other Ractors; they touch only the slot and atomics.
 *   on_suspended/on_resumed/on_gc_* run while the thread is its Ractor's
 *   GVL holder, which serialises the Ractor's ring and interval buffer
 *   (the ring's own lock admits a report builder of another Ractor).
 * - A slot's `ractor` is set by the callers (hooks, registration job,
 *   the Ruby methods) before or while events arrive; an event of a thread
 *   whose Ractor is still unknown is charged to the thread alone (its
 *   interval and edges are counted as unattributed).
 */
#ifndef RPERF_CONTENTION_H
#define RPERF_CONTENTION_H

#include <ruby.h>
#include <stdint.h>
#include "label_totals.h"
#include "report_format.h" /* RPERF_REPORT_STATS */
#include "ractor_table.h"
#include "thread_slot.h"
#include "wait_edges.h"

enum rperf_gc_phase { RPERF_GC_PHASE_NONE = 0, RPERF_GC_PHASE_MARK = 1, RPERF_GC_PHASE_SWEEP = 2 };

typedef struct rperf_contention_config {
    int max_threads;
    long max_intervals; /* per Ractor */
    long max_edges;
    int64_t min_interval_ns; /* shorter intervals fold into the thread's next one */
    int timeline;            /* 0: record no intervals */
    int wall_mode;           /* sampler mode: wall records [GVL blocked]/[GVL wait] */
    int counters_only;       /* counters mode: slot totals only (no timeline, holder
                                * rings, edges or waiters counts); timeline must be 0 */
} rperf_contention_config_t;

/* What the hooks record (rperf_contention_recording): nothing, everything,
 * or in counters mode only the slots' state totals (rperf_count_*). */
enum rperf_recording {
    RPERF_RECORDING_OFF = 0,
    RPERF_RECORDING_FULL = 1,
    RPERF_RECORDING_COUNTERS = 2,
};

/* Counters of the current report interval (see report stats). */
/* The report's CONTENTION stats (RPERF_REPORT_STATS, report_format.h). */
#define RPERF_CONTENTION_STAT_FIELD(name) uint64_t name;
#define RPERF_CONTENTION_STAT_X(name, counter) RPERF_STAT_IF(CONTENTION, counter, RPERF_CONTENTION_STAT_FIELD, name)
typedef struct rperf_contention_stats {
    RPERF_REPORT_STATS(RPERF_CONTENTION_STAT_X)
} rperf_contention_stats_t;

/* ---- lifecycle (Ruby context, main Ractor, GVL) ---- */
/* Creates the slot pool, the edge table and an empty Ractor table; nothing
 * records yet. Then the caller registers the main Ractor (a profile is
 * active from here: rperf_ractor_register_current works) and calls
 * begin_recording, or destroy when that fails. */
int rperf_contention_start(const rperf_contention_config_t *cfg, int paused, const char **err);
/* The caller (running, on main_ractor) gets its slot; hooks record from
 * now on unless the profile started paused. */
void rperf_contention_begin_recording(VALUE caller, rperf_ractor_slot_t *main_ractor);
/* After the hooks are removed: no hook can run any more. */
void rperf_contention_destroy(void);
int rperf_contention_active(void); /* a profile exists (running or paused) */
/* enum rperf_recording: OFF while paused, stopping or inactive; one load,
 * so the hooks learn the mode from the same read that tells them to record. */
int rperf_contention_recording(void);
void rperf_contention_pause(int64_t now_ns);
/* Before the hooks are removed at stop: nothing records from now on. */
void rperf_contention_stop_recording(void);
/* caller_ractor: the caller's Ractor (NULL if unknown); its other threads
 * restart as blocked. */
void rperf_contention_resume(VALUE caller, rperf_ractor_slot_t *caller_ractor, int64_t now_ns);
/* Fork child: stop recording without touching locks or other threads. */
void rperf_contention_after_fork_child(void);
int rperf_contention_forked_child_pending(void);

/* Clock reading clipped to the last resume: accounting never reaches back
 * into a paused period. */
int64_t rperf_contention_now_clipped(void);
/* Where accounting of a reading at `now` ends: the pause, while paused. */
int64_t rperf_contention_accounting_end(int64_t now);
int64_t rperf_contention_clip_ns(void);
uint32_t rperf_contention_epoch(void);
const rperf_contention_config_t *rperf_contention_config(void);

/* ---- events (hooks) ---- */
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

/* ---- Ruby-side operations (the thread itself, GVL held) ---- */
/* The slot's ractor should be set (the caller registers it): the closing
 * interval and the holder ring need it. */
/* Returns the clock reading the switch took (a fresh one when the label
 * was already set): the slot's totals read at it are the label boundary's. */
int64_t rperf_contention_set_label(rperf_thread_slot_t *slot, int label_set_id);
/* Cumulative totals of a slot up to now (open state included). */
void rperf_slot_totals_now(const rperf_thread_slot_t *slot, int64_t now, int64_t totals[RPERF_STATE_COUNT]);
/* The same from a view read before (another thread's slot, one consistent read). */
void rperf_slot_view_totals_now(const rperf_slot_view_t *view, int64_t now, int64_t totals[RPERF_STATE_COUNT]);

/* ---- report interval (GVL held, main Ractor) ---- */
typedef struct rperf_cut {
    int64_t start_ns; /* report interval start (monotonic) */
    int64_t start_realtime_ns;
    int64_t end_ns; /* the cut */
    int final;      /* stop: hooks are gone */
} rperf_cut_t;

int64_t rperf_contention_interval_start(void);
int64_t rperf_contention_interval_start_realtime(void);
int rperf_contention_sequence(void);
/* Moves each slot's label portion up to `now` into the label table. */
void rperf_contention_flush_labels(int64_t now);
/* Copies the label table (malloc'd array, caller frees); clear empties it. */
rperf_label_total_t *rperf_contention_label_totals(size_t *count, int clear);
/* Attributes the open part of every wait in progress in `views` (the slot
 * views read at the cut, by seq - 1) up to cut->end_ns into `extra` edges
 * (not the shared table); see contention.c. Nothing in counters mode. */
void rperf_contention_cut_open_waits(const rperf_cut_t *cut, const rperf_slot_view_t *views, int nviews,
                                     rperf_edge_list_t *extra);
/* The report's copy of the edge table (rperf_edges_cut over every
 * Ractor's ring): it takes the deferred waits `views` show ended, leaves
 * later ones to the next report (clipped to the cut with clear) and, with
 * clear, empties the table. Report builder only; -1 when out of memory. */
int rperf_contention_cut_edges(const rperf_cut_t *cut, const rperf_slot_view_t *views, int nviews, int clear,
                               rperf_edge_list_t *out);
void rperf_contention_get_stats(rperf_contention_stats_t *out);
/* Report builder: brackets its reading of the slot views (views_begin
 * before the first, views_end after the last). views_end returns the
 * report's generation: release stacks of a generation below it are
 * releases its views include, the others belong to later reports.
 * clear_cut_ns (0 unless the report clears) is the cut: from it on, a
 * release adds only blocked time after the cut to its edge (the time
 * before is this report's, whose views may miss the release). */
void rperf_contention_views_begin(int64_t clear_cut_ns);
uint32_t rperf_contention_views_end(void);
/* Report cuts completed so far in this profile (the generation of a
 * release recorded now, between cuts). */
uint32_t rperf_contention_release_generation(void);
/* Starts the next report interval at `now` (snapshot clear): resets
 * counters and stores per-slot baselines. */
/* views[seq - 1] are the slot views the report was built from (read at the
 * cut, before any Ruby allocation could run GC hooks on the builder), so
 * the baselines match the report exactly; NULL reads them afresh. */
void rperf_contention_begin_interval(int64_t now, int64_t now_realtime, const rperf_slot_view_t *views, int nviews);
/* Slot delta for the current report from a view read at the cut:
 * totals/counts minus baselines. */
void rperf_slot_report_totals(const rperf_thread_slot_t *slot, int64_t cut_ns, const rperf_slot_view_t *view,
                              int64_t delta[RPERF_STATE_COUNT], uint64_t *acquisitions, uint64_t *waits);
/* The same for blocked methods and releases (indexes of the slot's lists):
 * the method deltas sum to the blocked delta. */
typedef struct rperf_slot_cause_delta {
    int64_t method_ns[RPERF_SLOT_BLOCK_METHODS];
    uint32_t method_count[RPERF_SLOT_BLOCK_METHODS];
    int64_t release_ns[RPERF_SLOT_RELEASES];
    uint64_t release_count[RPERF_SLOT_RELEASES];
} rperf_slot_cause_delta_t;
void rperf_slot_report_methods(const rperf_thread_slot_t *slot, int64_t cut_ns, const rperf_slot_view_t *view,
                               rperf_slot_cause_delta_t *out);
/* Cumulative blocked time per method of a view up to `now` (open span included). */
void rperf_slot_methods_now(const rperf_slot_view_t *view, int64_t now, int64_t ns[RPERF_SLOT_BLOCK_METHODS]);

#endif
