/*
 * sampler.h — the timer-driven safepoint sampler: timer/worker thread, the
 * pre-registered postponed job that samples the current thread, stack capture,
 * double-buffered sample buffers, the frame table (VALUE -> id) and the
 * aggregation table keyed by (stack, thread_seq, label_set_id).
 *
 * It does NOT own thread state, GVL/GC hooks, labels or contention accounting
 * (thread_slot.h, gvl_hooks.c, contention.h). Hooks call into the sampler to
 * record synthetic [GVL blocked]/[GVL wait]/[GC marking]/[GC sweeping] frames.
 *
 * Contract
 * - One sampler per process (owned by the profiler in rperf.c).
 * - rperf_sampler_start/stop/pause/resume/snapshot are called with the GVL held
 *   (main Ractor), never from hooks.
 * - rperf_sampler_record_* may be called from hooks and from the postponed job
 *   while the caller holds its Ractor's GVL; they never allocate, never call
 *   Ruby and never block: when a buffer is full the sample is dropped and
 *   counted (stats.dropped_samples). They are safe when hooks of different
 *   Ractors call them in parallel.
 * - Frame ids 0..3 are the synthetic frames listed in docs/report-format.md.
 * - Return values: 0 on success, -1 on failure with errno-style reason in
 *   *err (a static string); nothing is leaked on failure.
 */
#ifndef RPERF_SAMPLER_H
#define RPERF_SAMPLER_H

#include <ruby.h>
#include <stdint.h>

enum rperf_synthetic_frame {
    RPERF_FRAME_GVL_BLOCKED = 0,
    RPERF_FRAME_GVL_WAIT = 1,
    RPERF_FRAME_GC_MARKING = 2,
    RPERF_FRAME_GC_SWEEPING = 3,
    RPERF_FRAME_SYNTHETIC_COUNT = 4
};

enum rperf_sampler_mode { RPERF_MODE_CPU = 0, RPERF_MODE_WALL = 1 };

typedef struct rperf_sampler_opts {
    int frequency;          /* 1..10000 Hz */
    int mode;               /* enum rperf_sampler_mode */
    int aggregate;          /* 1: aggregate; 0: keep raw samples */
    int signal;             /* >0 RT signal number, 0 = nanosleep worker, -1 = default */
    int deferred;           /* 1: start paused (profile refcount 0) */
} rperf_sampler_opts_t;

typedef struct rperf_sampler_stats {
    uint64_t trigger_count;
    uint64_t sampling_count;
    uint64_t sampling_time_ns;
    uint64_t dropped_samples;
    uint64_t dropped_aggregation;
} rperf_sampler_stats_t;

struct rperf_thread_slot;  /* thread_slot.h */

/* Lifecycle (GVL held, main Ractor). start returns 0, or -1 with *err set
 * (e.g. "timer_create failed: ..."); on failure nothing is left running. */
int  rperf_sampler_start(const rperf_sampler_opts_t *opts, const char **err);
/* Stops the timer and joins the worker; buffers are flushed into the tables.
 * Data stays readable until rperf_sampler_free(). */
void rperf_sampler_stop(void);
void rperf_sampler_free(void);

/* Profile refcount support: pause disarms the timer (nothing is captured or
 * allocated while paused); resume re-arms it. The caller (rperf.c) resets
 * each thread's sample clock via rperf_sampler_reset_slot_clock(). */
void rperf_sampler_pause(void);
void rperf_sampler_resume(void);
int  rperf_sampler_paused(void);

/* Reset a slot's sampler clock to "now" in that thread's own clock: the
 * slot's thread CPU clock (pthread_getcpuclockid of its native thread) in
 * cpu mode, CLOCK_MONOTONIC in wall mode. Never uses the caller's CPU clock
 * for another thread. */
void rperf_sampler_reset_slot_clock(struct rperf_thread_slot *slot);

/* Hot-path recorders (see contract above). `thread` is the Ruby thread whose
 * stack is captured; it must be the thread currently holding the GVL of the
 * caller's Ractor. weight_ns <= 0 records nothing. */
void rperf_sampler_record_synthetic(struct rperf_thread_slot *slot, VALUE thread,
                                    enum rperf_synthetic_frame frame, int64_t weight_ns);

/* Snapshot support (GVL held): flush buffers into the tables under the worker
 * lock; when clear, empty the aggregation table and stats afterwards (the
 * frame table keeps its ids). */
void rperf_sampler_flush(void);
void rperf_sampler_clear(void);

/* Readers for the result builder (GVL held, after flush). */
void rperf_sampler_get_stats(rperf_sampler_stats_t *out);
/* Appends "frames", "stacks", "samples" (and "raw_samples" when not
 * aggregating) to `report` (a Hash with String keys, shape of
 * docs/report-format.md). Frames are [path, label] String pairs. */
void rperf_sampler_fill_report(VALUE report);
/* Marks frame VALUEs held in buffers/tables (called from the profiler's
 * dmark). */
void rperf_sampler_mark(void);
/* Fork child: forget timers/worker/mutexes inherited from the parent. */
void rperf_sampler_after_fork_child(void);

#endif
