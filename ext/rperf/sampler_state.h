/*
 * sampler_state.h — the sampler's state, shared by sampler.c (start,
 * stop, ticks, drains, reports) and sampler_hooks.c (what the hooks run),
 * and the small steps both take.
 *
 * It does NOT decide anything. Contract: the fields marked atomic are read
 * and written with atomics from any thread; the rest change only in
 * start/stop/clear with the GVL held, or under drain_mutex (the tables).
 * A rperf_sampler_thread_t is written by its own thread's hooks and job alone.
 */
#ifndef RPERF_SAMPLER_STATE_H
#define RPERF_SAMPLER_STATE_H

#include <pthread.h>
#include <ruby.h>
#include <signal.h>
#include <ruby/debug.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include "agg_table.h"
#include "frame_table.h"
#include "release_stacks.h"
#include "sample_buffer.h"
#include "sampler_opts.h"
#include "thread_slot.h"

/* Per-thread sampler state, indexed by slot seq - 1. Zero = not seen. The
 * slot's hooks reach it through the seq they already hold: no pointer in
 * the slot, no extra load. */
typedef struct rperf_sampler_thread {
    int64_t sample_prev_ns; /* the sample clock: thread CPU ns (cpu mode) or monotonic ns (wall) */
    clockid_t cpu_clock;    /* the thread's CPU clock, valid when has_cpu_clock */
    int has_cpu_clock;
    uint32_t generation; /* sampler run whose clock sample_prev_ns is */
    int has_clock_thread;
    pthread_t clock_thread;                     /* native thread whose CPU clock is cpu_clock */
    int64_t pending_ns[RPERF_SYNTHETIC_FRAMES]; /* short synthetic time not yet attributed */
    int pending_label_set_id[RPERF_SYNTHETIC_FRAMES];
    int64_t gc_cpu_from_ns; /* cpu mode: thread CPU clock where the GC span began, 0 if unknown */
    /* Wall mode: monotonic ns of this thread's latest RESUMED (atomic,
     * relaxed: read by the worker, which rests while the GVL changes hands). */
    int64_t resumed_ns;
} __attribute__((aligned(RPERF_CACHE_LINE))) rperf_sampler_thread_t; /* written by its own thread's hooks */

typedef struct rperf_sampler_state {
    atomic_int running;
    atomic_int paused;
    rperf_sampler_opts_t opts;
    int64_t interval_ns;
    uint32_t generation;
    int signo;
    int initialized; /* job registered, GC root installed */
    rb_postponed_job_handle_t job;

    rperf_sample_buffers_t buffers;
    rperf_frame_table_t frames;
    rperf_agg_table_t agg;
    rperf_release_stacks_t releases;
    int has_data; /* buffers/tables allocated */

    /* Serialises drains (worker) with flush/clear/report (GVL side). Never
     * taken by the GC mark function: a holder may be stopped at a Ractor
     * barrier while another Ractor runs GC. */
    pthread_mutex_t drain_mutex;

    /* cpu mode with a signal: the main Ractor's ticks are direct ticks
     * (timer.h), taken by the signal handler; the worker ticks only for
     * other Ractors. Set before the timer starts. */
    int direct;

    rperf_sampler_thread_t *threads; /* opts.max_threads entries */
    int max_threads;

    atomic_uint_fast64_t trigger_count;
    atomic_uint_fast64_t sampling_count;
    atomic_uint_fast64_t sampling_time_ns;
    atomic_uint_fast64_t synthetic_samples;
    atomic_uint_fast64_t synthetic_time_ns;
    atomic_uint_fast64_t dropped_samples; /* besides buffer drops */
    atomic_uint_fast64_t dropped_aggregation;
    atomic_uint_fast64_t ractor_signals;
    atomic_uint_fast64_t ractor_samples;
    atomic_uint_fast64_t release_stacks;
    atomic_uint_fast64_t dropped_release_stacks;
    uint64_t buffer_dropped_base; /* buffer counters at the last clear */
    uint64_t buffer_contention_base;
} rperf_sampler_state_t;


extern rperf_sampler_state_t rperf_sampler_g;
/* The signal handler triggers the job only when set. */
extern atomic_int rperf_sampler_signal_armed;

static inline int64_t
rperf_sampler_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int
rperf_sampler_clock_ns(clockid_t clock, int64_t *out)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return -1;
    *out = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return 0;
}

static inline void
rperf_sampler_count(atomic_uint_fast64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static inline rperf_sampler_thread_t *
rperf_sampler_state_of(const rperf_thread_slot_t *slot)
{
    int index = slot->seq - 1;
    return index >= 0 && index < rperf_sampler_g.max_threads ? &rperf_sampler_g.threads[index] : NULL;
}

static inline int
rperf_sampler_recording(void)
{
    return atomic_load_explicit(&rperf_sampler_g.running, memory_order_relaxed) &&
           !atomic_load_explicit(&rperf_sampler_g.paused, memory_order_relaxed);
}

static inline void
rperf_sampler_write_sample(const VALUE *frames, int depth, int synthetic, int64_t weight_ns, int64_t blame_ns,
                           int thread_seq, int label_set_id)
{
    rperf_sample_buffers_write(&rperf_sampler_g.buffers, frames, depth, synthetic, weight_ns, blame_ns, thread_seq,
                               label_set_id);
}

/* On the slot's own native thread: capture its CPU clock (once per native
 * thread; M:N threads that move to another native thread are re-based) and,
 * if the slot was not seen in this run, start its sample clock now. Returns 1
 * when the clock was (re)started, so the caller has no elapsed time. */
int rperf_sampler_prime_slot_slow(rperf_thread_slot_t *slot, rperf_sampler_thread_t *st);

/* The RESUMED hook's case inline: wall mode, slot already seen this run. */
static inline int
rperf_sampler_prime_slot(rperf_thread_slot_t *slot, rperf_sampler_thread_t *st)
{
    if (rperf_sampler_g.opts.mode != RPERF_MODE_CPU && st->generation == rperf_sampler_g.generation)
        return 0;
    return rperf_sampler_prime_slot_slow(slot, st);
}

/* SA_SIGINFO handler of the sampler's signal (sampler.c installs it). */
void rperf_sampler_signal_handler(int signo, siginfo_t *info, void *context);

#endif
