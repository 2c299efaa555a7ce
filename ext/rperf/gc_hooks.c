/*
 * gc_hooks.c — GC enter/exit and phase events → contention.c, and the GC
 * time it closes → the sampler's [GC marking]/[GC sweeping] frames.
 *
 * The phase (mark or sweep) comes from GC_START / GC_END_MARK /
 * GC_END_SWEEP; each enter/exit bracket is charged to the phase current at
 * the time, and a phase change inside a bracket splits it. With lazy
 * sweeping a sweep is many short brackets. The thread that runs the GC
 * is charged; its Ractor is the slot's. In counters mode the sampler is
 * not called (it is not running). This file does NOT decide when a
 * Ractor gets its hook (ractor_registry.c, when it registers the Ractor).
 */
#include "gc_hooks.h"
#include "clock.h"
#include "contention.h"
#include "sampler.h"

#include <ruby/debug.h>
#include <ruby/ractor.h>
#include <sched.h>

/* GC stops every Ractor, so one phase variable serves all the hooks. */
static int gc_phase = RPERF_GC_PHASE_NONE;
static int installed;
static rb_ractor_local_key_t ractor_hooked_key; /* non-NULL once a Ractor has its hook */
/* Callbacks in progress. A lazy sweep step fires GC_ENTER/EXIT in its own
 * Ractor without stopping the others, so another Ractor's callback may run
 * while the main one stops the profile: the stop clears `recording`, then
 * waits here before anything is freed (the callback counts itself before
 * it reads `recording`). */
static int in_flight;

#define GC_EVENTS \
    (RUBY_INTERNAL_EVENT_GC_ENTER | RUBY_INTERNAL_EVENT_GC_EXIT | RUBY_INTERNAL_EVENT_GC_START | \
     RUBY_INTERNAL_EVENT_GC_END_MARK | RUBY_INTERNAL_EVENT_GC_END_SWEEP)

static void handle_gc_event(rb_event_flag_t event);

static void
record_gc_span(rperf_thread_slot_t *slot, VALUE thread, rperf_gc_span_t span, int recording)
{
    if (span.ns <= 0 || recording != RPERF_RECORDING_FULL)
        return;
    rperf_sampler_record_synthetic(slot, thread,
                                   span.state == RPERF_STATE_GC_SWEEP ? RPERF_FRAME_GC_SWEEP : RPERF_FRAME_GC_MARK,
                                   span.ns);
}

static void
gc_event(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
    (void)data;
    (void)self;
    (void)mid;
    (void)klass;
    __atomic_fetch_add(&in_flight, 1, __ATOMIC_SEQ_CST);
    handle_gc_event(event);
    __atomic_fetch_sub(&in_flight, 1, __ATOMIC_SEQ_CST);
}

static void
handle_gc_event(rb_event_flag_t event)
{
    if (event & RUBY_INTERNAL_EVENT_GC_START)
        gc_phase = RPERF_GC_PHASE_MARK;
    else if (event & RUBY_INTERNAL_EVENT_GC_END_MARK)
        gc_phase = RPERF_GC_PHASE_SWEEP;
    else if (event & RUBY_INTERNAL_EVENT_GC_END_SWEEP)
        gc_phase = RPERF_GC_PHASE_NONE;
    int recording = rperf_contention_recording();
    if (!recording)
        return;

    /* rb_thread_current() is a field read; it does not allocate. */
    VALUE thread = rb_thread_current();
    int64_t now = rperf_now_ns();
    rperf_thread_slot_t *slot = rperf_slot_claim(thread, now);
    int timed = rperf_hook_count_event(slot);
    if (!slot)
        return;

    if (event & RUBY_INTERNAL_EVENT_GC_ENTER) {
        /* GC that begins outside a marked cycle is marking (gc_start fires
         * GC_ENTER before GC_START). */
        rperf_on_gc_enter(slot, gc_phase == RPERF_GC_PHASE_SWEEP ? RPERF_GC_PHASE_SWEEP : RPERF_GC_PHASE_MARK, now);
        if (recording == RPERF_RECORDING_FULL)
            rperf_sampler_gc_span_begin(slot);
    } else if (event & RUBY_INTERNAL_EVENT_GC_EXIT) {
        record_gc_span(slot, thread, rperf_on_gc_exit(slot, now), recording);
    } else if (event & (RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK)) {
        record_gc_span(slot, thread, rperf_on_gc_phase(slot, gc_phase, now), recording);
    }
    if (timed)
        rperf_hook_timed_end(now);
}

void
rperf_gc_hooks_install(void)
{
    if (installed)
        return;
    if (!ractor_hooked_key)
        ractor_hooked_key = rb_ractor_local_storage_ptr_newkey(NULL);
    rb_add_event_hook(gc_event, GC_EVENTS, Qnil);
    installed = 1;
}

void
rperf_gc_hooks_install_current_ractor(void)
{
    if (!ractor_hooked_key)
        return;
    if (rb_ractor_local_storage_ptr(ractor_hooked_key))
        return;
    rb_add_event_hook(gc_event, GC_EVENTS, Qnil);
    rb_ractor_local_storage_ptr_set(ractor_hooked_key, (void *)&installed);
}

void
rperf_gc_hooks_remove(void)
{
    if (installed) {
        rb_remove_event_hook(gc_event);
        installed = 0;
    }
    /* The caller has stopped recording: wait out other Ractors' callbacks
     * that began before (later ones return at once). */
    while (__atomic_load_n(&in_flight, __ATOMIC_SEQ_CST))
        sched_yield();
}

void
rperf_gc_hooks_after_fork_child(void)
{
    /* Only the forking thread exists in the child. */
    __atomic_store_n(&in_flight, 0, __ATOMIC_SEQ_CST);
}
