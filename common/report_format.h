/*
 * report_format.h — the numbering report.json v1 fixes (docs/report-format.md),
 * shared by its writer (the extension) and its reader (the analysis library)
 * so that the two can never disagree: format version, thread states as they
 * appear in interval tuples, the synthetic frame ids, holder kinds and the
 * profile modes.
 *
 * It does NOT describe the JSON layout (report_load.c and the extension's
 * report builder do) nor option limits (rperf_limits.h).
 *
 * Contract: header only. Holder kinds are strings in the JSON; their numbers
 * here are internal, but one numbering serves both sides (the summary's
 * holder table relies on THREAD being 0 and the others following in order).
 */
#ifndef RPERF_REPORT_FORMAT_H
#define RPERF_REPORT_FORMAT_H

#include "rperf_limits.h" /* RPERF_MAX_RACTORS */

#define RPERF_REPORT_FORMAT_NAME "rperf-gvl-report"
#define RPERF_REPORT_VERSION 1
/* Minor 1 added blocked causes and release edges (docs/report-format.md). */
#define RPERF_REPORT_MINOR 1

/* The `ractors` id of the row for thread `seq` when its Ractor is not
 * identified: above every identified Ractor's id, and the same in every
 * report of a snapshot series. */
#define RPERF_REPORT_UNIDENTIFIED_RACTOR(seq) (RPERF_MAX_RACTORS + (seq))

/* The report's `stats` (docs/report-format.md), in the order they are
 * written: X(name, counter), `counter` naming the part of the extension
 * that counts it: SAMPLER (rperf_sampler_stats_t), CONTENTION
 * (rperf_contention_stats_t) or REGISTRY (lib/ adds it). Each is a
 * non-negative integer that merging a snapshot series sums. The structs
 * of both sides, the writer, the loader and the merge are made from it:
 * a field added here reaches all of them. */
#define RPERF_REPORT_STATS(X) \
    X(trigger_count, SAMPLER)            /* timer ticks */ \
    X(sampling_count, SAMPLER)           /* stacks captured by the job and by hooks */ \
    X(sampling_time_ns, SAMPLER)         /* time in the job plus hook stack captures */ \
    X(hook_events, CONTENTION)           /* GVL and GC hook calls handled */ \
    X(hook_time_ns, CONTENTION)          /* hook_events x their measured mean cost */ \
    X(dropped_samples, SAMPLER)          /* a full sample buffer */ \
    X(dropped_aggregation, SAMPLER)      /* a full stack table */ \
    X(dropped_intervals, CONTENTION)     /* a full timeline ring */ \
    X(dropped_edges, CONTENTION)         /* a full wait-edge table */ \
    X(dropped_threads, CONTENTION)       /* a full slot pool */ \
    X(dropped_label_sets, REGISTRY)      /* a full label-set registry (lib/) */ \
    X(synthetic_samples, SAMPLER)        /* of sampling_count: captured by hooks */ \
    X(synthetic_time_ns, SAMPLER)        /* of sampling_time_ns: spent in hooks */ \
    X(ractor_signals, SAMPLER)           /* ticks sent to non-main Ractors' GVL holders */ \
    X(ractor_samples, SAMPLER)           /* samples the job took on a signalled thread */ \
    X(buffer_contention, SAMPLER)        /* buffer writes that found the spinlock taken */ \
    X(coalesced_intervals, CONTENTION)   /* shorter than min_interval_ns, folded */ \
    X(edge_lock_contended, CONTENTION)   /* edge-table lock found taken */ \
    X(paused_ns, CONTENTION)             /* a deferred profile's paused time */ \
    X(dropped_causes, CONTENTION)        /* blocked events charged to unknown: a table was full */ \
    X(dropped_blocked_edges, CONTENTION) /* releases a waiter's full release list could not take */ \
    X(release_stacks, SAMPLER)           /* releasers' stacks captured (not samples) */ \
    X(dropped_release_stacks, SAMPLER)   /* releases that keep no stack: full buffer or table, a cut */

/* RPERF_STAT_IF(part, counter, F, name): F(name) when `counter` is `part`,
 * else nothing. A part keeps only its own stats with it. */
#define RPERF_STAT_IF(part, counter, F, name) RPERF_STAT_IF_##part##_##counter(F, name)
#define RPERF_STAT_IF_SAMPLER_SAMPLER(F, name) F(name)
#define RPERF_STAT_IF_SAMPLER_CONTENTION(F, name)
#define RPERF_STAT_IF_SAMPLER_REGISTRY(F, name)
#define RPERF_STAT_IF_CONTENTION_SAMPLER(F, name)
#define RPERF_STAT_IF_CONTENTION_CONTENTION(F, name) F(name)
#define RPERF_STAT_IF_CONTENTION_REGISTRY(F, name)

/* Profile modes, the `mode:` of Rperf.start (exported as Rperf::MODES).
 * cpu and wall run the sampler, and meta.mode names them. counters runs
 * none: meta.recording says "counters" and meta.mode says "wall". Each
 * entry point keeps its own default (docs/contention.md); the extension
 * has none and refuses a start without a valid mode. */
enum rperf_profile_mode {
    RPERF_PROFILE_CPU = 0,
    RPERF_PROFILE_WALL = 1,
    RPERF_PROFILE_COUNTERS = 2,
    RPERF_PROFILE_MODES = 3
};
#define RPERF_PROFILE_MODE_NAMES \
    { \
        "cpu", "wall", "counters" \
    }

/* Interval tuple states and the order of per-thread state totals. */
enum rperf_state {
    RPERF_STATE_RUNNING = 0,
    RPERF_STATE_GVL_WAIT = 1,
    RPERF_STATE_BLOCKED = 2,
    RPERF_STATE_GC_MARK = 3,
    RPERF_STATE_GC_SWEEP = 4,
    RPERF_STATE_COUNT = 5
};

/* Frame ids 0..3 of every report are these synthetic frames. */
enum rperf_synthetic_frame {
    RPERF_FRAME_GVL_BLOCKED = 0,
    RPERF_FRAME_GVL_WAIT = 1,
    RPERF_FRAME_GC_MARK = 2,
    RPERF_FRAME_GC_SWEEP = 3,
    RPERF_SYNTHETIC_FRAMES = 4
};

/* Their [path, label] pairs, by id. */
#define RPERF_SYNTHETIC_FRAME_PATHS \
    { \
        "<GVL>", "<GVL>", "<GC>", "<GC>" \
    }
#define RPERF_SYNTHETIC_FRAME_LABELS \
    { \
        "[GVL blocked]", "[GVL wait]", "[GC marking]", "[GC sweeping]" \
    }

/* What a waiter waited on: a thread (holder = its seq), GC, a hand-off
 * with no holder, or time the profiler could not attribute. */
enum rperf_holder_kind {
    RPERF_HOLDER_THREAD = 0,
    RPERF_HOLDER_GC = 1,
    RPERF_HOLDER_HANDOFF = 2,
    RPERF_HOLDER_UNKNOWN = 3,
    RPERF_HOLDER_KIND_COUNT = 4
};

/* Why a thread was blocked (off the GVL, not waiting for it). The JSON
 * carries names (`causes` lists them by id for `interval_causes`); readers
 * map names to these numbers and read a name they do not know as OTHER.
 * The threads that another thread wakes (MUTEX..JOIN) get a releaser. */
enum rperf_blocked_cause {
    RPERF_CAUSE_UNKNOWN = 0, /* no frame seen: blocked since before the profile, or unreadable */
    RPERF_CAUSE_IO = 1,      /* IO and socket reads, writes, select, wait_*, accept, connect */
    RPERF_CAUSE_SLEEP = 2,   /* Kernel#sleep */
    RPERF_CAUSE_MUTEX = 3,   /* Thread::Mutex#lock/synchronize, Monitor */
    RPERF_CAUSE_CONDVAR = 4, /* Thread::ConditionVariable#wait (Mutex#sleep under it) */
    RPERF_CAUSE_QUEUE = 5,   /* Thread::Queue#pop, Thread::SizedQueue#pop/#push */
    RPERF_CAUSE_JOIN = 6,    /* Thread#join/#value */
    RPERF_CAUSE_RACTOR = 7,  /* Ractor.receive/.select/.yield, Ractor#take */
    RPERF_CAUSE_PROCESS = 8, /* Process.wait and friends, Kernel#system */
    RPERF_CAUSE_OTHER = 9,   /* any other method: named in `blocked_methods` */
    RPERF_CAUSE_COUNT = 10
};

#define RPERF_CAUSE_NAMES \
    { \
        "unknown", "io", "sleep", "mutex", "condvar", "queue", "join", "ractor", "process", "other" \
    }

/* Causes whose waits another thread of the same Ractor ends. */
#define RPERF_CAUSE_RELEASABLE(cause) ((cause) >= RPERF_CAUSE_MUTEX && (cause) <= RPERF_CAUSE_JOIN)

#endif
