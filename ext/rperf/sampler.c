/*
 * sampler.c — the safepoint sampler: lifecycle, the postponed sampling job,
 * the hooks' synthetic-frame recorder, GVL-holder tracking for Ractors, and
 * the drain from the sample buffers into the frame and aggregation tables.
 *
 * Weights are elapsed time in the sampled thread's own clock (thread CPU time
 * in cpu mode, CLOCK_MONOTONIC in wall mode) since its previous sample, so a
 * late safepoint or a missed tick moves weight, it does not lose or invent
 * it. Synthetic time recorded by hooks advances the same clock, so nothing is
 * counted twice. It does NOT keep thread state beyond its per-seq array,
 * install hooks, or build the rest of the report (report_builder.c).
 */
#define _GNU_SOURCE 1
#include "sampler.h"
#include "agg_table.h"
#include "contention.h"
#include "frame_table.h"
#include "ractor_table.h"
#include "release_stacks.h"
#include "sample_buffer.h"
#include "thread_slot.h"
#include "timer.h"
#include "rperf_limits.h"

#include <errno.h>
#include <pthread.h>
#include <ruby/debug.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Bounds: memory stays fixed however long a profile runs. */
#define BUFFER_SAMPLES 16384
#define BUFFER_FRAMES (1u << 18)
#define MAX_FRAMES (1u << 20)
#define MAX_STACKS (1u << 20)
#define MAX_ENTRIES (1u << 21)
#define MAX_POOL_FRAMES ((size_t)1 << 26)
#define MAX_RAW_SAMPLES ((size_t)1 << 23)
/* (waiter, release, generation, stack) entries: 16 releases per waiter,
 * a few stacks each. */
#define MAX_RELEASE_STACKS (1u << 16)
/* Gap between signals to different Ractors' holders: wide enough for one
 * holder to service its job before the next is signalled, and short enough
 * that a low frequency does not delay stop. Below the minimum the worker
 * does not sleep. */
#define MIN_SIGNAL_GAP_NS 20000
#define MAX_SIGNAL_GAP_NS 200000
#define MAX_TARGETS 64
/* Wall mode, while the GVL changes hands: the RESUMED hook samples a
 * thread's running time once it reaches this many intervals, and the
 * worker triggers the job at most once per RPERF_TIMER_DRAIN_NS for the
 * Ractor's current holder. The job's stack is taken at a random moment of
 * a run; the hook's is where the run ended (the call that gave up the
 * GVL), so the hook's threshold is high enough that the running time of a
 * thread the jobs reach goes to the jobs' samples (a method computing
 * 0.3 ms between pipe messages, truly 97 % of the running time, kept 88-92 %
 * at 100 intervals, 59-66 % at 30, 26-30 % at 10). What no sample took when
 * a thread exits goes to one empty-stack sample at its EXITED; a thread
 * still alive at stop leaves at most this many intervals unsampled. */
#define HOOK_RUNNING_INTERVALS 100


/* Per-thread sampler state, indexed by slot seq - 1. Zero = not seen. The
 * slot's hooks reach it through the seq they already hold: no pointer in
 * the slot, no extra load. */
typedef struct sampler_thread {
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
} __attribute__((aligned(RPERF_CACHE_LINE))) sampler_thread_t; /* written by its own thread's hooks */

static struct {
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

    sampler_thread_t *threads; /* opts.max_threads entries */
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
} g = {.drain_mutex = PTHREAD_MUTEX_INITIALIZER};

static atomic_int g_signal_armed; /* the handler triggers the job only when set */
static int g_handler_signo;       /* signal whose handler is installed (kept for the process) */

static inline int64_t
monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int
clock_ns(clockid_t clock, int64_t *out)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return -1;
    *out = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return 0;
}

static inline void
count(atomic_uint_fast64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/* ---- per-slot clocks ---- */

static inline sampler_thread_t *
state_of(const rperf_thread_slot_t *slot)
{
    int index = slot->seq - 1;
    return index >= 0 && index < g.max_threads ? &g.threads[index] : NULL;
}

/* On the slot's own native thread: capture its CPU clock (once per native
 * thread; M:N threads that move to another native thread are re-based) and,
 * if the slot was not seen in this run, start its sample clock now. Returns 1
 * when the clock was (re)started, so the caller has no elapsed time. */
static int
prime_slot_slow(rperf_thread_slot_t *slot, sampler_thread_t *st)
{
    int restart = st->generation != g.generation;
    if (g.opts.mode == RPERF_MODE_CPU) {
        pthread_t self = pthread_self();
        if (!st->has_clock_thread || !pthread_equal(st->clock_thread, self) || !st->has_cpu_clock) {
            clockid_t clock;
            if (pthread_getcpuclockid(self, &clock) != 0)
                return 1;
            st->cpu_clock = clock;
            st->has_cpu_clock = 1;
            st->clock_thread = self;
            st->has_clock_thread = 1;
            restart = 1;
        }
        if (!restart)
            return 0;
        int64_t now;
        if (clock_ns(st->cpu_clock, &now) != 0)
            return 1;
        st->sample_prev_ns = now;
    } else {
        if (!restart)
            return 0;
        st->sample_prev_ns = monotonic_ns();
    }
    if (st->generation != g.generation) {
        memset(st->pending_ns, 0, sizeof(st->pending_ns));
        st->generation = g.generation;
    }
    return 1;
}

/* The RESUMED hook's case inline: wall mode, slot already seen this run. */
static inline int
prime_slot(rperf_thread_slot_t *slot, sampler_thread_t *st)
{
    if (g.opts.mode != RPERF_MODE_CPU && st->generation == g.generation)
        return 0;
    return prime_slot_slow(slot, st);
}

void
rperf_sampler_reset_slot_clock(rperf_thread_slot_t *slot)
{
    sampler_thread_t *st = state_of(slot);
    int64_t now;
    if (!st)
        return;
    if (g.opts.mode == RPERF_MODE_WALL) {
        st->sample_prev_ns = monotonic_ns();
    } else if (st->has_cpu_clock && st->has_clock_thread && clock_ns(st->cpu_clock, &now) == 0) {
        /* The slot's own clock, read from here: never the caller's. */
        st->sample_prev_ns = now;
    } else {
        st->generation = 0; /* re-based on its own thread when next seen */
        return;
    }
    if (st->generation != g.generation)
        memset(st->pending_ns, 0, sizeof(st->pending_ns));
    st->generation = g.generation;
}

static void
reset_slot_cb(rperf_thread_slot_t *slot, void *arg)
{
    (void)arg;
    rperf_sampler_reset_slot_clock(slot);
}

/* ---- recording ---- */

/* The job's thread may have started while the profile was paused: it gets
 * its slot here, from the clipped clock like any other first event. */
static rperf_thread_slot_t *
slot_of(VALUE thread)
{
    rperf_thread_slot_t *slot = rperf_slot_find(thread);
    return slot ? slot : rperf_slot_claim(thread, rperf_contention_now_clipped());
}

static inline int
recording(void)
{
    return atomic_load_explicit(&g.running, memory_order_relaxed) &&
           !atomic_load_explicit(&g.paused, memory_order_relaxed);
}

static void
write_sample(const VALUE *frames, int depth, int synthetic, int64_t weight_ns, int64_t blame_ns, int thread_seq,
             int label_set_id)
{
    rperf_sample_buffers_write(&g.buffers, frames, depth, synthetic, weight_ns, blame_ns, thread_seq, label_set_id);
}

/* Postponed job: runs at a safepoint on whichever thread serviced the
 * interrupt, holding that thread's Ractor GVL; samples that thread. */
static void
sample_job(void *arg)
{
    (void)arg;
    if (!recording())
        return;
    int64_t started = monotonic_ns();
    VALUE thread = rb_thread_current();
    rperf_thread_slot_t *slot = slot_of(thread);
    sampler_thread_t *st = slot ? state_of(slot) : NULL;
    if (!st) {
        count(&g.dropped_samples, 1);
        return;
    }
    if (prime_slot(slot, st))
        return;
    int64_t now;
    if (g.opts.mode == RPERF_MODE_CPU) {
        /* prime_slot made this native thread the slot's clock owner, so the
         * calling thread's clock is the slot's clock (and the kernel's fast path). */
        if (clock_ns(CLOCK_THREAD_CPUTIME_ID, &now) != 0)
            return;
    } else {
        now = started;
    }
    int64_t weight = now - st->sample_prev_ns;
    st->sample_prev_ns = now;
    if (weight <= 0)
        return;

    VALUE frames[RPERF_MAX_STACK_DEPTH];
    int depth = rb_profile_frames(0, RPERF_MAX_STACK_DEPTH, frames, NULL);
    const rperf_ractor_slot_t *own = RPERF_LOAD(slot->ractor);
    int waiters = own ? rperf_ractor_waiters(own) : 0;
    write_sample(frames, depth, RPERF_NO_SYNTHETIC, weight, weight * (waiters > 0 ? waiters : 0), slot->seq,
                 slot->label_set_id);

    if (!own || !own->main)
        count(&g.ractor_samples, 1);
    count(&g.sampling_count, 1);
    count(&g.sampling_time_ns, (uint64_t)(monotonic_ns() - started));
}

/* Writes the pending time of the frames in frames_mask and, when
 * running_ns > 0, a regular sample of that much running time (blamed like
 * the job's), all on one walk of the thread's stack. */
static void
emit_pending(rperf_thread_slot_t *slot, sampler_thread_t *st, VALUE thread, unsigned frames_mask, int64_t running_ns)
{
    int64_t started = monotonic_ns();
    VALUE frames[RPERF_MAX_STACK_DEPTH];
    int depth = -1;
    uint64_t written = 0;
    if (running_ns > 0) {
        depth = rb_profile_thread_frames(thread, 0, RPERF_MAX_STACK_DEPTH, frames, NULL);
        const rperf_ractor_slot_t *own = RPERF_LOAD(slot->ractor);
        int waiters = own ? rperf_ractor_waiters(own) : 0;
        write_sample(frames, depth, RPERF_NO_SYNTHETIC, running_ns, running_ns * (waiters > 0 ? waiters : 0),
                     slot->seq, slot->label_set_id);
        written++;
    }
    for (int frame = 0; frame < RPERF_SYNTHETIC_FRAMES; frame++) {
        if (!(frames_mask & (1u << frame)) || st->pending_ns[frame] <= 0)
            continue;
        /* One walk serves every frame: the thread has not run since. */
        if (depth < 0)
            depth = rb_profile_thread_frames(thread, 0, RPERF_MAX_STACK_DEPTH, frames, NULL);
        write_sample(frames, depth, frame, st->pending_ns[frame], 0, slot->seq, st->pending_label_set_id[frame]);
        st->pending_ns[frame] = 0;
        written++;
    }
    if (!written)
        return;
    uint64_t spent = (uint64_t)(monotonic_ns() - started);
    count(&g.sampling_count, written);
    count(&g.synthetic_samples, written);
    count(&g.sampling_time_ns, spent);
    count(&g.synthetic_time_ns, spent);
}

/* The common tail of the recorders: advances the slot's sample clock by
 * the recorded time (the next regular sample must not count it again; GC
 * time is in the thread's CPU clock too), then adds weights[frame] (> 0
 * only for frames being recorded) to the pending time. A frame whose
 * pending time carries another label set is emitted first; every frame
 * that reaches an interval is emitted after, all with one stack walk.
 * running_until_ns > 0 (wall mode, RESUMED): the sample clock's time then
 * left up to running_until_ns is running time, sampled here too once it
 * reaches HOOK_RUNNING_INTERVALS intervals. Inlined into each recorder:
 * its weights are constants but for one or two frames, so the loops over
 * the frames fold away (the RESUMED hook runs it at every hand-off).
 * total_ns is the sum of the weights, from the caller's scalars: summed
 * here, the weights just stored one by one were read back as one wide load,
 * which stalled. */
static inline __attribute__((always_inline)) void
accumulate(rperf_thread_slot_t *slot, sampler_thread_t *st, VALUE thread,
           const int64_t weights[RPERF_SYNTHETIC_FRAMES], int64_t total_ns, int64_t running_until_ns)
{
    int64_t total = total_ns;
    int64_t running = 0;
    if (!prime_slot(slot, st)) {
        st->sample_prev_ns += total;
        if (running_until_ns > 0 &&
            running_until_ns - st->sample_prev_ns >= HOOK_RUNNING_INTERVALS * g.interval_ns) {
            running = running_until_ns - st->sample_prev_ns;
            st->sample_prev_ns = running_until_ns;
        }
    }
    int label = slot->label_set_id;
    unsigned relabel = 0, due = 0;
    for (int frame = 0; frame < RPERF_SYNTHETIC_FRAMES; frame++) {
        if (weights[frame] > 0 && st->pending_ns[frame] > 0 && st->pending_label_set_id[frame] != label)
            relabel |= 1u << frame;
    }
    if (relabel)
        emit_pending(slot, st, thread, relabel, 0);
    for (int frame = 0; frame < RPERF_SYNTHETIC_FRAMES; frame++) {
        if (weights[frame] <= 0)
            continue;
        st->pending_ns[frame] += weights[frame];
        st->pending_label_set_id[frame] = label;
        if (st->pending_ns[frame] >= g.interval_ns)
            due |= 1u << frame;
    }
    if (due || running > 0)
        emit_pending(slot, st, thread, due, running);
}

void
rperf_sampler_record_resumed(rperf_thread_slot_t *slot, VALUE thread, int64_t now_ns, int64_t blocked_ns,
                             int64_t wait_ns)
{
    if (blocked_ns < 0)
        blocked_ns = 0;
    if (wait_ns < 0)
        wait_ns = 0;
    if (!slot || g.opts.mode == RPERF_MODE_CPU || !recording())
        return;
    sampler_thread_t *st = state_of(slot);
    if (!st) {
        if (blocked_ns + wait_ns > 0)
            count(&g.dropped_samples, 1);
        return;
    }
    __atomic_store_n(&st->resumed_ns, now_ns, __ATOMIC_RELAXED);
    int64_t weights[RPERF_SYNTHETIC_FRAMES] = {0};
    weights[RPERF_FRAME_GVL_BLOCKED] = blocked_ns;
    weights[RPERF_FRAME_GVL_WAIT] = wait_ns;
    accumulate(slot, st, thread, weights, blocked_ns + wait_ns, now_ns);
}

void
rperf_sampler_record_exited(rperf_thread_slot_t *slot, int64_t now_ns)
{
    if (!slot || g.opts.mode == RPERF_MODE_CPU || !recording())
        return;
    sampler_thread_t *st = state_of(slot);
    if (!st || st->generation != g.generation)
        return;
    /* The sample clock stands where the last sample (or off-GVL weight)
     * left it: what follows is running time no sample took. */
    int64_t running = now_ns - st->sample_prev_ns;
    if (running <= 0)
        return;
    st->sample_prev_ns = now_ns;
    write_sample(NULL, 0, RPERF_NO_SYNTHETIC, running, 0, slot->seq, slot->label_set_id);
    count(&g.sampling_count, 1);
    count(&g.synthetic_samples, 1);
}

void
rperf_sampler_gc_span_begin(rperf_thread_slot_t *slot)
{
    if (!slot || g.opts.mode != RPERF_MODE_CPU || !recording())
        return;
    sampler_thread_t *st = state_of(slot);
    int64_t now;
    if (st)
        st->gc_cpu_from_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID, &now) == 0 ? now : 0;
}

void
rperf_sampler_record_synthetic(rperf_thread_slot_t *slot, VALUE thread, enum rperf_synthetic_frame frame,
                               int64_t weight_ns)
{
    if (weight_ns <= 0 || !slot || (unsigned)frame >= RPERF_SYNTHETIC_FRAMES || !recording())
        return;
    int cpu_mode = g.opts.mode == RPERF_MODE_CPU;
    if (cpu_mode && (frame == RPERF_FRAME_GVL_BLOCKED || frame == RPERF_FRAME_GVL_WAIT))
        return;
    sampler_thread_t *st = state_of(slot);
    if (!st) {
        count(&g.dropped_samples, 1);
        return;
    }
    if (cpu_mode && st->gc_cpu_from_ns > 0) {
        /* GC frames in the thread's CPU time: a bracket in which the thread
         * was preempted must not weigh more than the CPU it used, or the
         * next regular sample (whose clock did not advance) cannot absorb it. */
        int64_t now;
        if (clock_ns(CLOCK_THREAD_CPUTIME_ID, &now) == 0) {
            weight_ns = now - st->gc_cpu_from_ns;
            st->gc_cpu_from_ns = now; /* a phase change continues from here */
        }
        if (weight_ns <= 0)
            return;
    }
    int64_t weights[RPERF_SYNTHETIC_FRAMES] = {0};
    weights[frame] = weight_ns;
    accumulate(slot, st, thread, weights, weight_ns, 0);
}

void
rperf_sampler_record_release(const rperf_thread_slot_t *waiter, const rperf_release_event_t *release)
{
    if (!waiter || !recording())
        return;
    if (release->lost_at_cut) {
        count(&g.dropped_release_stacks, 1);
        return;
    }
    const rperf_thread_slot_t *releaser = rperf_slot_by_seq(release->releaser_seq);
    if (!releaser)
        return;
    VALUE frames[RPERF_MAX_STACK_DEPTH];
    int depth = rb_profile_thread_frames(releaser->thread, 0, RPERF_MAX_STACK_DEPTH, frames, NULL);
    if (depth <= 0)
        return; /* a releaser with no frame left (a finishing thread's join wake-up): no stack to have */
    if (rperf_sample_buffers_write_release(&g.buffers, frames, depth, release->ns, waiter->seq,
                                           release->release_index, release->generation) < 0)
        count(&g.dropped_release_stacks, 1);
    else
        count(&g.release_stacks, 1);
}

/* ---- worker side ---- */

static void
signal_handler(int signo, siginfo_t *info, void *context)
{
    (void)signo;
    (void)context;
    int saved_errno = errno;
    /* Only our own tgkill (SI_TKILL) while running; rb_postponed_job_trigger
     * is async-signal-safe and targets this thread's execution context. */
    if (info->si_code == SI_TKILL && atomic_load_explicit(&g_signal_armed, memory_order_relaxed))
        rb_postponed_job_trigger(g.job);
    errno = saved_errno;
}

/* Wall mode: the slot's thread took its GVL less than an interval ago: the
 * GVL is changing hands, so a signal would land in the hand-off chain and
 * the job would cut a sliver of a run; the rested pace (a job at most every
 * RPERF_TIMER_DRAIN_NS, the RESUMED hook for what the jobs leave) covers it.
 * Read without ordering: a stale value costs one tick, never a sample's
 * weight (weights are elapsed time on the thread's own clock). */
static int
resumed_within_interval(const rperf_thread_slot_t *slot, int64_t now)
{
    const sampler_thread_t *st = state_of(slot);
    if (!st)
        return 0;
    int64_t resumed = __atomic_load_n(&st->resumed_ns, __ATOMIC_RELAXED);
    return resumed > 0 && now - resumed < g.interval_ns;
}

/* Ruby 3.3 sends a job triggered from a non-Ruby thread to the main
 * Ractor's running_ec: the last thread that ran there, which may have
 * blocked since (the caveat of Ruby's Bug #20197). Then the job waits for
 * that thread to wake, and a thread computing alone meanwhile gets no
 * sample at all (seen: a 300 ms computation without one). So with a timer
 * signal the tick signals the main Ractor's GVL holder that the hooks
 * record instead: its handler triggers the job on its own execution
 * context. One trigger per tick, not both: the job would run twice when
 * the holder serviced the first before the signal came (a second sample
 * of a few microseconds, and a second stack walk).
 * Returns 1 when the tick acted, 0 when wall mode leaves the main Ractor to
 * the hooks: no holder (every thread is off the GVL, time the RESUMED
 * hooks record), or a holder that resumed within the last interval; then
 * at most every RPERF_TIMER_DRAIN_NS the job is triggered for that holder
 * (a flag, no signal: the holder has just taken the GVL, so running_ec
 * is its own), which samples its running time at a random moment. */
static int
sample_main_ractor(pid_t pid, int wall, int64_t now)
{
    static int64_t last_rest_trigger_ns; /* worker thread only */
    const rperf_ractor_slot_t *main_ractor = rperf_ractor_by_id(1);
    int seq = main_ractor ? __atomic_load_n(&main_ractor->holder_seq, __ATOMIC_ACQUIRE) : 0;
    const rperf_thread_slot_t *holder = seq > 0 ? rperf_slot_by_seq(seq) : NULL;
    if (wall && main_ractor && (!holder || resumed_within_interval(holder, now))) {
        if (holder && now - last_rest_trigger_ns >= RPERF_TIMER_DRAIN_NS) {
            last_rest_trigger_ns = now;
            rb_postponed_job_trigger(g.job);
        }
        return 0;
    }
    pid_t tid = holder && g.signo > 0 ? (pid_t)RPERF_LOAD(holder->native_id) : 0;
    if (tid <= 0 || syscall(SYS_tgkill, pid, tid, g.signo) != 0)
        rb_postponed_job_trigger(g.job); /* from a non-Ruby thread: the main Ractor */
    return 1;
}

/* Returns 1 when the tick found nothing to do (timer.h: the worker may
 * then tick less often, and waits as SCHED_BATCH), 0 when it triggered or
 * signalled. Only wall mode has ticks with nothing to do while threads run:
 * cpu mode's samples must interrupt the holder at random moments of its
 * run, which on a busy CPU takes a worker that preempts it (a SCHED_BATCH
 * worker ran only once the holder blocked, so its signal found the next
 * holder just back from its wait: a method computing between hand-offs got
 * 6-22 % of its running time instead of 77-88 %, docs/performance.md). */
static int
worker_tick(void *arg)
{
    (void)arg;
    count(&g.trigger_count, 1);
    int wall = g.opts.mode == RPERF_MODE_WALL;
    int64_t now = wall ? monotonic_ns() : 0;
    pid_t pid = getpid();
    int acted = sample_main_ractor(pid, wall, now);
    if (g.signo <= 0)
        return !acted;

    /* Only the main Ractor registered: nothing to signal (a new Ractor
     * registers from its first RESUMED), and no slot scan per tick. */
    if (rperf_ractor_count() <= 1)
        return !acted;
    /* GVL holders outside the main Ractor (or in a Ractor not identified
     * yet): RUNNING slots, whose native id the RESUMED hook recorded, but
     * in wall mode not those that resumed within the interval (as above).
     * At most MAX_TARGETS per tick; the scan starts where the last one
     * stopped so that, with more holders than that, every one gets its turn. */
    static int scan_from; /* worker thread only */
    pid_t targets[MAX_TARGETS];
    int n = 0;
    int slots = rperf_slot_count();
    for (int k = 0; k < slots && n < MAX_TARGETS; k++) {
        int seq = 1 + (scan_from + k) % slots;
        const rperf_thread_slot_t *slot = rperf_slot_by_seq(seq);
        if (!slot || RPERF_LOAD(slot->state) != RPERF_STATE_RUNNING || RPERF_LOAD(slot->exited))
            continue;
        const rperf_ractor_slot_t *ractor = RPERF_LOAD(slot->ractor);
        if (ractor && ractor->main)
            continue;
        if (wall && resumed_within_interval(slot, now))
            continue;
        pid_t tid = (pid_t)RPERF_LOAD(slot->native_id);
        if (tid > 0)
            targets[n++] = tid;
        if (n == MAX_TARGETS)
            scan_from = seq % slots;
    }
    if (!n)
        return !acted;
    /* The triggered-job bitset is VM-wide: two Ractors servicing it at the
     * same moment would share one run. Spreading the signals over the
     * interval gives each holder its own moment. */
    /* Half the interval at most, so the next tick is not late. */
    int64_t gap = g.interval_ns / (2 * (n + 1));
    if (gap > MAX_SIGNAL_GAP_NS)
        gap = MAX_SIGNAL_GAP_NS;
    for (int i = 0; i < n; i++) {
        if (gap >= MIN_SIGNAL_GAP_NS) {
            struct timespec pause = {.tv_sec = (time_t)(gap / 1000000000LL), .tv_nsec = (long)(gap % 1000000000LL)};
            nanosleep(&pause, NULL);
        }
        if (!recording())
            return 0;
        if (syscall(SYS_tgkill, pid, targets[i], g.signo) == 0)
            count(&g.ractor_signals, 1);
    }
    return 0;
}

/* Drains one buffer into the tables. drain_mutex held. */
static void
drain_locked(void)
{
    if (!g.has_data)
        return;
    rperf_sample_buffer_t *buf = rperf_sample_buffers_swap(&g.buffers);
    uint32_t ids[RPERF_MAX_STACK_DEPTH + 1];
    for (uint32_t n = 0; n < buf->sample_count; n++) {
        const rperf_sample_t *s = &buf->samples[n];
        int release = s->release_index >= 0;
        uint32_t depth = 0;
        if (s->synthetic != RPERF_NO_SYNTHETIC)
            ids[depth++] = (uint32_t)s->synthetic;
        const VALUE *frames = buf->frames + s->frame_start;
        int complete = 1;
        for (int j = 0; j < s->depth; j++) {
            uint32_t id = rperf_frame_table_insert(&g.frames, frames[j]);
            if (id == RPERF_FRAME_ID_NONE) {
                complete = 0;
                break;
            }
            ids[depth++] = id;
        }
        uint32_t stack_id = complete ? rperf_agg_table_intern_stack(&g.agg, ids, depth) : RPERF_STACK_ID_NONE;
        if (release) {
            /* Kept apart from the samples: a stack of the report, no weight. */
            if (stack_id == RPERF_STACK_ID_NONE ||
                rperf_release_stacks_add(&g.releases, s->thread_seq, s->release_index, s->release_generation,
                                         stack_id, s->weight_ns) < 0)
                count(&g.dropped_release_stacks, 1);
            continue;
        }
        if (stack_id == RPERF_STACK_ID_NONE ||
            rperf_agg_table_add(&g.agg, stack_id, s->thread_seq, s->label_set_id, s->weight_ns, s->blame_ns) < 0) {
            count(&g.dropped_aggregation, 1);
            continue;
        }
        if (!g.opts.aggregate &&
            rperf_agg_table_log_raw(&g.agg, stack_id, s->thread_seq, s->label_set_id, s->weight_ns) < 0)
            count(&g.dropped_samples, 1);
    }
    rperf_sample_buffer_reset(buf);
}

static void
worker_drain(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g.drain_mutex);
    drain_locked();
    pthread_mutex_unlock(&g.drain_mutex);
}

/* ---- GC root ---- */

static void
root_mark(void *ptr)
{
    (void)ptr;
    rperf_sampler_mark();
}

static const rb_data_type_t root_type = {
    .wrap_struct_name = "rperf_sampler_root",
    .function = {.dmark = root_mark},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

void
rperf_sampler_mark(void)
{
    if (!g.has_data)
        return;
    /* Buffers before the frame table: a drain publishes table ids before it
     * empties a buffer, so every frame is seen in one place or the other. */
    rperf_sample_buffers_mark(&g.buffers);
    rperf_frame_table_mark(&g.frames);
}

static int
initialize_once(const char **err)
{
    if (g.initialized)
        return 0;
    g.job = rb_postponed_job_preregister(0, sample_job, NULL);
    if (g.job == POSTPONED_JOB_HANDLE_INVALID) {
        *err = "no free postponed job slot";
        return -1;
    }
    /* Non-NULL data: the GC skips dmark for a NULL pointer. */
    rb_gc_register_mark_object(TypedData_Wrap_Struct(0, &root_type, &g));
    g.initialized = 1;
    return 0;
}

static int
install_handler(int signo, const char **err)
{
    if (g_handler_signo == signo)
        return 0;
    struct sigaction current, action;
    if (sigaction(signo, NULL, &current) != 0) {
        *err = "invalid signal number";
        return -1;
    }
    if ((current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != signal_handler : current.sa_handler != SIG_DFL) {
        *err = "the timer signal already has a handler in this process";
        return -1;
    }
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = signal_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signo, &action, NULL) != 0) {
        *err = "sigaction failed";
        return -1;
    }
    /* Kept installed for the life of the process: a signal still in flight
     * after stop must never meet the default action (terminate). */
    g_handler_signo = signo;
    return 0;
}

static void
release_data(void)
{
    if (!g.has_data)
        return;
    g.has_data = 0;
    free(g.threads);
    g.threads = NULL;
    g.max_threads = 0;
    rperf_sample_buffers_free(&g.buffers);
    rperf_frame_table_free(&g.frames);
    rperf_agg_table_free(&g.agg);
    rperf_release_stacks_free(&g.releases);
}

static void
reset_stats(void)
{
    atomic_store(&g.trigger_count, 0);
    atomic_store(&g.sampling_count, 0);
    atomic_store(&g.sampling_time_ns, 0);
    atomic_store(&g.synthetic_samples, 0);
    atomic_store(&g.synthetic_time_ns, 0);
    atomic_store(&g.dropped_samples, 0);
    atomic_store(&g.dropped_aggregation, 0);
    atomic_store(&g.ractor_signals, 0);
    atomic_store(&g.ractor_samples, 0);
    atomic_store(&g.release_stacks, 0);
    atomic_store(&g.dropped_release_stacks, 0);
    g.buffer_dropped_base = atomic_load(&g.buffers.dropped);
    g.buffer_contention_base = atomic_load(&g.buffers.contended);
}

int
rperf_sampler_start(const rperf_sampler_opts_t *opts, const char **err)
{
    if (atomic_load(&g.running)) {
        *err = "sampler already running";
        return -1;
    }
    if (opts->frequency < RPERF_FREQUENCY_MIN || opts->frequency > RPERF_FREQUENCY_MAX) {
        *err = "frequency out of range (Rperf::LIMITS[:frequency])";
        return -1;
    }
    if (opts->mode != RPERF_MODE_CPU && opts->mode != RPERF_MODE_WALL) {
        *err = "mode must be cpu or wall";
        return -1;
    }
    if (initialize_once(err) < 0)
        return -1;
    int signo = opts->signal < 0 ? SIGRTMIN + 6 : opts->signal;
    if (signo > 0 && install_handler(signo, err) < 0)
        return -1;

    release_data();
    /* RPERF_SAMPLER_BUFFER_SAMPLES shrinks the buffers so tests can prove
     * that overflow is counted; it never enlarges them. */
    uint32_t buffer_samples = BUFFER_SAMPLES;
    const char *override = getenv("RPERF_SAMPLER_BUFFER_SAMPLES");
    if (override) {
        long wanted = strtol(override, NULL, 10);
        if (wanted >= 1 && wanted < BUFFER_SAMPLES)
            buffer_samples = (uint32_t)wanted;
    }
    if (rperf_sample_buffers_init(&g.buffers, buffer_samples, BUFFER_FRAMES) < 0) {
        *err = "out of memory for sample buffers";
        return -1;
    }
    if (rperf_frame_table_init(&g.frames, MAX_FRAMES) < 0) {
        rperf_sample_buffers_free(&g.buffers);
        *err = "out of memory for the frame table";
        return -1;
    }
    if (rperf_agg_table_init(&g.agg, MAX_STACKS, MAX_ENTRIES, MAX_POOL_FRAMES,
                             opts->aggregate ? 0 : MAX_RAW_SAMPLES) < 0 ||
        rperf_release_stacks_init(&g.releases, MAX_RELEASE_STACKS) < 0) {
        rperf_sample_buffers_free(&g.buffers);
        rperf_frame_table_free(&g.frames);
        rperf_agg_table_free(&g.agg);
        *err = "out of memory for the aggregation table";
        return -1;
    }
    g.max_threads = opts->max_threads > 0 ? opts->max_threads : RPERF_MAX_THREADS_DEFAULT;
    g.threads = aligned_alloc(RPERF_CACHE_LINE, (size_t)g.max_threads * sizeof(sampler_thread_t));
    if (g.threads)
        memset(g.threads, 0, (size_t)g.max_threads * sizeof(sampler_thread_t));
    if (!g.threads) {
        rperf_sample_buffers_free(&g.buffers);
        rperf_frame_table_free(&g.frames);
        rperf_agg_table_free(&g.agg);
        rperf_release_stacks_free(&g.releases);
        *err = "out of memory for per-thread sampler state";
        return -1;
    }
    g.has_data = 1;
    g.opts = *opts;
    g.signo = signo;
    g.interval_ns = 1000000000LL / opts->frequency;
    g.generation++;
    if (g.generation == 0)
        g.generation = 1; /* 0 means "never seen" */
    reset_stats();

    atomic_store(&g.paused, opts->deferred ? 1 : 0);
    atomic_store(&g.running, 1);
    atomic_store(&g_signal_armed, signo > 0);
    rperf_timer_callbacks_t callbacks = {.tick = worker_tick, .drain = worker_drain, .arg = NULL};
    if (rperf_timer_start(g.interval_ns, signo, !opts->deferred, &callbacks, err) < 0) {
        atomic_store(&g_signal_armed, 0);
        atomic_store(&g.running, 0);
        release_data();
        return -1;
    }
    return 0;
}

int
rperf_sampler_supported(void)
{
    return 1;
}

int
rperf_sampler_running(void)
{
    return atomic_load(&g.running);
}

static void
flush_pending_cb(rperf_thread_slot_t *slot, void *arg)
{
    (void)arg;
    sampler_thread_t *st = state_of(slot);
    if (!st || st->generation != g.generation)
        return;
    for (int frame = 0; frame < RPERF_SYNTHETIC_FRAMES; frame++) {
        if (st->pending_ns[frame] <= 0)
            continue;
        /* Other threads' stacks cannot be walked safely from here (they
         * may run in another Ractor): the time keeps its synthetic frame. */
        write_sample(NULL, 0, frame, st->pending_ns[frame], 0, slot->seq, st->pending_label_set_id[frame]);
        st->pending_ns[frame] = 0;
    }
}

/* A thread that has exited adds no more time, so what it still has pending
 * goes into the report being built: left for later, it would reach a report
 * after a clearing cut that no longer lists the thread. Its hooks are over
 * (EXITED is its last event), so nothing else writes its state. */
static void
flush_exited_cb(rperf_thread_slot_t *slot, void *arg)
{
    if (__atomic_load_n(&slot->exited, __ATOMIC_ACQUIRE))
        flush_pending_cb(slot, arg);
}

void
rperf_sampler_stop(void)
{
    if (!atomic_load(&g.running))
        return;
    int was_paused = atomic_load(&g.paused);
    atomic_store(&g_signal_armed, 0);
    rperf_timer_stop();
    if (!was_paused)
        rperf_slots_foreach(flush_pending_cb, NULL);
    atomic_store(&g.running, 0);
    rperf_sampler_flush();
}

void
rperf_sampler_free(void)
{
    if (atomic_load(&g.running))
        return;
    pthread_mutex_lock(&g.drain_mutex);
    release_data();
    pthread_mutex_unlock(&g.drain_mutex);
}

void
rperf_sampler_pause(void)
{
    if (!atomic_load(&g.running) || atomic_exchange(&g.paused, 1))
        return;
    rperf_timer_disarm();
}

void
rperf_sampler_resume(void)
{
    if (!atomic_load(&g.running) || !atomic_load(&g.paused))
        return;
    rperf_slots_foreach(reset_slot_cb, NULL);
    atomic_store(&g.paused, 0);
    rperf_timer_arm();
}

int
rperf_sampler_paused(void)
{
    return atomic_load(&g.paused);
}

void
rperf_sampler_flush(void)
{
    pthread_mutex_lock(&g.drain_mutex);
    drain_locked();
    pthread_mutex_unlock(&g.drain_mutex);
}

void
rperf_sampler_clear(void)
{
    pthread_mutex_lock(&g.drain_mutex);
    drain_locked();
    /* Releases after the cut lose their stack with the stack ids: the next
     * report counts them (after the reset). */
    uint64_t lost = g.has_data ? rperf_release_stacks_count_from(&g.releases, rperf_contention_release_generation())
                               : 0;
    if (g.has_data) {
        rperf_agg_table_clear(&g.agg);
        rperf_release_stacks_clear(&g.releases);
    }
    reset_stats();
    count(&g.dropped_release_stacks, lost);
    pthread_mutex_unlock(&g.drain_mutex);
}

void
rperf_sampler_each_release_stack(uint32_t generation, rperf_release_stack_fn *fn, void *arg)
{
    pthread_mutex_lock(&g.drain_mutex);
    drain_locked();
    if (g.has_data) {
        for (uint32_t n = 0; n < g.releases.count; n++) {
            const rperf_release_stack_t *e = &g.releases.entries[n];
            if (e->generation < generation)
                fn(e->waiter_seq, e->release_index, e->stack_id, e->ns, e->count, arg);
        }
    }
    pthread_mutex_unlock(&g.drain_mutex);
}

void
rperf_sampler_get_stats(rperf_sampler_stats_t *out)
{
    uint64_t buffer_dropped = atomic_load(&g.buffers.dropped) - g.buffer_dropped_base;
    out->trigger_count = atomic_load(&g.trigger_count);
    out->sampling_count = atomic_load(&g.sampling_count);
    out->sampling_time_ns = atomic_load(&g.sampling_time_ns);
    out->dropped_samples = atomic_load(&g.dropped_samples) + buffer_dropped;
    out->dropped_aggregation = atomic_load(&g.dropped_aggregation);
    out->synthetic_samples = atomic_load(&g.synthetic_samples);
    out->synthetic_time_ns = atomic_load(&g.synthetic_time_ns);
    out->ractor_signals = atomic_load(&g.ractor_signals);
    out->ractor_samples = atomic_load(&g.ractor_samples);
    out->buffer_contention = atomic_load(&g.buffers.contended) - g.buffer_contention_base;
    out->release_stacks = atomic_load(&g.release_stacks);
    out->dropped_release_stacks = atomic_load(&g.dropped_release_stacks);
}

static void
set_stat(VALUE stats, const char *key, uint64_t value)
{
    rb_hash_aset(stats, rb_str_new_cstr(key), ULL2NUM(value));
}

void
rperf_sampler_fill_report(VALUE report)
{
    rperf_sampler_stats_t stats;
    VALUE frames_ary, stacks_ary, samples_ary, blame_ary, raw_ary = Qnil;

    if (atomic_load(&g.running))
        rperf_slots_foreach(flush_exited_cb, NULL);
    pthread_mutex_lock(&g.drain_mutex);
    drain_locked();
    if (!g.has_data) {
        frames_ary = rb_ary_new();
        stacks_ary = rb_ary_new();
        samples_ary = rb_ary_new();
        blame_ary = rb_ary_new();
    } else {
        /* Allocating Ruby objects with the drain mutex held is safe: the GC
         * mark never takes it, and the worker never waits on Ruby. */
        frames_ary = rb_ary_dup(rperf_frame_table_resolve(&g.frames));
        const rperf_agg_table_t *at = &g.agg;
        stacks_ary = rb_ary_new_capa(at->stack_count);
        for (uint32_t id = 0; id < at->stack_count; id++) {
            uint32_t depth;
            const uint32_t *ids = rperf_agg_table_stack_frames(at, id, &depth);
            VALUE stack = rb_ary_new_capa(depth);
            for (uint32_t j = 0; j < depth; j++)
                rb_ary_push(stack, UINT2NUM(ids[j]));
            rb_ary_push(stacks_ary, stack);
        }
        samples_ary = rb_ary_new_capa(at->entry_count);
        blame_ary = rb_ary_new();
        for (uint32_t n = 0; n < at->entry_count; n++) {
            const rperf_agg_entry_t *e = &at->entries[n];
            rb_ary_push(samples_ary, rb_ary_new_from_args(4, UINT2NUM(e->stack_id), LL2NUM(e->weight_ns),
                                                          INT2NUM(e->thread_seq), INT2NUM(e->label_set_id)));
            if (e->blame_ns > 0)
                rb_ary_push(blame_ary, rb_ary_new_from_args(4, UINT2NUM(e->stack_id), INT2NUM(e->thread_seq),
                                                            INT2NUM(e->label_set_id), LL2NUM(e->blame_ns)));
        }
        if (!g.opts.aggregate) {
            raw_ary = rb_ary_new_capa((long)at->raw_count);
            for (size_t n = 0; n < at->raw_count; n++) {
                const rperf_raw_sample_t *r = &at->raw[n];
                rb_ary_push(raw_ary, rb_ary_new_from_args(4, UINT2NUM(r->stack_id), LL2NUM(r->weight_ns),
                                                          INT2NUM(r->thread_seq), INT2NUM(r->label_set_id)));
            }
        }
    }
    rperf_sampler_get_stats(&stats);
    pthread_mutex_unlock(&g.drain_mutex);

    rb_hash_aset(report, rb_str_new_cstr("frames"), frames_ary);
    rb_hash_aset(report, rb_str_new_cstr("stacks"), stacks_ary);
    rb_hash_aset(report, rb_str_new_cstr("samples"), samples_ary);
    rb_hash_aset(report, rb_str_new_cstr("blame"), blame_ary);
    if (!NIL_P(raw_ary))
        rb_hash_aset(report, rb_str_new_cstr("raw_samples"), raw_ary);

    VALUE key = rb_str_new_cstr("stats");
    VALUE stats_hash = rb_hash_aref(report, key);
    if (!RB_TYPE_P(stats_hash, T_HASH)) {
        stats_hash = rb_hash_new();
        rb_hash_aset(report, key, stats_hash);
    }
    /* Read after the drain: the samples it took are counted. */
#define SET_SAMPLER_STAT(name) set_stat(stats_hash, #name, stats.name);
#define SET_STAT(name, counter) RPERF_STAT_IF(SAMPLER, counter, SET_SAMPLER_STAT, name)
    RPERF_REPORT_STATS(SET_STAT)
#undef SET_STAT
#undef SET_SAMPLER_STAT
}

void
rperf_sampler_before_fork(void)
{
    pthread_mutex_lock(&g.drain_mutex);
}

void
rperf_sampler_after_fork_parent(void)
{
    pthread_mutex_unlock(&g.drain_mutex);
}

void
rperf_sampler_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    atomic_store(&g_signal_armed, 0);
    atomic_store(&g.running, 0);
    atomic_store(&g.paused, 0);
    rperf_timer_after_fork_child();
    g.drain_mutex = fresh;
    if (g.has_data)
        rperf_sample_buffers_after_fork(&g.buffers);
    /* No free() here: another parent thread (the worker draining) may have
     * held the allocator's lock at fork, and not every allocator (ASan's
     * quarantine) resets it for the child. rperf_sampler_free, on the
     * child's next call, releases the tables. */
    g.generation++;
}
