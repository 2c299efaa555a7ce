/*
 * gvl_hooks.c — the thread-event callback: finds (or claims) the thread's
 * slot and its Ractor, reads the clock once, hands the event to
 * contention_events.c and the off-GVL time it returns to the sampler. In
 * counters mode the event goes to rperf_count_* alone: one clock read, the
 * slot's totals, no sampler.
 *
 * It does NOT interpret events (contention_events.c does) and does NOT walk
 * stacks (the sampler does, when wall mode gives it [GVL blocked],
 * [GVL wait] or running time, and for the releaser of a wait READY ended).
 */
#include "gvl_hooks.h"
#include "clock.h"
#include "contention_events.h"
#include "ractor_registry.h"
#include "sampler.h"

#include <ruby/thread.h>
#include <sched.h>

#ifdef RPERF_STALL_EVENTS
#include <time.h>
/* Test builds only (RPERF_EXT_STALL_EVENTS=1): every fifth READY or
 * RESUMED stalls 300 us between its clock read and its slot write, as a
 * hook preempted there does on a busy machine. A report cut in between
 * must still count the event once (test/variants/test_stalled_events.rb). */
static void
stall_some(rb_event_flag_t event)
{
    static unsigned count;
    if ((event & (RUBY_INTERNAL_THREAD_EVENT_READY | RUBY_INTERNAL_THREAD_EVENT_RESUMED)) &&
        __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED) % 5 == 0) {
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
    }
}
#else
#define stall_some(event) ((void)(event))
#endif

static rb_internal_thread_event_hook_t *hook;
/* Set in a fork child while a hook was registered: the VM's hook lock may
 * have been read-held by another parent thread at fork time, so this
 * process never takes it for writing; the hook stays registered and is
 * reused (it does nothing while no profile records). */
static int hook_pinned;
/* Pinned only: callbacks in progress, so a stop can wait for them without
 * the VM's lock (the callback counts itself before reading `recording`,
 * the stop clears `recording` before reading the count). */
static int in_flight;

static void handle_event(rb_event_flag_t event, VALUE thread);

static void
thread_event(rb_event_flag_t event, const rb_internal_thread_event_data_t *data, void *user)
{
    (void)user;
    if (!hook_pinned) {
        handle_event(event, data->thread);
        return;
    }
    __atomic_fetch_add(&in_flight, 1, __ATOMIC_SEQ_CST);
    handle_event(event, data->thread);
    __atomic_fetch_sub(&in_flight, 1, __ATOMIC_SEQ_CST);
}

/* RESUMED: this thread now holds its Ractor's GVL, with its execution
 * context set, so the Ractor's main thread names its Ractor (a Ractor met
 * first takes a prepared table slot; none prepared: the next RESUMED
 * tries again). */
static inline void
identify_ractor(rperf_thread_slot_t *slot)
{
    if (slot->ractor)
        return;
    rperf_ractor_slot_t *r = rperf_ractor_current();
    if (r)
        RPERF_STORE(slot->ractor, r);
}

/* Counters mode takes the rperf_count_* form of each event: the slot's
 * totals only, nothing for the sampler. */
static void
dispatch(rb_event_flag_t event, VALUE thread, rperf_thread_slot_t *slot, int64_t now, int counters)
{
    switch (event) {
    case RUBY_INTERNAL_THREAD_EVENT_READY: {
        /* No GVL; runs under the Ractor's scheduler lock, possibly on the
         * native thread that wakes this one. Slot and atomics only. */
        if (counters) {
            rperf_count_ready(slot, now);
            break;
        }
        rperf_release_event_t release = rperf_on_ready(slot, now);
        /* Named only from the releaser's own native thread, which holds
         * its GVL: its stack is stable, so the sampler may walk it. */
        if (release.releaser_seq)
            rperf_sampler_record_release(slot, &release);
        break;
    }
    case RUBY_INTERNAL_THREAD_EVENT_RESUMED: {
        identify_ractor(slot);
        if (counters) {
            rperf_count_resumed(slot, now);
            break;
        }
        rperf_off_gvl_t off = rperf_on_resumed(slot, now);
        /* Every RESUMED, waited or not: it also takes the running samples
         * while the GVL changes hands (the worker's ticks then rest). */
        rperf_sampler_record_resumed(slot, thread, now, off.blocked_ns, off.wait_ns);
        break;
    }
    case RUBY_INTERNAL_THREAD_EVENT_SUSPENDED:
        /* Fired just before the GVL is handed on: this thread is still the
         * holder, so the Ractor's ring and timeline are ours to write. */
        if (counters)
            rperf_count_suspended(slot, now);
        else
            rperf_on_suspended(slot, now);
        break;
    case RUBY_INTERNAL_THREAD_EVENT_EXITED:
        /* After the final SUSPENDED, without the GVL. Slot and atomics,
         * and the running time no sample took (no stack walk). */
        rperf_on_exited(slot, now);
        if (!counters)
            rperf_sampler_record_exited(slot, now);
        break;
    default: break;
    }
}

static void
handle_event(rb_event_flag_t event, VALUE thread)
{
    int recording = rperf_contention_recording();
    if (!recording) {
        /* Paused or stopping: keep only the Ractor waiters counts right
         * (a READY counted before the pause must be undone). */
        if (event & (RUBY_INTERNAL_THREAD_EVENT_RESUMED | RUBY_INTERNAL_THREAD_EVENT_EXITED)) {
            rperf_thread_slot_t *slot = rperf_slot_find(thread);
            if (slot)
                rperf_on_resumed_paused(slot);
        }
        return;
    }

    int64_t now = rperf_now_ns();
    rperf_thread_slot_t *slot = (event & RUBY_INTERNAL_THREAD_EVENT_EXITED) ? rperf_slot_find(thread)
                                                                            : rperf_slot_claim(thread, now);
    int timed = rperf_hook_count_event(slot);
    if (!slot)
        return;
    stall_some(event);
    dispatch(event, thread, slot, now, recording == RPERF_RECORDING_COUNTERS);
    if (timed)
        rperf_hook_timed_end(now);
}

int
rperf_gvl_hooks_install(void)
{
    if (hook)
        return 0; /* pinned after a fork: reuse it */
    hook = rb_internal_thread_add_event_hook(thread_event,
                                             RUBY_INTERNAL_THREAD_EVENT_READY | RUBY_INTERNAL_THREAD_EVENT_RESUMED |
                                                 RUBY_INTERNAL_THREAD_EVENT_SUSPENDED |
                                                 RUBY_INTERNAL_THREAD_EVENT_EXITED,
                                             NULL);
    return hook ? 0 : -1;
}

void
rperf_gvl_hooks_remove(void)
{
    if (!hook)
        return;
    if (hook_pinned) {
        /* The caller has stopped recording: wait out callbacks that began
         * before; later ones return at once. */
        while (__atomic_load_n(&in_flight, __ATOMIC_SEQ_CST))
            sched_yield();
        return;
    }
    rb_internal_thread_remove_event_hook(hook);
    hook = NULL;
}

void
rperf_gvl_hooks_after_fork_child(void)
{
    if (hook)
        hook_pinned = 1;
}
