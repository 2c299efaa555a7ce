/*
 * rperf.c — the extension's entry point: Init, the private `_c_*` methods
 * of the Rperf module and the profiler lifecycle (start, stop, snapshot,
 * pause/resume by refcount, fork), which puts the parts together in order:
 * contention state, main Ractor, sampler, hooks. Counters mode
 * leaves the sampler out: no worker, no timer, totals only.
 *
 * It does NOT validate keyword arguments (lib/rperf.rb does), does NOT keep
 * the label-set registry (Ruby does; it adds "label_sets"), does NOT build
 * the report (report_builder.c), does NOT render it (analysis_bridge.c) and
 * does NOT sample stacks (sampler.h; sampler_stub.c in a build without the
 * sampler).
 *
 * All methods run with the GVL; start/stop/snapshot/profile refcount only
 * on the main Ractor (checked in Ruby), label and thread_contention from any.
 */
#include <ruby.h>
#include <ruby/debug.h>
#include <ruby/ractor.h>
#include <ruby/thread.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cause_table.h"
#include "clock.h"
#include "contention.h"
#include "errors.h"
#include "rperf_limits.h"
#include "gc_hooks.h"
#include "gvl_hooks.h"
#include "analysis_bridge.h"
#include "interval_list.h"
#include "log_numbers.h"
#include "native_tid.h"
#include "ractor_registry.h"
#include "report_builder.h"
#include "sampler.h"
#include "thread_counters.h"
#include "thread_slot.h"
#include "line_queue.h"
#include "log_unit.h"
#include "metrics_format.h"
#include "ruby_opts.h"

static VALUE mRperf;
static VALUE profiler_anchor; /* marks slot threads and sampler frames */

static struct {
    enum rperf_profile_mode mode;
    int frequency;
    int sampler_running;
    int refcount; /* profile refcount; 0 = paused */
} prof;

static void
anchor_mark(void *ptr)
{
    (void)ptr;
    rperf_slot_pool_mark();
    rperf_ractor_registry_mark();
    rperf_cause_table_mark();
    if (prof.sampler_running || rperf_contention_active())
        rperf_sampler_mark();
}

static const rb_data_type_t anchor_type = {
    .wrap_struct_name = "rperf_profiler",
    .function = {.dmark = anchor_mark, .dfree = NULL, .dsize = NULL},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* ------------------------------------------------------------------ */
/* helpers                                                             */

/* Leaves a forked child's inherited state behind: destroyed here, outside
 * the atfork handler; the thread hook stays registered (see gvl_hooks.h). */
static void
cleanup_forked_child(void)
{
    if (!rperf_contention_forked_child_pending())
        return;
    rperf_gc_hooks_remove();
    rperf_contention_destroy();
    rperf_sampler_free(); /* the fork handler freed nothing */
    prof.sampler_running = 0;
    prof.refcount = 0;
}

/* ------------------------------------------------------------------ */
/* start                                                               */

/* A start that failed after the contention state was created. */
static void
abandon_start(void)
{
    rperf_contention_stop_recording();
    rperf_gc_hooks_remove();
    rperf_contention_destroy();
}

static void
claim_existing(VALUE threads, VALUE caller, rperf_ractor_slot_t *main_ractor, int64_t now)
{
    long n = RARRAY_LEN(threads);
    for (long i = 0; i < n; i++) {
        VALUE th = RARRAY_AREF(threads, i);
        if (th == caller)
            continue;
        rperf_thread_slot_t *slot = rperf_slot_claim(th, now);
        if (slot && !slot->ractor)
            slot->ractor = main_ractor; /* blocked since start */
    }
}

/* _c_start(config, threads) — config: Hash of validated values (symbol
 * keys, see Rperf.start); threads: Thread.list of the main Ractor. */
static VALUE
rb_rperf_start(VALUE self, VALUE config, VALUE threads)
{
    (void)self;
    Check_Type(config, T_HASH);
    Check_Type(threads, T_ARRAY);
    cleanup_forked_child();
    if (rperf_contention_active())
        rb_raise(rperf_eStateError, "rperf: profiler is already running");

    rperf_contention_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.max_threads = (int)rperf_opt_long(config, "max_threads", RPERF_MAX_THREADS_DEFAULT);
    cfg.max_intervals = rperf_opt_long(config, "max_intervals", RPERF_MAX_INTERVALS_DEFAULT);
    cfg.max_edges = rperf_opt_long(config, "max_edges", RPERF_MAX_EDGES_DEFAULT);
    cfg.min_interval_ns = rperf_opt_long(config, "min_interval_ns", RPERF_MIN_INTERVAL_NS_DEFAULT);
    long mode = rperf_opt_long(config, "mode", -1);
    if (mode < 0 || mode >= RPERF_PROFILE_MODES)
        rb_raise(rb_eArgError, "rperf: mode %ld is not one of Rperf::MODES", mode);
    prof.mode = (enum rperf_profile_mode)mode;
    int counters = prof.mode == RPERF_PROFILE_COUNTERS;
    cfg.counters_only = counters;
    cfg.timeline = !counters && RTEST(rperf_opt(config, "timeline"));
    prof.frequency = counters ? 0 : (int)rperf_opt_long(config, "frequency", RPERF_FREQUENCY_DEFAULT);
    cfg.wall_mode = prof.mode == RPERF_PROFILE_WALL;
    int deferred = RTEST(rperf_opt(config, "defer"));

    const char *err = NULL;
    VALUE caller = rb_thread_current();
    if (rperf_contention_start(&cfg, deferred, &err) < 0)
        rb_raise(rperf_eResourceError, "rperf: cannot start: %s", err);
    rperf_ractor_slot_t *main_ractor = rperf_ractor_prepare() == 0 ? rperf_ractor_current() : NULL;
    if (!main_ractor) {
        rperf_contention_destroy();
        rb_raise(rperf_eResourceError, "rperf: cannot start: cannot register the main Ractor");
    }
    rperf_contention_begin_recording(caller, main_ractor);
    claim_existing(threads, caller, main_ractor, rperf_contention_interval_start());

    if (!counters) {
        rperf_sampler_opts_t opts = {
            .frequency = prof.frequency,
            .mode = prof.mode == RPERF_PROFILE_WALL ? RPERF_MODE_WALL : RPERF_MODE_CPU,
            .aggregate = RTEST(rperf_opt(config, "aggregate")),
            .signal = (int)rperf_opt_long(config, "signal", -1),
            .deferred = deferred,
            .max_threads = cfg.max_threads,
        };
        if (rperf_sampler_start(&opts, &err) < 0) {
            abandon_start();
            rb_raise(rperf_eResourceError, "rperf: cannot start the sampler: %s", err);
        }
        prof.sampler_running = 1;
    }
    if (rperf_gvl_hooks_install() < 0) {
        if (prof.sampler_running) {
            rperf_sampler_stop();
            rperf_sampler_free();
        }
        prof.sampler_running = 0;
        abandon_start();
        rb_raise(rperf_eResourceError, "rperf: cannot install the thread event hook");
    }
    rperf_gc_hooks_install();
    prof.refcount = deferred ? 0 : 1;
    return Qtrue;
}

/* ------------------------------------------------------------------ */
/* stop / snapshot                                                     */

static void
teardown(void)
{
    if (prof.sampler_running)
        rperf_sampler_free();
    prof.sampler_running = 0;
    prof.refcount = 0;
    rperf_contention_destroy();
}

static VALUE
build_report(int final, int clear, int64_t end_ns)
{
    rperf_report_params_t params = {
        .module = mRperf,
        .mode = prof.mode,
        .frequency = prof.frequency,
        .sampler_running = prof.sampler_running,
    };
    return rperf_report_build(&params, final, clear, end_ns);
}

static VALUE
build_final(VALUE arg)
{
    return build_report(1, 1, *(int64_t *)arg);
}

/* _c_stop — removes the hooks, builds the final report, frees everything. */
static VALUE
rb_rperf_stop(VALUE self)
{
    (void)self;
    cleanup_forked_child();
    if (!rperf_contention_active())
        return Qnil;

    /* After remove returns no callback runs any more, so every ring,
     * buffer and slot may be read and then freed. A paused profile keeps
     * its pause time as the end of its accounting. */
    rperf_contention_stop_recording();
    rperf_gvl_hooks_remove();
    rperf_gc_hooks_remove();
    if (prof.sampler_running)
        rperf_sampler_stop();
    int64_t end = rperf_now_ns();
    int state = 0;
    VALUE report = rb_protect(build_final, (VALUE)&end, &state);
    teardown();
    if (state)
        rb_jump_tag(state);
    return report;
}

/* _c_snapshot(clear) — the report so far; with clear, the next report
 * starts at this cut (totals become deltas, tables are emptied). */
static VALUE
rb_rperf_snapshot(VALUE self, VALUE vclear)
{
    (void)self;
    cleanup_forked_child();
    if (!rperf_contention_active())
        return Qnil;
    int clear = RTEST(vclear);
    if (prof.sampler_running)
        rperf_sampler_flush();
    int64_t end = rperf_now_ns();
    return build_report(0, clear, end);
}

static VALUE
rb_rperf_running_p(VALUE self)
{
    (void)self;
    return rperf_contention_active() ? Qtrue : Qfalse;
}

/* ------------------------------------------------------------------ */
/* labels, refcount, per-thread totals                                 */

/* The calling thread's slot (`slot`: what rperf_slot_find found for it),
 * claimed if needed (a thread that started while the profile was paused
 * has none yet), with its Ractor identified when a table slot is free for
 * it. A fresh slot is running: the thread holds the GVL right now. */
static rperf_thread_slot_t *
claim_found(VALUE thread, rperf_thread_slot_t *slot)
{
    if (!slot) {
        slot = rperf_slot_claim(thread, rperf_contention_now_clipped());
        if (!slot)
            return NULL;
        rperf_slot_write_begin(slot);
        RPERF_STORE(slot->state, RPERF_STATE_RUNNING);
        rperf_slot_write_end(slot);
    }
    if (!RPERF_LOAD(slot->ractor)) {
        rperf_ractor_slot_t *r = rperf_ractor_current();
        if (r)
            RPERF_STORE(slot->ractor, r);
    }
    return slot;
}

static rperf_thread_slot_t *
claim_current(void)
{
    VALUE thread = rb_thread_current();
    return claim_found(thread, rperf_slot_find(thread));
}

/* The calling thread's slot for a label switch to `vid` (its id in *id),
 * or NULL when not profiling. */
static rperf_thread_slot_t *
label_slot(VALUE vid, int *id)
{
    *id = NUM2INT(vid);
    if (*id < 0)
        rb_raise(rb_eArgError, "rperf: negative label set id %d", *id);
    return rperf_contention_active() ? claim_current() : NULL;
}

/* _c_set_label(id) — the current thread's label set from now on. */
static VALUE
rb_rperf_set_label(VALUE self, VALUE vid)
{
    (void)self;
    int id;
    rperf_thread_slot_t *slot = label_slot(vid, &id);
    if (slot)
        rperf_contention_set_label(slot, id);
    return vid;
}

static VALUE
rb_rperf_get_label(VALUE self)
{
    (void)self;
    if (!rperf_contention_active())
        return INT2FIX(0);
    rperf_thread_slot_t *slot = rperf_slot_find(rb_thread_current());
    return INT2NUM(slot ? RPERF_LOAD(slot->label_set_id) : 0);
}

/* _c_profile_inc — 0 → 1 resumes recording and the sampler. */
static void
profile_inc(void)
{
    prof.refcount++;
    if (prof.refcount == 1) {
        int64_t now = rperf_now_ns();
        rperf_contention_resume(rb_thread_current(), rperf_ractor_current(), now);
        /* Re-bases every slot's sample clock itself. */
        if (prof.sampler_running)
            rperf_sampler_resume();
    }
}

static VALUE
rb_rperf_profile_inc(VALUE self)
{
    (void)self;
    if (!rperf_contention_active())
        return Qfalse;
    profile_inc();
    return Qtrue;
}

/* _c_refcount — the profile refcount (0 when no profile is active). */
static VALUE
rb_rperf_refcount(VALUE self)
{
    (void)self;
    return INT2NUM(rperf_contention_active() ? prof.refcount : 0);
}

static void
profile_dec(void)
{
    prof.refcount--;
    if (prof.refcount == 0) {
        if (prof.sampler_running)
            rperf_sampler_pause();
        rperf_contention_pause(rperf_now_ns());
    }
}

/* _c_profile_dec — 1 → 0 pauses; never below 0. */
static VALUE
rb_rperf_profile_dec(VALUE self)
{
    (void)self;
    if (!rperf_contention_active())
        return Qfalse;
    if (prof.refcount <= 0)
        rb_raise(rperf_eStateError, "rperf: profile refcount would go negative (unbalanced profile)");
    profile_dec();
    return Qtrue;
}

/* The calling thread's counters: thread_counters.h. */

/* Rperf::COUNTER_FIELDS: the names of the counters above, as Symbols. */
static VALUE
counter_fields(void)
{
    static const char *const causes[RPERF_CAUSE_COUNT] = RPERF_CAUSE_NAMES;
    VALUE fields = rb_ary_new_capa(COUNTER_COUNT);
    rb_ary_push(fields, ID2SYM(rb_intern("monotonic_ns")));
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        rb_ary_push(fields, ID2SYM(rb_intern(rperf_report_state_keys[i])));
    rb_ary_push(fields, ID2SYM(rb_intern("runnable_ns")));
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        rb_ary_push(fields, rb_to_symbol(rb_sprintf("runnable_%s", rperf_report_state_keys[i])));
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++)
        rb_ary_push(fields, rb_to_symbol(rb_sprintf("blocked_%s_ns", causes[c])));
    return rb_ary_freeze(fields);
}

/* The slot's counters at `now` into out (the running thread's own slot:
 * the view and the totals agree, only its own events write them). */
static void
counters_of_view(const rperf_slot_view_t *vp, int64_t now, int64_t out[COUNTER_COUNT])
{
    rperf_slot_view_totals_now(vp, now, &out[COUNTER_TOTALS]);
    out[COUNTER_CLOCK] = now;
    int known = vp->runnable_ns >= rperf_contention_clip_ns() && vp->runnable_ns > 0;
    out[COUNTER_RUNNABLE] = known ? vp->runnable_ns : 0;
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        out[COUNTER_RUNNABLE_TOTALS + i] = known ? vp->runnable_totals[i] : 0;
    int64_t methods[RPERF_SLOT_BLOCK_METHODS];
    rperf_slot_methods_now(vp, now, methods);
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++)
        out[COUNTER_CAUSES + c] = 0;
    for (int i = 0; i < vp->nmethods; i++)
        out[COUNTER_CAUSES + (i == 0 ? RPERF_CAUSE_UNKNOWN : rperf_cause_table_cause(vp->methods[i].frame))] +=
            methods[i];
}

static void
counters_into(rperf_thread_slot_t *slot, int64_t now, int64_t out[COUNTER_COUNT])
{
    rperf_slot_view_t view;
    rperf_slot_read_counts(slot, &view);
    counters_of_view(&view, now, out);
}

/* The label switch and the counters at its clock reading, from one read of
 * the slot (rperf_contention_switch_label). */
static void
switch_into(rperf_thread_slot_t *slot, int label_set_id, int64_t out[COUNTER_COUNT])
{
    rperf_slot_view_t view;
    int64_t now = rperf_contention_switch_label(slot, label_set_id, &view);
    counters_of_view(&view, now, out);
}

/* Writes counters into ary (Integers; nothing allocated but ary's room the
 * first time: everything is read before, as allocating may run the GC hook
 * on this thread and move the totals past their clock reading). */
static VALUE
store_counters(VALUE ary, const int64_t c[COUNTER_COUNT])
{
    for (long i = 0; i < COUNTER_COUNT; i++)
        rb_ary_store(ary, i, LL2NUM(c[i]));
    return ary;
}

/* _c_thread_counters(ary) — the calling thread's counters written into ary
 * (Rperf::COUNTER_FIELDS order), or nil when no profile is active. */
static VALUE
rb_rperf_thread_counters(VALUE self, VALUE ary)
{
    (void)self;
    Check_Type(ary, T_ARRAY);
    if (!rperf_contention_active())
        return Qnil;
    rperf_thread_slot_t *slot = claim_current();
    if (!slot)
        return Qnil;
    int64_t c[COUNTER_COUNT];
    counters_into(slot, rperf_now_ns(), c);
    return store_counters(ary, c);
}

/* _c_switch_label(id, ary) — _c_set_label, writing the thread's counters
 * into ary (as _c_thread_counters) at the switch's own clock reading, or
 * nil when not profiling. Counters read by a call of their own leave time
 * between them and the switch (a GVL hand-off, the thread preempted) that
 * the label totals count and the reader would not. */
static VALUE
rb_rperf_switch_label(VALUE self, VALUE vid, VALUE ary)
{
    (void)self;
    Check_Type(ary, T_ARRAY);
    int id;
    rperf_thread_slot_t *slot = label_slot(vid, &id);
    if (!slot)
        return Qnil;
    int64_t c[COUNTER_COUNT];
    switch_into(slot, id, c);
    return store_counters(ary, c);
}

/* What a log unit needs of the profiler (log_unit.h): the same steps as
 * Rperf.profile around Rperf.label_with_counters, without their Ruby. */
/* 1 when a profile is active and `thread` has no label set; its slot, if
 * it has one yet, into *slot. */
static int
label_free_for(VALUE thread, rperf_thread_slot_t **slot)
{
    *slot = NULL;
    if (!rperf_contention_active())
        return 0;
    *slot = rperf_slot_find(thread);
    return !*slot || RPERF_LOAD((*slot)->label_set_id) == 0;
}

static int
unit_label_free(void)
{
    rperf_thread_slot_t *slot;
    return label_free_for(rb_thread_current(), &slot);
}

static int
unit_begin(int label_id, int64_t out[COUNTER_COUNT])
{
    VALUE thread = rb_thread_current();
    rperf_thread_slot_t *slot;
    if (label_id < 0 || !label_free_for(thread, &slot))
        return 0;
    /* In Rperf.profile's order: resumed first, so a slot claimed now is
     * claimed as the recording profile claims it (a resume keeps a slot
     * found before). */
    profile_inc();
    slot = claim_found(thread, slot);
    if (!slot) {
        profile_dec();
        return 0;
    }
    switch_into(slot, label_id, out);
    return 1;
}

static int
unit_end(int64_t out[COUNTER_COUNT])
{
    if (!rperf_contention_active())
        return 0;
    rperf_thread_slot_t *slot = claim_current();
    if (!slot)
        return 0;
    switch_into(slot, 0, out);
    /* An unbalanced Rperf.profile elsewhere is not this unit's to report. */
    if (prof.refcount > 0)
        profile_dec();
    return 1;
}

static int
unit_read(int64_t out[COUNTER_COUNT])
{
    if (!rperf_contention_active())
        return 0;
    rperf_thread_slot_t *slot = claim_current();
    if (!slot)
        return 0;
    counters_into(slot, rperf_now_ns(), out);
    return 1;
}

static const rperf_log_unit_ops_t unit_ops = {unit_label_free, unit_begin, unit_end, unit_read};

/* The whole process's counters, in the order of Rperf::PROCESS_COUNTER_FIELDS:
 * threads alive, the state totals of every thread up to now (exited threads
 * included), blocked time by cause, and the drop counters in the order of
 * metrics_format.h's drop names (but label_sets, which Ruby keeps). */
enum {
    PROCESS_THREADS = 0,
    PROCESS_TOTALS = 1,
    PROCESS_CAUSES = PROCESS_TOTALS + RPERF_STATE_COUNT,
    PROCESS_DROPS = PROCESS_CAUSES + RPERF_CAUSE_COUNT,
    PROCESS_COUNT = PROCESS_DROPS + RPERF_METRICS_DROPS - 1,
};

static VALUE
process_counter_fields(void)
{
    static const char *const causes[RPERF_CAUSE_COUNT] = RPERF_CAUSE_NAMES;
    static const char *const drops[RPERF_METRICS_DROPS] = RPERF_METRICS_DROP_NAMES;
    VALUE fields = rb_ary_new_capa(PROCESS_COUNT);
    rb_ary_push(fields, ID2SYM(rb_intern("threads")));
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        rb_ary_push(fields, ID2SYM(rb_intern(rperf_report_state_keys[i])));
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++)
        rb_ary_push(fields, rb_to_symbol(rb_sprintf("blocked_%s_ns", causes[c])));
    for (int d = 0; d < RPERF_METRICS_DROPS - 1; d++)
        rb_ary_push(fields, rb_to_symbol(rb_sprintf("dropped_%s", drops[d])));
    return rb_ary_freeze(fields);
}

typedef struct process_sum {
    int64_t now;
    int64_t out[PROCESS_COUNT];
} process_sum_t;

static void
add_slot(rperf_thread_slot_t *slot, void *arg)
{
    process_sum_t *s = arg;
    rperf_slot_view_t view;
    /* Bounded: a slot whose version racing writers left odd must not hold
     * this thread, and the GVL, forever; its fields are then read as they are. */
    rperf_slot_read_within(slot, &view, 1L << 14);
    int64_t totals[RPERF_STATE_COUNT], methods[RPERF_SLOT_BLOCK_METHODS];
    rperf_slot_view_totals_now(&view, s->now, totals);
    rperf_slot_methods_now(&view, s->now, methods);
    s->out[PROCESS_THREADS] += !view.exited;
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        s->out[PROCESS_TOTALS + i] += totals[i];
    for (int i = 0; i < view.nmethods; i++)
        s->out[PROCESS_CAUSES + (i == 0 ? RPERF_CAUSE_UNKNOWN : rperf_cause_table_cause(view.methods[i].frame))] +=
            methods[i];
}

/* _c_process_counters(ary) — the process's counters written into ary, or
 * nil when no profile is active. */
static VALUE
rb_rperf_process_counters(VALUE self, VALUE ary)
{
    (void)self;
    Check_Type(ary, T_ARRAY);
    if (!rperf_contention_active())
        return Qnil;
    process_sum_t s;
    memset(&s, 0, sizeof(s));
    s.now = rperf_now_ns();
    rperf_slots_foreach(add_slot, &s);
    rperf_contention_stats_t st;
    rperf_contention_get_stats(&st);
    const uint64_t drops[] = {st.dropped_threads, st.dropped_causes, st.dropped_intervals, st.dropped_edges,
                              st.dropped_blocked_edges};
    for (int d = 0; d < RPERF_METRICS_DROPS - 1; d++)
        s.out[PROCESS_DROPS + d] = (int64_t)drops[d];
    for (long i = 0; i < PROCESS_COUNT; i++)
        rb_ary_store(ary, i, LL2NUM(s.out[i]));
    return ary;
}

/* Rperf::METRICS_FORMAT: what a metrics file fixes (metrics_format.h). */
static VALUE
metrics_format(void)
{
    static const int64_t wait_bounds[RPERF_METRICS_WAIT_BOUNDS] = RPERF_METRICS_WAIT_BOUNDS_NS;
    static const int ratio_bounds[RPERF_METRICS_RATIO_BOUNDS] = RPERF_METRICS_RATIO_BOUNDS_PERMILLE;
    static const char *const causes[RPERF_CAUSE_COUNT] = RPERF_CAUSE_NAMES;
    static const char *const drops[RPERF_METRICS_DROPS] = RPERF_METRICS_DROP_NAMES;
    VALUE h = rb_hash_new(), waits = rb_ary_new(), ratios = rb_ary_new(), c = rb_ary_new(), d = rb_ary_new();
    for (int i = 0; i < RPERF_METRICS_WAIT_BOUNDS; i++)
        rb_ary_push(waits, LL2NUM(wait_bounds[i]));
    for (int i = 0; i < RPERF_METRICS_RATIO_BOUNDS; i++)
        rb_ary_push(ratios, INT2NUM(ratio_bounds[i]));
    for (int i = 0; i < RPERF_CAUSE_COUNT; i++)
        rb_ary_push(c, ID2SYM(rb_intern(causes[i])));
    for (int i = 0; i < RPERF_METRICS_DROPS; i++)
        rb_ary_push(d, ID2SYM(rb_intern(drops[i])));
    rb_hash_aset(h, ID2SYM(rb_intern("name")), rb_obj_freeze(rb_str_new_cstr(RPERF_METRICS_FORMAT_NAME)));
    rb_hash_aset(h, ID2SYM(rb_intern("version")), INT2NUM(RPERF_METRICS_VERSION));
    rb_hash_aset(h, ID2SYM(rb_intern("wait_bounds_ns")), rb_ary_freeze(waits));
    rb_hash_aset(h, ID2SYM(rb_intern("ratio_bounds_permille")), rb_ary_freeze(ratios));
    rb_hash_aset(h, ID2SYM(rb_intern("causes")), rb_ary_freeze(c));
    rb_hash_aset(h, ID2SYM(rb_intern("drops")), rb_ary_freeze(d));
    rb_hash_aset(h, ID2SYM(rb_intern("max_labels")), INT2NUM(RPERF_METRICS_MAX_LABELS));
    rb_hash_aset(h, ID2SYM(rb_intern("max_text")), INT2NUM(RPERF_METRICS_MAX_TEXT));
    rb_hash_aset(h, ID2SYM(rb_intern("max_rows")), INT2NUM(RPERF_METRICS_MAX_ROWS));
    return rb_obj_freeze(h);
}

/* ------------------------------------------------------------------ */
/* fork and Init                                                       */

/* The sampler's handlers pair up: prepare locks, parent or child unlocks
 * (the child by a fresh mutex). sampler_running cannot change in between:
 * the forking thread holds the GVL. */
static void
before_fork(void)
{
    if (prof.sampler_running)
        rperf_sampler_before_fork();
}

static void
after_fork_parent(void)
{
    if (prof.sampler_running)
        rperf_sampler_after_fork_parent();
}

static void
after_fork_child(void)
{
    /* Only flag changes: another thread of the parent may have held any
     * lock at fork time. The rest is cleaned up on the next call. */
    rperf_gvl_hooks_after_fork_child();
    rperf_ractor_table_after_fork_child();
    rperf_contention_after_fork_child();
    rperf_native_tid_reset();
    rperf_log_unit_after_fork_child();
    if (prof.sampler_running)
        rperf_sampler_after_fork_child();
}

/* Rperf::LIMITS: { option => { min:, max:, default:, unit: } } for every
 * option of rperf_limits.h, plus the fixed capacities; frozen. */
static void
define_limits(void)
{
    VALUE limits = rb_hash_new();
#define RPERF_DEFINE_LIMIT(name, min, max, dflt, unit) \
    do { \
        VALUE h = rb_hash_new(); \
        rb_hash_aset(h, ID2SYM(rb_intern("min")), LL2NUM(min)); \
        rb_hash_aset(h, ID2SYM(rb_intern("max")), LL2NUM(max)); \
        rb_hash_aset(h, ID2SYM(rb_intern("default")), LL2NUM(dflt)); \
        rb_hash_aset(h, ID2SYM(rb_intern("unit")), rb_obj_freeze(rb_str_new_cstr(unit))); \
        rb_hash_aset(limits, ID2SYM(rb_intern(#name)), rb_obj_freeze(h)); \
    } while (0);
    RPERF_OPTION_LIMITS(RPERF_DEFINE_LIMIT)
#undef RPERF_DEFINE_LIMIT
    rb_hash_aset(limits, ID2SYM(rb_intern("ractors")), INT2NUM(RPERF_MAX_RACTORS));
    rb_hash_aset(limits, ID2SYM(rb_intern("stack_depth")), INT2NUM(RPERF_MAX_STACK_DEPTH));
    rb_hash_aset(limits, ID2SYM(rb_intern("report_inflated_bytes")), LL2NUM(RPERF_REPORT_INFLATED_BYTES_DEFAULT));
    rb_hash_aset(limits, ID2SYM(rb_intern("interval_bytes")), INT2NUM(RPERF_INTERVAL_BYTES));
    rb_define_const(mRperf, "LIMITS", rb_obj_freeze(limits));
}

/* Rperf::MODES: { name => number } of enum rperf_profile_mode; frozen. */
static void
define_modes(void)
{
    static const char *const names[RPERF_PROFILE_MODES] = RPERF_PROFILE_MODE_NAMES;
    VALUE modes = rb_hash_new();
    for (int i = 0; i < RPERF_PROFILE_MODES; i++)
        rb_hash_aset(modes, ID2SYM(rb_intern(names[i])), INT2NUM(i));
    rb_define_const(mRperf, "MODES", rb_obj_freeze(modes));
}

/* Ruby frees its VM after the end procs have run, while this process's
 * other native threads live on until exit(): a sampler worker still ticking
 * then triggers a postponed job on the freed VM and the process dies of
 * SIGSEGV at exit. This end proc, registered when the extension loads,
 * runs after every at_exit the program registers later (end procs run last
 * in, first out), so an at_exit that stops the profile or saves its report
 * still finds it whole. It stops only the worker: the hooks keep counting
 * and a report taken after it still reads every table, without samples
 * after this point. */
static void
stop_sampler_at_exit(VALUE unused)
{
    (void)unused;
    if (prof.sampler_running)
        rperf_sampler_stop();
}

RUBY_FUNC_EXPORTED void
Init_rperf_ext(void)
{
    rb_ext_ractor_safe(true);
    mRperf = rb_define_module("Rperf");
    rb_define_module_function(mRperf, "_c_start", rb_rperf_start, 2);
    rb_define_module_function(mRperf, "_c_stop", rb_rperf_stop, 0);
    rb_define_module_function(mRperf, "_c_snapshot", rb_rperf_snapshot, 1);
    rb_define_module_function(mRperf, "_c_running?", rb_rperf_running_p, 0);
    rb_define_module_function(mRperf, "_c_set_label", rb_rperf_set_label, 1);
    rb_define_module_function(mRperf, "_c_get_label", rb_rperf_get_label, 0);
    rb_define_module_function(mRperf, "_c_profile_inc", rb_rperf_profile_inc, 0);
    rb_define_module_function(mRperf, "_c_profile_dec", rb_rperf_profile_dec, 0);
    rb_define_module_function(mRperf, "_c_refcount", rb_rperf_refcount, 0);
    rb_define_module_function(mRperf, "_c_thread_counters", rb_rperf_thread_counters, 1);
    rb_define_module_function(mRperf, "_c_switch_label", rb_rperf_switch_label, 2);
    rb_define_const(mRperf, "COUNTER_FIELDS", counter_fields());
    rb_define_module_function(mRperf, "_c_process_counters", rb_rperf_process_counters, 1);
    rb_define_const(mRperf, "PROCESS_COUNTER_FIELDS", process_counter_fields());
    rb_define_const(mRperf, "METRICS_FORMAT", metrics_format());
    rperf_log_numbers_define(mRperf);
    rperf_analysis_bridge_define(mRperf);
    rperf_log_unit_define(mRperf, &unit_ops);
    rperf_line_queue_define(mRperf);
    const char *priv[] = {
        "_c_start",          "_c_stop",           "_c_snapshot",         "_c_running?",        "_c_set_label",
        "_c_get_label",      "_c_profile_inc",    "_c_profile_dec",      "_c_thread_counters", "_c_refcount",
        "_c_switch_label",   "_c_parse_report",   "_c_parsed_intervals", "_c_render",          "_c_process_counters",
        "_c_metrics_render", "_c_append_numbers", "_c_unit_begin",       "_c_unit_end",        "_c_unit_after",
        "_c_unit_append",    "_c_unit_line",      "_c_unit_push",        "_c_unit_read",       "_c_request_begin",
        "_c_request_end"};
    VALUE singleton = rb_singleton_class(mRperf);
    for (size_t i = 0; i < sizeof(priv) / sizeof(priv[0]); i++) {
        VALUE name = ID2SYM(rb_intern(priv[i]));
        rb_funcall(singleton, rb_intern("private"), 1, name);
    }
    rb_define_const(mRperf, "HAVE_SAMPLER", rperf_sampler_supported() ? Qtrue : Qfalse);
    rb_define_const(mRperf, "HAVE_ANALYSIS",
#ifdef RPERF_HAVE_ANALYSIS
                    Qtrue
#else
                    Qfalse
#endif
    );
    /* True only in the test variant whose hooks stall (extconf.rb). */
    rb_define_const(mRperf, "STALLED_EVENTS",
#ifdef RPERF_STALL_EVENTS
                    Qtrue
#else
                    Qfalse
#endif
    );
    rperf_errors_define(mRperf);
    define_limits();
    define_modes();
    rperf_interval_list_define(rb_define_module_under(mRperf, "Contention"));

    rperf_slot_key_init();
    rperf_ractor_registry_init();
    /* dmark only runs for non-NULL data. */
    profiler_anchor = TypedData_Wrap_Struct(rb_cObject, &anchor_type, &prof);
    rb_gc_register_mark_object(profiler_anchor);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    rb_set_end_proc(stop_sampler_at_exit, Qnil);
}
