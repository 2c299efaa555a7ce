/*
 * sampler.h — the timer-driven safepoint sampler: timer/worker thread, the
 * pre-registered postponed job that samples the current thread, stack capture,
 * double-buffered sample buffers, the frame table (VALUE -> id) and the
 * aggregation table keyed by (stack, thread_seq, label_set_id).
 *
 * It does NOT own thread state, GVL/GC hooks, labels or contention accounting
 * (thread_slot.h, gvl_hooks.c, contention.h). The hook files (gvl_hooks.c,
 * gc_hooks.c) call into the sampler with the time contention_events.c returns, to
 * record synthetic [GVL blocked]/[GVL wait]/[GC marking]/[GC sweeping] frames;
 * nothing below the hooks calls the sampler.
 *
 * Two implementations: sampler.c (with sampler_hooks.c, sampler_state.c,
 * timer.c, sample_buffer.c, frame_table.c, agg_table.c) and sampler_stub.c, built instead when the
 * extension is made without the sampler (RPERF_EXT_WITHOUT=sampler): start
 * succeeds and samples nothing, the recorders do nothing, fill_report
 * writes the synthetic frames alone and empty sample arrays.
 *
 * Contract
 * - One sampler per process (owned by the profiler in rperf.c).
 * - rperf_sampler_start/stop/pause/resume/flush/clear/fill_report are called
 *   with the GVL held (main Ractor), never from hooks.
 * - rperf_sampler_record_* may be called from hooks
 *   and from the postponed job while the caller holds its Ractor's GVL, on the
 *   slot's own native thread; they never allocate, never call Ruby and never
 *   block: when a buffer is full the sample is dropped and counted
 *   (stats.dropped_samples). They are safe when hooks of different Ractors
 *   call them in parallel (one spinlock, held only for a copy).
 * - Frame ids 0..3 are the synthetic frames listed in docs/report-format.md.
 * - Return values: 0 on success, -1 on failure with the reason in *err (a
 *   static string); nothing is leaked or left running on failure.
 *
 * Thread slots (thread_slot.h): the sampler reads seq, label_set_id, thread,
 * state, native_id and ractor and writes nothing there; its per-thread state
 * (the sample clock, the CPU clock, pending synthetic time) lives in its own
 * array indexed by seq (opts.max_threads entries). The slot pool must exist
 * from before rperf_sampler_start until after rperf_sampler_stop: the worker
 * thread reads published slots (relaxed) to find GVL holders.
 *
 * Ticks in wall mode: a tick sends no signal for a Ractor whose GVL holder
 * resumed within the last interval, or that has no holder; for the main
 * Ractor's holder it triggers the job at most every RPERF_TIMER_DRAIN_NS
 * then, and the RESUMED hook samples the running time the jobs leave
 * (rperf_sampler_record_resumed) besides the off-GVL time. A tick acts as
 * before for a holder that has held its GVL a whole interval. After a run
 * of ticks with nothing to act on the worker ticks less often and rests
 * (timer.h's scheduling rule). cpu mode's ticks act for any holder, so
 * without direct ticks its worker never rests (timer.h says why).
 *
 * Ractors: the timer tick triggers the job for the main Ractor; with a timer
 * signal (signal: nil or Integer) the worker also sends that signal (tgkill)
 * to the native thread of every slot that is RUNNING outside the main Ractor
 * (or in a Ractor not yet identified); its handler calls
 * rb_postponed_job_trigger, which targets that thread's own execution
 * context, so the job samples that Ractor's GVL holder. For M:N threads
 * (non-main Ractors) slot->native_id must be the native thread of the latest
 * RESUMED, not the first: rperf_native_tid() is a per-native-thread
 * cached gettid for that (native_tid.h).
 */
#ifndef RPERF_SAMPLER_H
#define RPERF_SAMPLER_H

#include <ruby.h>
#include <stdint.h>

#include "report_format.h" /* enum rperf_synthetic_frame */
#include "sampler_opts.h"

/* The report's SAMPLER stats (RPERF_REPORT_STATS, report_format.h). */
#define RPERF_SAMPLER_STAT_FIELD(name) uint64_t name;
#define RPERF_SAMPLER_STAT_X(name, counter) RPERF_STAT_IF(SAMPLER, counter, RPERF_SAMPLER_STAT_FIELD, name)
typedef struct rperf_sampler_stats {
    RPERF_REPORT_STATS(RPERF_SAMPLER_STAT_X)
} rperf_sampler_stats_t;

struct rperf_thread_slot;   /* thread_slot.h */
struct rperf_release_event; /* contention.h */

/* 1 when this build samples stacks (sampler.c), 0 for sampler_stub.c. */
int rperf_sampler_supported(void);

/* Lifecycle (GVL held, main Ractor). start returns 0, or -1 with *err set
 * (e.g. "timer_create failed"); on failure nothing is left running. */
int rperf_sampler_start(const rperf_sampler_opts_t *opts, const char **err);
int rperf_sampler_running(void);
/* Stops the timer and joins the worker; buffers and pending synthetic time
 * are flushed into the tables (pending time without a stack, as a stack of
 * its synthetic frame alone). Call it after removing the hooks. Data stays
 * readable until rperf_sampler_free(). */
void rperf_sampler_stop(void);
void rperf_sampler_free(void);

/* Profile refcount support: pause disarms the timer (nothing is captured or
 * allocated while paused, hooks record nothing); resume resets every slot's
 * sample clock from that thread's own clock (rperf_slots_foreach +
 * rperf_sampler_reset_slot_clock) and re-arms the timer. */
void rperf_sampler_pause(void);
void rperf_sampler_resume(void);
int rperf_sampler_paused(void);

/* Reset a slot's sampler clock to "now" in that thread's own clock: the
 * slot's thread CPU clock (pthread_getcpuclockid of its native thread,
 * captured on that thread) in cpu mode, CLOCK_MONOTONIC in wall mode. Never
 * uses the caller's CPU clock for another thread; a slot whose clock is not
 * known yet is re-based the next time it is seen on its own thread. */
void rperf_sampler_reset_slot_clock(struct rperf_thread_slot *slot);

/* Hot-path recorders (see contract above). `thread` is the Ruby thread whose
 * stack is captured; it must be the slot's thread, holding its Ractor's GVL
 * (RESUMED for blocked/wait, GC_EXIT for GC). weight_ns <= 0 records
 * nothing. Short weights are accumulated per slot and frame; the stack is
 * walked only when the accumulated weight reaches one sampling interval, and
 * the whole accumulated weight goes to that stack. Recording advances the
 * slot's sample clock by weight_ns so the next regular sample does not count
 * the same time again. In cpu mode GVL frames are ignored and GC frames
 * take their weight from the thread's CPU clock (rperf_sampler_gc_span_begin). */
void rperf_sampler_record_synthetic(struct rperf_thread_slot *slot, VALUE thread, enum rperf_synthetic_frame frame,
                                    int64_t weight_ns);
/* RESUMED, wall mode: `now_ns` is the hook's clock read. Records the
 * [GVL blocked] and [GVL wait] time that ends now with the rules of
 * rperf_sampler_record_synthetic for each frame (per-frame accumulation and
 * threshold), and the thread's running time since its previous sample when
 * that reaches HOOK_RUNNING_INTERVALS (sampler_hooks.c) intervals: a regular sample (no synthetic frame) whose
 * stack is where the thread last gave up its GVL. Everything due at once
 * shares one stack walk (the thread has not run in between). It also marks
 * the thread as just resumed, so the worker's ticks leave a GVL that
 * changed hands within the last interval to the rested pace.
 * Negative weights count as 0; no-op in cpu mode. */
void rperf_sampler_record_resumed(struct rperf_thread_slot *slot, VALUE thread, int64_t now_ns, int64_t blocked_ns,
                                  int64_t wait_ns);
/* EXITED hook (wall mode), on the exiting thread after its last SUSPENDED,
 * without the GVL: the running time no sample took yet (less than
 * HOOK_RUNNING_INTERVALS intervals) becomes one sample with an empty stack
 * (the thread has no frames left), so the samples' running weight still
 * sums to the thread's running time. No-op in cpu mode. */
void rperf_sampler_record_exited(struct rperf_thread_slot *slot, int64_t now_ns);
/* GC hooks, on the collecting thread, at the start of each GC bracket: in
 * cpu mode the GC frames recorded until the next call are then weighted by
 * that thread's CPU clock (one clock read per bracket and phase) instead of
 * the monotonic weight_ns, which counts time the thread was preempted. No-op
 * in wall mode. */
void rperf_sampler_gc_span_begin(struct rperf_thread_slot *slot);

/* READY hook, on the releaser's own native thread while the releaser holds
 * its Ractor's GVL (release->releaser_seq names it, rperf_on_ready checked
 * it runs here): walks the releaser's stack (at most RPERF_MAX_STACK_DEPTH
 * frames, rb_profile_thread_frames: no allocation) into a release record of
 * weight release->ns for `waiter`'s release list entry release->release_index.
 * Never a sample: it adds no weight to "samples" and does not touch any
 * sample clock. A record that does not fit, or a release marked lost_at_cut,
 * counts dropped_release_stacks; a releaser without frames (a finishing
 * thread waking its joiners) records nothing. Both modes. */
void rperf_sampler_record_release(const struct rperf_thread_slot *waiter, const struct rperf_release_event *release);

/* Report builder (GVL held): drains the buffers, then calls `fn` once per
 * release stack entry of a generation below `generation` (the report's,
 * rperf_contention_views_end): the waiter's seq, the release list index, a
 * stack id of the "stacks" rperf_sampler_fill_report writes next (valid
 * until a clear), the blocked time and the number of releases. Nothing when
 * the sampler holds no data. An entry may come once per generation. */
typedef void rperf_release_stack_fn(int waiter_seq, int release_index, uint32_t stack_id, int64_t ns, uint64_t count,
                                    void *arg);
void rperf_sampler_each_release_stack(uint32_t generation, rperf_release_stack_fn *fn, void *arg);

/* Snapshot support (GVL held): flush drains buffers into the tables under
 * the worker lock; clear empties the aggregation and release stack tables
 * and resets the stats (the frame table keeps its ids); releases after the
 * cut that lose their stack there are counted in the next report's
 * dropped_release_stacks. */
void rperf_sampler_flush(void);
void rperf_sampler_clear(void);

/* Readers for the result builder (GVL held). */
void rperf_sampler_get_stats(rperf_sampler_stats_t *out);
/* Flushes, then sets "frames", "stacks", "samples", "blame" (and
 * "raw_samples" when not aggregating: [[stack_id, weight_ns, thread_seq,
 * label_set_id], ...] in capture order) on `report` (a Hash with String keys,
 * shape of docs/report-format.md), and merges the sampler's counters into
 * report["stats"] (created when missing). Frames are [path, label] String
 * pairs. */
void rperf_sampler_fill_report(VALUE report);
/* Marks frame VALUEs held in buffers/tables. The sampler registers its own
 * GC root at its first start, so callers need not call this; it is safe to. */
void rperf_sampler_mark(void);
/* Fork prepare and parent (atfork handlers): the worker is held out of its
 * drain, the one place it allocates, while the process forks. An allocator
 * whose lock a thread held at fork stays locked in the child, and not every
 * allocator (ASan's) guards its lock across fork; the child's own worker
 * then blocks in its first drain. */
void rperf_sampler_before_fork(void);
void rperf_sampler_after_fork_parent(void);
/* Fork child (atfork handler): forget timers/worker/mutexes inherited from
 * the parent; the sampler is stopped. Frees nothing: the child's next call
 * releases the memory with rperf_sampler_free (or start does). */
void rperf_sampler_after_fork_child(void);

#endif
