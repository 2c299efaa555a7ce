/*
 * gc_hooks.c — GC enter/exit and phase events → contention_events.c, and the GC
 * time it closes → the sampler's [GC marking]/[GC sweeping] frames.
 *
 * The phase (mark or sweep) comes from GC_START / GC_END_MARK /
 * GC_END_SWEEP; each enter/exit bracket is charged to the phase current at
 * the time, and a phase change inside a bracket splits it. With lazy
 * sweeping a sweep is many short brackets. The thread that runs the GC
 * is charged; its Ractor is the slot's. In counters mode the sampler is
 * not called (it is not running). Only the main Ractor has the hook
 * (gc_hooks.h says why).
 */
#include "gc_hooks.h"
#include "clock.h"
#include "contention_events.h"
#include "sampler.h"

#include <ruby/debug.h>

/* GC stops every Ractor, so one phase variable serves all the hooks. */
static int gc_phase = RPERF_GC_PHASE_NONE;
static int installed;

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
    handle_gc_event(event);
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
    rb_add_event_hook(gc_event, GC_EVENTS, Qnil);
    installed = 1;
}

void
rperf_gc_hooks_remove(void)
{
    if (installed) {
        rb_remove_event_hook(gc_event);
        installed = 0;
    }
}
