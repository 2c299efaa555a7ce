/*
 * contention.h — a profile's exact accounting around the events: start,
 * pause, resume and stop, label switches, the readers of a thread's
 * totals, and the report-interval bookkeeping (cuts, baselines, counters).
 * The events themselves are contention_events.h, the shared state
 * contention_state.h; this header includes both.
 *
 * This file does NOT install hooks (gvl_hooks.c, gc_hooks.c), does NOT
 * find out which Ractor is calling (ractor_registry.h: callers pass the
 * Ractor in), does NOT sample stacks and does NOT build Ruby objects
 * (report_builder.c).
 *
 * Contract
 * - Everything here: Ruby context with the GVL (start/stop/destroy on the
 *   main Ractor only); it may allocate.
 * - A slot's `ractor` is set by the callers (hooks, registration job,
 *   the Ruby methods) before or while events arrive; an event of a thread
 *   whose Ractor is still unknown is charged to the thread alone (its
 *   interval and edges are counted as unattributed).
 */
#ifndef RPERF_CONTENTION_H
#define RPERF_CONTENTION_H

#include <ruby.h>
#include <stdint.h>
#include "contention_events.h"
#include "contention_state.h"
#include "label_totals.h"
#include "report_format.h" /* RPERF_REPORT_STATS */
#include "ractor_table.h"
#include "thread_slot.h"
#include "wait_edges.h"

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
void rperf_contention_pause(int64_t now_ns);
/* Before the hooks are removed at stop: nothing records from now on. */
void rperf_contention_stop_recording(void);
/* caller_ractor: the caller's Ractor (NULL if unknown); its other threads
 * restart as blocked. */
void rperf_contention_resume(VALUE caller, rperf_ractor_slot_t *caller_ractor, int64_t now_ns);
/* Fork child: stop recording without touching locks or other threads. */
void rperf_contention_after_fork_child(void);

/* Where accounting of a reading at `now` ends: the pause, while paused. */
int64_t rperf_contention_accounting_end(int64_t now);

/* ---- Ruby-side operations (the thread itself, GVL held) ---- */
/* The slot's ractor should be set (the caller registers it): the closing
 * interval and the holder ring need it. */
/* Returns the clock reading the switch took (a fresh one when the label
 * was already set): the slot's totals read at it are the label boundary's. */
int64_t rperf_contention_set_label(rperf_thread_slot_t *slot, int label_set_id);
/* The same, with the slot's counts (rperf_slot_read_counts) in *view: read
 * once, before the switch closed its running span, which changes no figure
 * at the returned clock reading. */
int64_t rperf_contention_switch_label(rperf_thread_slot_t *slot, int label_set_id, rperf_slot_view_t *view);
/* Cumulative totals of a slot's view up to now (open state included). */
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
/* Where a report cut at `cut_ns` counts a thread up to (its last_seen):
 * its exit, or the cut, or the view's last event when that event came
 * after the cut's clock read but before its view (a cutting thread
 * preempted in between). The view's totals already hold that span, so
 * the thread's lifetime in the report ends there, and the next clearing
 * report starts it there (slot->counted_to_ns). */
int64_t rperf_slot_view_counted_to(const rperf_slot_view_t *view, int64_t cut_ns);
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
