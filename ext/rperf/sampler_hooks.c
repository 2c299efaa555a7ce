/*
 * sampler_hooks.c — what the hooks and the signal handler run of the
 * sampler: the per-slot sample clocks, the recorders of synthetic time,
 * running time at RESUMED and EXITED and release stacks (sampler.h states
 * their rules), and the signal handler: the ticks sent to other Ractors'
 * holders and cpu mode's direct ticks (timer.h).
 *
 * Only code the hooks run lives here (test/c/check_hook_calls.rb checks
 * it). It does NOT start, stop, tick or drain the sampler (sampler.c), and
 * does NOT allocate.
 */
#define _GNU_SOURCE 1
#include "sampler.h"
#include "sampler_state.h"
#include "contention_events.h"
#include "native_tid.h"
#include "ractor_table.h"
#include "thread_slot.h"
#include "timer.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Wall mode, while the GVL changes hands: the RESUMED hook samples a
 * thread's running time once it reaches this many intervals, and the
 * worker triggers the job at most once per RPERF_TIMER_DRAIN_NS for the
 * Ractor's current holder. The job's stack is taken at a random moment of
 * a run; the hook's is where the run ended (the call that gave up the
 * GVL), so the hook's threshold is high enough that the running time of a
 * thread the jobs reach goes to the jobs' samples (docs/performance.md,
 * "The hook's running samples at 100 intervals"). What no sample took when
 * a thread exits goes to one empty-stack sample at its EXITED; a thread
 * still alive at stop leaves at most this many intervals unsampled. */
#define HOOK_RUNNING_INTERVALS 100


int
rperf_sampler_prime_slot_slow(rperf_thread_slot_t *slot, rperf_sampler_thread_t *st)
{
    int restart = st->generation != rperf_sampler_g.generation;
    if (rperf_sampler_g.opts.mode == RPERF_MODE_CPU) {
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
        if (rperf_sampler_clock_ns(st->cpu_clock, &now) != 0)
            return 1;
        st->sample_prev_ns = now;
    } else {
        if (!restart)
            return 0;
        st->sample_prev_ns = rperf_sampler_monotonic_ns();
    }
    if (st->generation != rperf_sampler_g.generation) {
        memset(st->pending_ns, 0, sizeof(st->pending_ns));
        st->generation = rperf_sampler_g.generation;
    }
    return 1;
}

/* Writes the pending time of the frames in frames_mask and, when
 * running_ns > 0, a regular sample of that much running time (blamed like
 * the job's), all on one walk of the thread's stack. */
static void
emit_pending(rperf_thread_slot_t *slot, rperf_sampler_thread_t *st, VALUE thread, unsigned frames_mask,
             int64_t running_ns)
{
    int64_t started = rperf_sampler_monotonic_ns();
    VALUE frames[RPERF_MAX_STACK_DEPTH];
    int depth = -1;
    uint64_t written = 0;
    if (running_ns > 0) {
        depth = rb_profile_thread_frames(thread, 0, RPERF_MAX_STACK_DEPTH, frames, NULL);
        const rperf_ractor_slot_t *own = RPERF_LOAD(slot->ractor);
        int waiters = own ? rperf_ractor_waiters(own) : 0;
        rperf_sampler_write_sample(frames, depth, RPERF_NO_SYNTHETIC, running_ns,
                                   running_ns * (waiters > 0 ? waiters : 0), slot->seq, slot->label_set_id);
        written++;
    }
    for (int frame = 0; frame < RPERF_SYNTHETIC_FRAMES; frame++) {
        if (!(frames_mask & (1u << frame)) || st->pending_ns[frame] <= 0)
            continue;
        /* One walk serves every frame: the thread has not run since. */
        if (depth < 0)
            depth = rb_profile_thread_frames(thread, 0, RPERF_MAX_STACK_DEPTH, frames, NULL);
        rperf_sampler_write_sample(frames, depth, frame, st->pending_ns[frame], 0, slot->seq,
                                   st->pending_label_set_id[frame]);
        st->pending_ns[frame] = 0;
        written++;
    }
    if (!written)
        return;
    uint64_t spent = (uint64_t)(rperf_sampler_monotonic_ns() - started);
    rperf_sampler_count(&rperf_sampler_g.sampling_count, written);
    rperf_sampler_count(&rperf_sampler_g.synthetic_samples, written);
    rperf_sampler_count(&rperf_sampler_g.sampling_time_ns, spent);
    rperf_sampler_count(&rperf_sampler_g.synthetic_time_ns, spent);
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
accumulate(rperf_thread_slot_t *slot, rperf_sampler_thread_t *st, VALUE thread,
           const int64_t weights[RPERF_SYNTHETIC_FRAMES], int64_t total_ns, int64_t running_until_ns)
{
    int64_t total = total_ns;
    int64_t running = 0;
    if (!rperf_sampler_prime_slot(slot, st)) {
        st->sample_prev_ns += total;
        if (running_until_ns > 0 &&
            running_until_ns - st->sample_prev_ns >= HOOK_RUNNING_INTERVALS * rperf_sampler_g.interval_ns) {
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
        if (st->pending_ns[frame] >= rperf_sampler_g.interval_ns)
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
    if (!slot || rperf_sampler_g.opts.mode == RPERF_MODE_CPU || !rperf_sampler_recording())
        return;
    rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    if (!st) {
        if (blocked_ns + wait_ns > 0)
            rperf_sampler_count(&rperf_sampler_g.dropped_samples, 1);
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
    if (!slot || rperf_sampler_g.opts.mode == RPERF_MODE_CPU || !rperf_sampler_recording())
        return;
    rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    if (!st || st->generation != rperf_sampler_g.generation)
        return;
    /* The sample clock stands where the last sample (or off-GVL weight)
     * left it: what follows is running time no sample took. */
    int64_t running = now_ns - st->sample_prev_ns;
    if (running <= 0)
        return;
    st->sample_prev_ns = now_ns;
    rperf_sampler_write_sample(NULL, 0, RPERF_NO_SYNTHETIC, running, 0, slot->seq, slot->label_set_id);
    rperf_sampler_count(&rperf_sampler_g.sampling_count, 1);
    rperf_sampler_count(&rperf_sampler_g.synthetic_samples, 1);
}

void
rperf_sampler_gc_span_begin(rperf_thread_slot_t *slot)
{
    if (!slot || rperf_sampler_g.opts.mode != RPERF_MODE_CPU || !rperf_sampler_recording())
        return;
    rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    int64_t now;
    if (st)
        st->gc_cpu_from_ns = rperf_sampler_clock_ns(CLOCK_THREAD_CPUTIME_ID, &now) == 0 ? now : 0;
}

void
rperf_sampler_record_synthetic(rperf_thread_slot_t *slot, VALUE thread, enum rperf_synthetic_frame frame,
                               int64_t weight_ns)
{
    if (weight_ns <= 0 || !slot || (unsigned)frame >= RPERF_SYNTHETIC_FRAMES || !rperf_sampler_recording())
        return;
    int cpu_mode = rperf_sampler_g.opts.mode == RPERF_MODE_CPU;
    if (cpu_mode && (frame == RPERF_FRAME_GVL_BLOCKED || frame == RPERF_FRAME_GVL_WAIT))
        return;
    rperf_sampler_thread_t *st = rperf_sampler_state_of(slot);
    if (!st) {
        rperf_sampler_count(&rperf_sampler_g.dropped_samples, 1);
        return;
    }
    if (cpu_mode && st->gc_cpu_from_ns > 0) {
        /* GC frames in the thread's CPU time: a bracket in which the thread
         * was preempted must not weigh more than the CPU it used, or the
         * next regular sample (whose clock did not advance) cannot absorb it. */
        int64_t now;
        if (rperf_sampler_clock_ns(CLOCK_THREAD_CPUTIME_ID, &now) == 0) {
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
    if (!waiter || !rperf_sampler_recording())
        return;
    if (release->lost_at_cut) {
        rperf_sampler_count(&rperf_sampler_g.dropped_release_stacks, 1);
        return;
    }
    const rperf_thread_slot_t *releaser = rperf_slot_by_seq(release->releaser_seq);
    if (!releaser)
        return;
    VALUE frames[RPERF_MAX_STACK_DEPTH];
    int depth = rb_profile_thread_frames(releaser->thread, 0, RPERF_MAX_STACK_DEPTH, frames, NULL);
    if (depth <= 0)
        return; /* a releaser with no frame left (a finishing thread's join wake-up): no stack to have */
    if (rperf_sample_buffers_write_release(&rperf_sampler_g.buffers, frames, depth, release->ns, waiter->seq,
                                           release->release_index, release->generation) < 0)
        rperf_sampler_count(&rperf_sampler_g.dropped_release_stacks, 1);
    else
        rperf_sampler_count(&rperf_sampler_g.release_stacks, 1);
}

/* The native thread id of a Ractor's GVL holder, 0 when none. */
static pid_t
holder_tid(const rperf_ractor_slot_t *r)
{
    int seq = r ? __atomic_load_n(&r->holder_seq, __ATOMIC_ACQUIRE) : 0;
    const rperf_thread_slot_t *holder = seq > 0 ? rperf_slot_by_seq(seq) : NULL;
    return holder ? (pid_t)RPERF_LOAD(holder->native_id) : 0;
}

/* A direct tick (timer.h), on the thread the kernel chose. The job samples
 * the thread that runs it, at its next safepoint, by that thread's CPU
 * time since its previous sample.
 * - The main Ractor's GVL holder samples itself.
 * - Another Ruby thread was running when the interrupt came (the kernel
 *   wakes the process's main thread instead, never another): it samples
 *   itself too, holder of another Ractor or using CPU off its GVL (a
 *   system call, C code), so that CPU goes to the call it was in.
 * - The main thread, not holding the GVL, may have been woken on an idle
 *   CPU (older kernels always wake it): it passes the tick to the main
 *   Ractor's holder, as a non-Ruby thread does. With no holder every
 *   thread is off the GVL: nothing to sample. */
static void
direct_tick(int signo)
{
    rperf_sampler_count(&rperf_sampler_g.trigger_count, 1);
    pid_t self = rperf_native_tid();
    pid_t pid = getpid();
    pid_t main_holder = holder_tid(rperf_ractor_by_id(1));
    if (self == main_holder || (self != pid && ruby_native_thread_p()))
        rb_postponed_job_trigger(rperf_sampler_g.job);
    else if (main_holder > 0)
        syscall(SYS_tgkill, pid, main_holder, signo);
}

void
rperf_sampler_signal_handler(int signo, siginfo_t *info, void *context)
{
    (void)context;
    int saved_errno = errno;
    /* Only our own signals while running: a tgkill (SI_TKILL) is meant for
     * this thread, a holder; rb_postponed_job_trigger is async-signal-safe
     * and targets this thread's execution context. */
    if (atomic_load_explicit(&rperf_sampler_signal_armed, memory_order_relaxed)) {
        if (info->si_code == SI_TKILL)
            rb_postponed_job_trigger(rperf_sampler_g.job);
        else if (info->si_code == SI_TIMER && info->si_value.sival_int == RPERF_TIMER_DIRECT_VALUE)
            direct_tick(signo);
    }
    errno = saved_errno;
}
