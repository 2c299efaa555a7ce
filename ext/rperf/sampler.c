/*
 * sampler.c — the safepoint sampler: lifecycle, the postponed sampling job,
 * GVL-holder tracking for Ractors, and the drain from the sample buffers
 * into the frame and aggregation tables. What the hooks run (the recorders,
 * the signal handler) is sampler_hooks.c's; the state both share is
 * sampler_state.h's.
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
#include "sampler_state.h"
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

static int g_handler_signo; /* signal whose handler is installed (kept for the process) */

/* ---- per-slot clocks ---- */

void
rperf_sampler_reset_slot_clock(rperf_thread_slot_t *slot)
{
    rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    int64_t now;
    if (!st)
        return;
    if (rperf_sampler_g.opts.mode == RPERF_MODE_WALL) {
        st->sample_prev_ns = rperf_sampler_monotonic_ns();
    } else if (st->has_cpu_clock && st->has_clock_thread && rperf_sampler_clock_ns(st->cpu_clock, &now) == 0) {
        /* The slot's own clock, read from here: never the caller's. */
        st->sample_prev_ns = now;
    } else {
        st->generation = 0; /* re-based on its own thread when next seen */
        return;
    }
    if (st->generation != rperf_sampler_g.generation)
        memset(st->pending_ns, 0, sizeof(st->pending_ns));
    st->generation = rperf_sampler_g.generation;
}

static void
reset_slot_cb(rperf_thread_slot_t *slot, void *arg)
{
    (void)arg;
    rperf_sampler_reset_slot_clock(slot);
}

/* ---- the job ---- */

/* The job's thread may have started while the profile was paused: it gets
 * its slot here, from the clipped clock like any other first event. */
static rperf_thread_slot_t *
slot_of(VALUE thread)
{
    rperf_thread_slot_t *slot = rperf_slot_find(thread);
    return slot ? slot : rperf_slot_claim(thread, rperf_contention_now_clipped());
}

/* Postponed job: runs at a safepoint on whichever thread serviced the
 * interrupt, holding that thread's Ractor GVL; samples that thread. */
static void
sample_job(void *arg)
{
    (void)arg;
    if (!rperf_sampler_recording())
        return;
    int64_t started = rperf_sampler_monotonic_ns();
    VALUE thread = rb_thread_current();
    rperf_thread_slot_t *slot = slot_of(thread);
    rperf_sampler_thread_t *st = slot ? rperf_sampler_state_of(slot) : NULL;
    if (!st) {
        rperf_sampler_count(&rperf_sampler_g.dropped_samples, 1);
        return;
    }
    if (rperf_sampler_prime_slot(slot, st))
        return;
    int64_t now;
    if (rperf_sampler_g.opts.mode == RPERF_MODE_CPU) {
        /* prime_slot made this native thread the slot's clock owner, so the
         * calling thread's clock is the slot's clock (and the kernel's fast path). */
        if (rperf_sampler_clock_ns(CLOCK_THREAD_CPUTIME_ID, &now) != 0)
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
    rperf_sampler_write_sample(frames, depth, RPERF_NO_SYNTHETIC, weight, weight * (waiters > 0 ? waiters : 0),
                               slot->seq, slot->label_set_id);

    if (!own || !own->main)
        rperf_sampler_count(&rperf_sampler_g.ractor_samples, 1);
    rperf_sampler_count(&rperf_sampler_g.sampling_count, 1);
    rperf_sampler_count(&rperf_sampler_g.sampling_time_ns, (uint64_t)(rperf_sampler_monotonic_ns() - started));
}

/* ---- worker side ---- */

/* Wall mode: the slot's thread took its GVL less than an interval ago: the
 * GVL is changing hands, so a signal would land in the hand-off chain and
 * the job would cut a sliver of a run; the rested pace (a job at most every
 * RPERF_TIMER_DRAIN_NS, the RESUMED hook for what the jobs leave) covers it.
 * Read without ordering: a stale value costs one tick, never a sample's
 * weight (weights are elapsed time on the thread's own clock). */
static int
resumed_within_interval(const rperf_thread_slot_t *slot, int64_t now)
{
    const rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    if (!st)
        return 0;
    int64_t resumed = __atomic_load_n(&st->resumed_ns, __ATOMIC_RELAXED);
    return resumed > 0 && now - resumed < rperf_sampler_g.interval_ns;
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
            rb_postponed_job_trigger(rperf_sampler_g.job);
        }
        return 0;
    }
    pid_t tid = holder && rperf_sampler_g.signo > 0 ? (pid_t)RPERF_LOAD(holder->native_id) : 0;
    if (tid <= 0 || syscall(SYS_tgkill, pid, tid, rperf_sampler_g.signo) != 0)
        rb_postponed_job_trigger(rperf_sampler_g.job); /* from a non-Ruby thread: the main Ractor */
    return 1;
}

/* Returns 1 when the tick found nothing to do (the worker may then rest:
 * timer.h), 0 when it triggered or signalled. cpu mode's samples must
 * interrupt the holder at random moments of its run: with a signal, direct
 * ticks do that for the main Ractor (the handler counts them), and this
 * tick acts only for other Ractors' holders; without one, the worker never
 * rests (timer.h says why). */
static int
worker_tick(void *arg)
{
    (void)arg;
    if (!rperf_sampler_g.direct)
        rperf_sampler_count(&rperf_sampler_g.trigger_count, 1);
    int wall = rperf_sampler_g.opts.mode == RPERF_MODE_WALL;
    int64_t now = wall ? rperf_sampler_monotonic_ns() : 0;
    pid_t pid = getpid();
    int acted = rperf_sampler_g.direct ? 0 : sample_main_ractor(pid, wall, now);
    if (rperf_sampler_g.signo <= 0)
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
    int64_t gap = rperf_sampler_g.interval_ns / (2 * (n + 1));
    if (gap > MAX_SIGNAL_GAP_NS)
        gap = MAX_SIGNAL_GAP_NS;
    for (int i = 0; i < n; i++) {
        if (gap >= MIN_SIGNAL_GAP_NS) {
            struct timespec pause = {.tv_sec = (time_t)(gap / 1000000000LL), .tv_nsec = (long)(gap % 1000000000LL)};
            nanosleep(&pause, NULL);
        }
        if (!rperf_sampler_recording())
            return 0;
        if (syscall(SYS_tgkill, pid, targets[i], rperf_sampler_g.signo) == 0)
            rperf_sampler_count(&rperf_sampler_g.ractor_signals, 1);
    }
    return 0;
}

/* Drains one buffer into the tables. drain_mutex held. */
static void
drain_locked(void)
{
    if (!rperf_sampler_g.has_data)
        return;
    rperf_sample_buffer_t *buf = rperf_sample_buffers_swap(&rperf_sampler_g.buffers);
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
            uint32_t id = rperf_frame_table_insert(&rperf_sampler_g.frames, frames[j]);
            if (id == RPERF_FRAME_ID_NONE) {
                complete = 0;
                break;
            }
            ids[depth++] = id;
        }
        uint32_t stack_id = complete ? rperf_agg_table_intern_stack(&rperf_sampler_g.agg, ids, depth)
                                     : RPERF_STACK_ID_NONE;
        if (release) {
            /* Kept apart from the samples: a stack of the report, no weight. */
            if (stack_id == RPERF_STACK_ID_NONE ||
                rperf_release_stacks_add(&rperf_sampler_g.releases, s->thread_seq, s->release_index,
                                         s->release_generation, stack_id, s->weight_ns) < 0)
                rperf_sampler_count(&rperf_sampler_g.dropped_release_stacks, 1);
            continue;
        }
        if (stack_id == RPERF_STACK_ID_NONE || rperf_agg_table_add(&rperf_sampler_g.agg, stack_id, s->thread_seq,
                                                                   s->label_set_id, s->weight_ns, s->blame_ns) < 0) {
            rperf_sampler_count(&rperf_sampler_g.dropped_aggregation, 1);
            continue;
        }
        if (!rperf_sampler_g.opts.aggregate && rperf_agg_table_log_raw(&rperf_sampler_g.agg, stack_id, s->thread_seq,
                                                                       s->label_set_id, s->weight_ns) < 0)
            rperf_sampler_count(&rperf_sampler_g.dropped_samples, 1);
    }
    rperf_sample_buffer_reset(buf);
}

static void
worker_drain(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
    drain_locked();
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);
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
    if (!rperf_sampler_g.has_data)
        return;
    /* Buffers before the frame table: a drain publishes table ids before it
     * empties a buffer, so every frame is seen in one place or the other. */
    rperf_sample_buffers_mark(&rperf_sampler_g.buffers);
    rperf_frame_table_mark(&rperf_sampler_g.frames);
}

static int
initialize_once(const char **err)
{
    if (rperf_sampler_g.initialized)
        return 0;
    rperf_sampler_g.job = rb_postponed_job_preregister(0, sample_job, NULL);
    if (rperf_sampler_g.job == POSTPONED_JOB_HANDLE_INVALID) {
        *err = "no free postponed job slot";
        return -1;
    }
    /* Non-NULL data: the GC skips dmark for a NULL pointer. */
    rb_gc_register_mark_object(TypedData_Wrap_Struct(0, &root_type, &rperf_sampler_g));
    rperf_sampler_g.initialized = 1;
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
    if ((current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != rperf_sampler_signal_handler
                                        : current.sa_handler != SIG_DFL) {
        *err = "the timer signal already has a handler in this process";
        return -1;
    }
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = rperf_sampler_signal_handler;
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

/* Frees the buffers, tables and per-thread state. Each part is zeroed
 * when freed or never made, so this also undoes a start that failed
 * halfway. */
static void
free_data(void)
{
    free(rperf_sampler_g.threads);
    rperf_sampler_g.threads = NULL;
    rperf_sampler_g.max_threads = 0;
    rperf_sample_buffers_free(&rperf_sampler_g.buffers);
    rperf_frame_table_free(&rperf_sampler_g.frames);
    rperf_agg_table_free(&rperf_sampler_g.agg);
    rperf_release_stacks_free(&rperf_sampler_g.releases);
}

static void
release_data(void)
{
    if (!rperf_sampler_g.has_data)
        return;
    rperf_sampler_g.has_data = 0;
    free_data();
}

static void
reset_stats(void)
{
    atomic_store(&rperf_sampler_g.trigger_count, 0);
    atomic_store(&rperf_sampler_g.sampling_count, 0);
    atomic_store(&rperf_sampler_g.sampling_time_ns, 0);
    atomic_store(&rperf_sampler_g.synthetic_samples, 0);
    atomic_store(&rperf_sampler_g.synthetic_time_ns, 0);
    atomic_store(&rperf_sampler_g.dropped_samples, 0);
    atomic_store(&rperf_sampler_g.dropped_aggregation, 0);
    atomic_store(&rperf_sampler_g.ractor_signals, 0);
    atomic_store(&rperf_sampler_g.ractor_samples, 0);
    atomic_store(&rperf_sampler_g.release_stacks, 0);
    atomic_store(&rperf_sampler_g.dropped_release_stacks, 0);
    rperf_sampler_g.buffer_dropped_base = atomic_load(&rperf_sampler_g.buffers.dropped);
    rperf_sampler_g.buffer_contention_base = atomic_load(&rperf_sampler_g.buffers.contended);
}

int
rperf_sampler_start(const rperf_sampler_opts_t *opts, const char **err)
{
    if (atomic_load(&rperf_sampler_g.running)) {
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
    const char *oom = NULL;
    int max_threads = opts->max_threads > 0 ? opts->max_threads : RPERF_MAX_THREADS_DEFAULT;
    if (rperf_sample_buffers_init(&rperf_sampler_g.buffers, buffer_samples, BUFFER_FRAMES) < 0)
        oom = "out of memory for sample buffers";
    else if (rperf_frame_table_init(&rperf_sampler_g.frames, MAX_FRAMES) < 0)
        oom = "out of memory for the frame table";
    else if (rperf_agg_table_init(&rperf_sampler_g.agg, MAX_STACKS, MAX_ENTRIES, MAX_POOL_FRAMES,
                                  opts->aggregate ? 0 : MAX_RAW_SAMPLES) < 0 ||
             rperf_release_stacks_init(&rperf_sampler_g.releases, MAX_RELEASE_STACKS) < 0)
        oom = "out of memory for the aggregation table";
    else if (!(rperf_sampler_g.threads = aligned_alloc(RPERF_CACHE_LINE,
                                                       (size_t)max_threads * sizeof(rperf_sampler_thread_t))))
        oom = "out of memory for per-thread sampler state";
    if (oom) {
        free_data();
        *err = oom;
        return -1;
    }
    rperf_sampler_g.max_threads = max_threads;
    memset(rperf_sampler_g.threads, 0, (size_t)max_threads * sizeof(rperf_sampler_thread_t));
    rperf_sampler_g.has_data = 1;
    rperf_sampler_g.opts = *opts;
    rperf_sampler_g.signo = signo;
    rperf_sampler_g.interval_ns = 1000000000LL / opts->frequency;
    rperf_sampler_g.generation++;
    if (rperf_sampler_g.generation == 0)
        rperf_sampler_g.generation = 1; /* 0 means "never seen" */
    reset_stats();

    atomic_store(&rperf_sampler_g.paused, opts->deferred ? 1 : 0);
    atomic_store(&rperf_sampler_g.running, 1);
    atomic_store(&rperf_sampler_signal_armed, signo > 0);
    /* cpu mode's samples must land at random moments of the holder's run:
     * direct ticks do, without waking a thread on a busy CPU (timer.h). The
     * worker then waits on a condvar: in sigtimedwait it would take them. */
    rperf_sampler_g.direct = opts->mode == RPERF_MODE_CPU && signo > 0;
    rperf_timer_callbacks_t callbacks = {.tick = worker_tick, .drain = worker_drain, .arg = NULL};
    if (rperf_timer_start(rperf_sampler_g.interval_ns, rperf_sampler_g.direct ? 0 : signo,
                          rperf_sampler_g.direct ? signo : 0, !opts->deferred, &callbacks, err) < 0) {
        atomic_store(&rperf_sampler_signal_armed, 0);
        atomic_store(&rperf_sampler_g.running, 0);
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
    return atomic_load(&rperf_sampler_g.running);
}

static void
flush_pending_cb(rperf_thread_slot_t *slot, void *arg)
{
    (void)arg;
    rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    if (!st || st->generation != rperf_sampler_g.generation)
        return;
    for (int frame = 0; frame < RPERF_SYNTHETIC_FRAMES; frame++) {
        if (st->pending_ns[frame] <= 0)
            continue;
        /* Other threads' stacks cannot be walked safely from here (they
         * may run in another Ractor): the time keeps its synthetic frame. */
        rperf_sampler_write_sample(NULL, 0, frame, st->pending_ns[frame], 0, slot->seq,
                                   st->pending_label_set_id[frame]);
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
    if (!atomic_load(&rperf_sampler_g.running))
        return;
    int was_paused = atomic_load(&rperf_sampler_g.paused);
    atomic_store(&rperf_sampler_signal_armed, 0);
    rperf_timer_stop();
    if (!was_paused)
        rperf_slots_foreach(flush_pending_cb, NULL);
    atomic_store(&rperf_sampler_g.running, 0);
    rperf_sampler_flush();
}

void
rperf_sampler_free(void)
{
    if (atomic_load(&rperf_sampler_g.running))
        return;
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
    release_data();
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);
}

void
rperf_sampler_pause(void)
{
    if (!atomic_load(&rperf_sampler_g.running) || atomic_exchange(&rperf_sampler_g.paused, 1))
        return;
    rperf_timer_disarm();
}

void
rperf_sampler_resume(void)
{
    if (!atomic_load(&rperf_sampler_g.running) || !atomic_load(&rperf_sampler_g.paused))
        return;
    rperf_slots_foreach(reset_slot_cb, NULL);
    atomic_store(&rperf_sampler_g.paused, 0);
    rperf_timer_arm();
}

int
rperf_sampler_paused(void)
{
    return atomic_load(&rperf_sampler_g.paused);
}

void
rperf_sampler_flush(void)
{
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
    drain_locked();
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);
}

void
rperf_sampler_clear(void)
{
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
    drain_locked();
    /* Releases after the cut lose their stack with the stack ids: the next
     * report counts them (after the reset). */
    uint64_t lost = rperf_sampler_g.has_data ? rperf_release_stacks_count_from(&rperf_sampler_g.releases,
                                                                               rperf_contention_release_generation())
                                             : 0;
    if (rperf_sampler_g.has_data) {
        rperf_agg_table_clear(&rperf_sampler_g.agg);
        rperf_release_stacks_clear(&rperf_sampler_g.releases);
    }
    reset_stats();
    rperf_sampler_count(&rperf_sampler_g.dropped_release_stacks, lost);
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);
}

void
rperf_sampler_each_release_stack(uint32_t generation, rperf_release_stack_fn *fn, void *arg)
{
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
    drain_locked();
    if (rperf_sampler_g.has_data) {
        for (uint32_t n = 0; n < rperf_sampler_g.releases.count; n++) {
            const rperf_release_stack_t *e = &rperf_sampler_g.releases.entries[n];
            if (e->generation < generation)
                fn(e->waiter_seq, e->release_index, e->stack_id, e->ns, e->count, arg);
        }
    }
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);
}

void
rperf_sampler_get_stats(rperf_sampler_stats_t *out)
{
    uint64_t buffer_dropped = atomic_load(&rperf_sampler_g.buffers.dropped) - rperf_sampler_g.buffer_dropped_base;
    out->trigger_count = atomic_load(&rperf_sampler_g.trigger_count);
    out->sampling_count = atomic_load(&rperf_sampler_g.sampling_count);
    out->sampling_time_ns = atomic_load(&rperf_sampler_g.sampling_time_ns);
    out->dropped_samples = atomic_load(&rperf_sampler_g.dropped_samples) + buffer_dropped;
    out->dropped_aggregation = atomic_load(&rperf_sampler_g.dropped_aggregation);
    out->synthetic_samples = atomic_load(&rperf_sampler_g.synthetic_samples);
    out->synthetic_time_ns = atomic_load(&rperf_sampler_g.synthetic_time_ns);
    out->ractor_signals = atomic_load(&rperf_sampler_g.ractor_signals);
    out->ractor_samples = atomic_load(&rperf_sampler_g.ractor_samples);
    out->buffer_contention = atomic_load(&rperf_sampler_g.buffers.contended) -
                             rperf_sampler_g.buffer_contention_base;
    out->release_stacks = atomic_load(&rperf_sampler_g.release_stacks);
    out->dropped_release_stacks = atomic_load(&rperf_sampler_g.dropped_release_stacks);
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

    if (atomic_load(&rperf_sampler_g.running))
        rperf_slots_foreach(flush_exited_cb, NULL);
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
    drain_locked();
    if (!rperf_sampler_g.has_data) {
        frames_ary = rb_ary_new();
        stacks_ary = rb_ary_new();
        samples_ary = rb_ary_new();
        blame_ary = rb_ary_new();
    } else {
        /* Allocating Ruby objects with the drain mutex held is safe: the GC
         * mark never takes it, and the worker never waits on Ruby. */
        frames_ary = rb_ary_dup(rperf_frame_table_resolve(&rperf_sampler_g.frames));
        const rperf_agg_table_t *at = &rperf_sampler_g.agg;
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
        if (!rperf_sampler_g.opts.aggregate) {
            raw_ary = rb_ary_new_capa((long)at->raw_count);
            for (size_t n = 0; n < at->raw_count; n++) {
                const rperf_raw_sample_t *r = &at->raw[n];
                rb_ary_push(raw_ary, rb_ary_new_from_args(4, UINT2NUM(r->stack_id), LL2NUM(r->weight_ns),
                                                          INT2NUM(r->thread_seq), INT2NUM(r->label_set_id)));
            }
        }
    }
    rperf_sampler_get_stats(&stats);
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);

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
    pthread_mutex_lock(&rperf_sampler_g.drain_mutex);
}

void
rperf_sampler_after_fork_parent(void)
{
    pthread_mutex_unlock(&rperf_sampler_g.drain_mutex);
}

void
rperf_sampler_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    atomic_store(&rperf_sampler_signal_armed, 0);
    atomic_store(&rperf_sampler_g.running, 0);
    atomic_store(&rperf_sampler_g.paused, 0);
    rperf_timer_after_fork_child();
    rperf_sampler_g.drain_mutex = fresh;
    if (rperf_sampler_g.has_data)
        rperf_sample_buffers_after_fork(&rperf_sampler_g.buffers);
    /* No free() here: another parent thread (the worker draining) may have
     * held the allocator's lock at fork, and not every allocator (ASan's
     * quarantine) resets it for the child. rperf_sampler_free, on the
     * child's next call, releases the tables. */
    rperf_sampler_g.generation++;
}
