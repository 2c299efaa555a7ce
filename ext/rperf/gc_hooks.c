/*
 * gc_hooks.c — GC enter/exit and phase events → contention.c.
 *
 * The phase (mark or sweep) comes from GC_START / GC_END_MARK /
 * GC_END_SWEEP; each enter/exit bracket is charged to the phase current at
 * the time, and a phase change inside a bracket splits it. With lazy
 * sweeping a sweep is many short brackets. This file does NOT know which
 * Ractor GC'd beyond "the one that installed the hook".
 */
#include "gc_hooks.h"
#include "clock.h"
#include "contention.h"

#include <ruby/debug.h>

static int gc_phase = RPERF_GC_PHASE_NONE;
static int installed;

static void
gc_event(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
    (void)data; (void)self; (void)mid; (void)klass;
    if (event & RUBY_INTERNAL_EVENT_GC_START) gc_phase = RPERF_GC_PHASE_MARK;
    else if (event & RUBY_INTERNAL_EVENT_GC_END_MARK) gc_phase = RPERF_GC_PHASE_SWEEP;
    else if (event & RUBY_INTERNAL_EVENT_GC_END_SWEEP) gc_phase = RPERF_GC_PHASE_NONE;
    if (!rperf_contention_recording()) return;

    /* rb_thread_current() is a field read; it does not allocate. */
    VALUE thread = rb_thread_current();
    int64_t now = rperf_now_ns();
    rperf_thread_slot_t *slot = rperf_slot_claim(thread, now);
    int timed = rperf_hook_count_event(slot);
    if (!slot) return;

    if (event & RUBY_INTERNAL_EVENT_GC_ENTER) {
        /* GC that begins outside a marked cycle is marking (gc_start fires
         * GC_ENTER before GC_START). */
        rperf_on_gc_enter(slot, thread, gc_phase == RPERF_GC_PHASE_SWEEP ? RPERF_GC_PHASE_SWEEP
                                                                          : RPERF_GC_PHASE_MARK, now);
    }
    else if (event & RUBY_INTERNAL_EVENT_GC_EXIT) {
        rperf_on_gc_exit(slot, thread, now);
    }
    else if (event & (RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK)) {
        rperf_on_gc_phase(slot, thread, gc_phase, now);
    }
    if (timed) rperf_hook_timed_end(now);
}

void
rperf_gc_hooks_install(void)
{
    if (installed) return;
    rb_add_event_hook(gc_event,
                      RUBY_INTERNAL_EVENT_GC_ENTER | RUBY_INTERNAL_EVENT_GC_EXIT |
                      RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK |
                      RUBY_INTERNAL_EVENT_GC_END_SWEEP,
                      Qnil);
    installed = 1;
}

void
rperf_gc_hooks_remove(void)
{
    if (!installed) return;
    rb_remove_event_hook(gc_event);
    installed = 0;
}
