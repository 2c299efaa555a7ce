/*
 * contention_state.h — the one profile's contention state: its settings,
 * its clock clip and epoch, its report-interval counters and the label
 * table. contention.c (lifecycle, labels, report cuts) writes it with the
 * main Ractor's GVL; contention_events.c (the hooks) reads the settings
 * and clip and bumps the atomic counters.
 *
 * It does NOT hold per-thread state (thread_slot.h) nor per-Ractor state
 * (ractor_table.h), and does NOT decide anything: the accessors read.
 *
 * Contract
 * - Fields marked atomic are read and written with __atomic builtins from
 *   any thread; the others change only while no hook records (start,
 *   pause, resume, destroy), with the main Ractor's GVL.
 * - The accessors never allocate, lock or call Ruby: hooks call them.
 */
#ifndef RPERF_CONTENTION_STATE_H
#define RPERF_CONTENTION_STATE_H

#include <pthread.h>
#include <stdint.h>
#include "label_totals.h"

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

typedef struct rperf_contention_state {
    int active;    /* a profile exists */
    int recording; /* atomic: enum rperf_recording */
    int forked_child;
    uint32_t epoch;       /* atomic: bumped at every resume */
    int64_t clip_ns;      /* atomic: accounting starts no earlier */
    int64_t paused_at_ns; /* 0 when not paused */
    int64_t paused_ns;    /* paused time within the report interval */
    int64_t edge_cut_ns;  /* atomic: waits before it were attributed at a cut */
    /* atomic: the last clearing cut (or start, or resume). Set before that
     * cut reads the views (edge_cut_ns only after the report is built), so
     * an event the views miss never reaches back past it: neither its time
     * (rperf_event_write_begin) nor a release's blocked span. */
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
} rperf_contention_state_t;

extern rperf_contention_state_t rperf_run;

int rperf_contention_active(void); /* a profile exists (running or paused) */
/* enum rperf_recording: OFF while paused, stopping or inactive; one load,
 * so the hooks learn the mode from the same read that tells them to record. */
int rperf_contention_recording(void);
int rperf_contention_forked_child_pending(void);
/* Clock reading clipped to the last resume: accounting never reaches back
 * into a paused period. */
int64_t rperf_contention_now_clipped(void);
int64_t rperf_contention_clip_ns(void);
uint32_t rperf_contention_epoch(void);
const rperf_contention_config_t *rperf_contention_config(void);

#endif
