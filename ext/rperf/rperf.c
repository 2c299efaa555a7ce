/*
 * rperf.c — the extension's entry point: Init, the private `_c_*` methods
 * of the Rperf module, the profiler lifecycle (start, stop, snapshot,
 * pause/resume by refcount, fork) and the report builder that turns the
 * slots, rings, buffers and tables into one Hash in the report.json v1
 * shape (docs/report-format.md), String keys throughout.
 *
 * It does NOT validate keyword arguments (lib/rperf.rb does), does NOT keep
 * the label-set registry (Ruby does; it adds "label_sets") and does NOT
 * sample stacks (sampler.c, when present: RPERF_HAVE_SAMPLER).
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

#include "clock.h"
#include "contention.h"
#include "rperf_limits.h"
#include "gc_hooks.h"
#include "gvl_hooks.h"
#include "interval_list.h"
#include "interval_sort.h"
#include "thread_slot.h"
#ifdef RPERF_HAVE_SAMPLER
#include "sampler.h"
#endif
#ifdef RPERF_HAVE_ANALYSIS
#include "rga.h"
#endif

static VALUE mRperf;
static VALUE profiler_anchor;      /* marks slot threads and sampler frames */

/* Rperf::Error and its subclasses (defined here, at Init: everything the
 * extension raises at run time is one of them; invalid arguments raise
 * ArgumentError). */
static VALUE eError;              /* Rperf::Error < StandardError */
static VALUE eStateError;         /* already running, not running, unbalanced profile */
static VALUE eResourceError;      /* memory, timer, hook or thread that could not be had */
static VALUE eReportError;        /* a report that cannot be read: syntax, version, schema */
static VALUE eRenderError;        /* a view that cannot be rendered (Graphviz, output) */
static VALUE eUnsupportedError;   /* a part this build was made without */

static struct {
    int mode;                      /* 0 cpu, 1 wall */
    int frequency;
    int sampler_running;
    int refcount;                  /* profile refcount; 0 = paused */
} prof;

static void
anchor_mark(void *ptr)
{
    (void)ptr;
    rperf_slot_pool_mark();
#ifdef RPERF_HAVE_SAMPLER
    if (prof.sampler_running || rperf_contention_active()) rperf_sampler_mark();
#endif
}

static const rb_data_type_t anchor_type = {
    .wrap_struct_name = "rperf_profiler",
    .function = { .dmark = anchor_mark, .dfree = NULL, .dsize = NULL },
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static VALUE
hash_fetch(VALUE h, const char *key)
{
    return rb_hash_aref(h, ID2SYM(rb_intern(key)));
}

static long
hash_long(VALUE h, const char *key, long dflt)
{
    VALUE v = hash_fetch(h, key);
    return NIL_P(v) ? dflt : NUM2LONG(v);
}

static void
aset(VALUE h, const char *key, VALUE v)
{
    rb_hash_aset(h, rb_str_new_cstr(key), v);
}

static VALUE
i64(int64_t v)
{
    return LL2NUM(v);
}

static const char *const state_keys[RPERF_STATE_COUNT] = {
    "running_ns", "gvl_wait_ns", "blocked_ns", "gc_mark_ns", "gc_sweep_ns"
};

/* Leaves a forked child's inherited state behind: destroyed here, outside
 * the atfork handler; the thread hook stays registered (see gvl_hooks.h). */
static void
cleanup_forked_child(void)
{
    if (!rperf_contention_forked_child_pending()) return;
    rperf_gc_hooks_remove();
    rperf_contention_destroy();
    prof.sampler_running = 0;
    prof.refcount = 0;
}

/* ------------------------------------------------------------------ */
/* start                                                               */

/* A start that failed after the contention state was created: other
 * Ractors' GC hooks (kept from an earlier profile) may already be using it. */
static void
abandon_start(void)
{
    rperf_contention_stop_recording();
    rperf_gc_hooks_remove();
    rperf_contention_destroy();
}

static void
claim_existing(VALUE threads, VALUE caller, int64_t now)
{
    rperf_ractor_slot_t *main_ractor = rperf_ractor_lookup_current();
    long n = RARRAY_LEN(threads);
    for (long i = 0; i < n; i++) {
        VALUE th = RARRAY_AREF(threads, i);
        if (th == caller) continue;
        rperf_thread_slot_t *slot = rperf_slot_claim(th, now);
        if (slot && !slot->ractor) slot->ractor = main_ractor;  /* blocked since start */
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
    if (rperf_contention_active()) rb_raise(eStateError, "rperf: profiler is already running");

    rperf_contention_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.max_threads = (int)hash_long(config, "max_threads", RPERF_MAX_THREADS_DEFAULT);
    cfg.max_intervals = hash_long(config, "max_intervals", RPERF_MAX_INTERVALS_DEFAULT);
    cfg.max_edges = hash_long(config, "max_edges", RPERF_MAX_EDGES_DEFAULT);
    cfg.min_interval_ns = hash_long(config, "min_interval_ns", RPERF_MIN_INTERVAL_NS_DEFAULT);
    cfg.timeline = RTEST(hash_fetch(config, "timeline"));
    prof.mode = (int)hash_long(config, "mode", 1);
    prof.frequency = (int)hash_long(config, "frequency", RPERF_FREQUENCY_DEFAULT);
    cfg.wall_mode = prof.mode == 1;
    int deferred = RTEST(hash_fetch(config, "defer"));

    const char *err = NULL;
    VALUE caller = rb_thread_current();
    if (rperf_contention_start(&cfg, caller, deferred, &err) < 0)
        rb_raise(eResourceError, "rperf: cannot start: %s", err);
    claim_existing(threads, caller, rperf_contention_interval_start());

#ifdef RPERF_HAVE_SAMPLER
    rperf_sampler_opts_t opts = {
        .frequency = prof.frequency,
        .mode = prof.mode == 1 ? RPERF_MODE_WALL : RPERF_MODE_CPU,
        .aggregate = RTEST(hash_fetch(config, "aggregate")),
        .signal = (int)hash_long(config, "signal", -1),
        .deferred = deferred,
        .max_threads = cfg.max_threads,
    };
    if (rperf_sampler_start(&opts, &err) < 0) {
        abandon_start();
        rb_raise(eResourceError, "rperf: cannot start the sampler: %s", err);
    }
    prof.sampler_running = 1;
#endif
    if (rperf_gvl_hooks_install() < 0) {
#ifdef RPERF_HAVE_SAMPLER
        rperf_sampler_stop();
        rperf_sampler_free();
        prof.sampler_running = 0;
#endif
        abandon_start();
        rb_raise(eResourceError, "rperf: cannot install the thread event hook");
    }
    rperf_gc_hooks_install();
    prof.refcount = deferred ? 0 : 1;
    return Qtrue;
}

/* ------------------------------------------------------------------ */
/* report builder                                                      */

typedef struct build_ctx {
    rperf_cut_t cut;
    int clear;
    VALUE threads;
    int64_t (*ractor_totals)[RPERF_STATE_COUNT];
    long *ractor_threads;
    int nractors;              /* identified Ractors */
    int unidentified;          /* threads without a Ractor exist */
    rperf_interval_t *open;    /* intervals open at the cut */
    size_t open_count, open_cap;
    rperf_slot_view_t *views;  /* views[seq - 1] read at the cut; state -1: none */
    int nviews;
    rperf_label_total_t *labels;
    size_t nlabels;
} build_ctx_t;

static int
ractor_id_of(build_ctx_t *ctx, const rperf_thread_slot_t *slot)
{
    const rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    if (r) return r->id;
    ctx->unidentified = 1;
    return ctx->nractors + 1;
}

static void
push_open(build_ctx_t *ctx, const rperf_thread_slot_t *slot, int state, int64_t from, int64_t to)
{
    if (to <= from) return;
    if (ctx->open_count == ctx->open_cap) {
        size_t cap = ctx->open_cap ? ctx->open_cap * 2 : 64;
        rperf_interval_t *p = realloc(ctx->open, cap * sizeof(*p));
        if (!p) return;
        ctx->open = p;
        ctx->open_cap = cap;
    }
    ctx->open[ctx->open_count++] = (rperf_interval_t){
        .start_ns = from, .end_ns = to, .thread_seq = slot->seq,
        .label_set_id = RPERF_LOAD(slot->label_set_id), .stack_id = -1, .state = (uint8_t)state,
    };
}

static VALUE
thread_name(VALUE thread)
{
    VALUE name = rb_funcall(thread, rb_intern("name"), 0);
    return NIL_P(name) ? rb_str_new_cstr("") : rb_str_dup(name);
}

static void
build_thread(rperf_thread_slot_t *slot, void *arg)
{
    build_ctx_t *ctx = arg;
    int64_t delta[RPERF_STATE_COUNT];
    uint64_t acq, waits;
    int64_t start = ctx->cut.start_ns, end = ctx->cut.end_ns;

    if (slot->seq > ctx->nviews || ctx->views[slot->seq - 1].state < 0) return;  /* after the cut */
    const rperf_slot_view_t v = ctx->views[slot->seq - 1];
    rperf_slot_report_totals(slot, end, &v, delta, &acq, &waits);
    if (v.exited && v.last_seen_ns < start) return;  /* gone before this interval */

    int64_t first = v.first_seen_ns > start ? v.first_seen_ns : start;
    int64_t last = v.exited ? v.last_seen_ns : end;
    if (last < first) last = first;

    if (!slot->native_id && !v.exited) {
        VALUE tid = rb_funcall(slot->thread, rb_intern("native_thread_id"), 0);
        if (!NIL_P(tid)) slot->native_id = NUM2LL(tid);
    }
    int rid = ractor_id_of(ctx, slot);

    VALUE h = rb_hash_new();
    aset(h, "seq", INT2NUM(slot->seq));
    aset(h, "name", thread_name(slot->thread));
    aset(h, "native_id", i64(slot->native_id));
    aset(h, "ractor", INT2NUM(rid));
    aset(h, "first_seen_ns", i64(first - start));
    aset(h, "last_seen_ns", i64(last - start));
    aset(h, "exited", v.exited ? Qtrue : Qfalse);
    for (int i = 0; i < RPERF_STATE_COUNT; i++) aset(h, state_keys[i], i64(delta[i]));
    aset(h, "acquisitions", ULL2NUM(acq));
    aset(h, "waits", ULL2NUM(waits));
    aset(h, "label_set", INT2NUM(RPERF_LOAD(slot->label_set_id)));
    rb_ary_push(ctx->threads, h);

    if (rid >= 1 && rid <= ctx->nractors + 1) {
        for (int i = 0; i < RPERF_STATE_COUNT; i++) ctx->ractor_totals[rid - 1][i] += delta[i];
        ctx->ractor_threads[rid - 1]++;
    }

    /* The state open at the cut, split at the cut (timeline only). */
    if (!v.exited && rperf_contention_config()->timeline) {
        int64_t from = v.timeline_from_ns;
        int64_t to = end;
        if (v.state == RPERF_STATE_GVL_WAIT && v.ready_ns > from) {
            push_open(ctx, slot, RPERF_STATE_BLOCKED, from, v.ready_ns);
            from = v.ready_ns;
        }
        push_open(ctx, slot, v.state, from, to);
    }
}

/* The timeline, clipped to the cut, in report order and report units
 * (ns from the cut's start), as an Rperf::Contention::Intervals. */
static VALUE
build_intervals(build_ctx_t *ctx, rperf_interval_t *copied, size_t ncopied)
{
    size_t total = ncopied + ctx->open_count;
    rperf_interval_t *all = malloc((total ? total : 1) * sizeof(*all));
    rperf_interval_t *scratch = malloc((total ? total : 1) * sizeof(*scratch));
    if (!all || !scratch) {
        free(all);
        free(scratch);
        rb_raise(eResourceError, "rperf: cannot allocate intervals");
    }
    memcpy(all, copied, ncopied * sizeof(*all));
    if (ctx->open_count) memcpy(all + ncopied, ctx->open, ctx->open_count * sizeof(*all));
    int64_t start = ctx->cut.start_ns, end = ctx->cut.end_ns;
    size_t n = 0;
    for (size_t i = 0; i < total; i++) {
        rperf_interval_t iv = all[i];
        if (iv.start_ns < start) iv.start_ns = start;
        if (iv.end_ns > end) iv.end_ns = end;
        if (iv.end_ns <= iv.start_ns) continue;
        iv.start_ns -= start;
        iv.end_ns -= start;
        all[n++] = iv;
    }
    rperf_interval_t *sorted = rperf_interval_sort(all, scratch, n);
    free(sorted == all ? scratch : all);
    return rperf_interval_list_new(sorted, n);
}

static const char *
holder_kind_name(int kind)
{
    switch (kind) {
      case RPERF_HOLDER_THREAD: return "thread";
      case RPERF_HOLDER_GC: return "gc";
      case RPERF_HOLDER_HANDOFF: return "handoff";
      default: return "unknown";
    }
}

typedef struct unknown_ctx {
    build_ctx_t *build;
    rperf_edge_list_t *list;
    int consume;
} unknown_ctx_t;

static void
collect_unknown(rperf_thread_slot_t *slot, void *arg)
{
    unknown_ctx_t *u = arg;
    int64_t ns;
    uint64_t count;
    if (u->consume) {
        ns = __atomic_exchange_n(&slot->unknown_edge_ns, 0, __ATOMIC_RELAXED);
        count = __atomic_exchange_n(&slot->unknown_edge_count, 0, __ATOMIC_RELAXED);
    }
    else {
        ns = __atomic_load_n(&slot->unknown_edge_ns, __ATOMIC_RELAXED);
        count = __atomic_load_n(&slot->unknown_edge_count, __ATOMIC_RELAXED);
    }
    if (ns <= 0) return;
    rperf_edge_t e = {
        .ractor = 0, .waiter = slot->seq, .holder = 0, .waiter_label = RPERF_LOAD(slot->label_set_id),
        .holder_label = 0, .kind = RPERF_HOLDER_UNKNOWN, .wait_ns = ns, .count = count,
    };
    rperf_edge_list_add(u->list, &e);
}

static VALUE
build_edges(build_ctx_t *ctx, rperf_edge_list_t *table, rperf_edge_list_t *extra)
{
    VALUE ary = rb_ary_new();
    rperf_edge_list_t *lists[2] = { table, extra };
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->count; i++) {
            const rperf_edge_t *e = &lists[l]->items[i];
            if (e->wait_ns <= 0) continue;
            int rid = e->ractor;
            if (rid == 0) {
                rperf_thread_slot_t *w = rperf_slot_by_seq(e->waiter);
                rid = w ? ractor_id_of(ctx, w) : ctx->nractors + 1;
            }
            VALUE h = rb_hash_new();
            aset(h, "ractor", INT2NUM(rid));
            aset(h, "waiter", INT2NUM(e->waiter));
            aset(h, "holder_kind", rb_str_new_cstr(holder_kind_name(e->kind)));
            aset(h, "holder", INT2NUM(e->kind == RPERF_HOLDER_THREAD ? e->holder : 0));
            aset(h, "waiter_label_set", INT2NUM(e->waiter_label));
            aset(h, "holder_label_set", INT2NUM(e->holder_label));
            aset(h, "wait_ns", i64(e->wait_ns));
            aset(h, "count", ULL2NUM(e->count));
            rb_ary_push(ary, h);
        }
    }
    return ary;
}

static VALUE
build_ractors(build_ctx_t *ctx)
{
    VALUE ary = rb_ary_new();
    int n = ctx->nractors + (ctx->unidentified ? 1 : 0);
    for (int i = 0; i < n; i++) {
        VALUE h = rb_hash_new();
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i + 1);
        aset(h, "id", INT2NUM(i + 1));
        aset(h, "main", (r && r->main) ? Qtrue : Qfalse);
        /* Additions (minor): per-Ractor totals and an unidentified bucket
         * for threads whose Ractor never ran the registration job. */
        aset(h, "identified", i < ctx->nractors ? Qtrue : Qfalse);
        aset(h, "threads", LONG2NUM(ctx->ractor_threads[i]));
        for (int s = 0; s < RPERF_STATE_COUNT; s++) aset(h, state_keys[s], i64(ctx->ractor_totals[i][s]));
        rb_ary_push(ary, h);
    }
    return ary;
}

static VALUE
build_label_totals(build_ctx_t *ctx)
{
    VALUE ary = rb_ary_new();
    for (size_t i = 0; ctx->labels && i < ctx->nlabels; i++) {
        const rperf_label_total_t *row = &ctx->labels[i];
        VALUE h = rb_hash_new();
        aset(h, "thread", INT2NUM(row->thread_seq));
        aset(h, "label_set", INT2NUM(row->label_set_id));
        for (int s = 0; s < RPERF_STATE_COUNT; s++) aset(h, state_keys[s], i64(row->totals[s]));
        rb_ary_push(ary, h);
    }
    return ary;
}

#ifndef RPERF_HAVE_SAMPLER
static void
fill_synthetic(VALUE report)
{
    static const char *const paths[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_PATHS;
    static const char *const labels[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_LABELS;
    VALUE ary = rb_ary_new();
    for (int i = 0; i < RPERF_SYNTHETIC_FRAMES; i++)
        rb_ary_push(ary, rb_ary_new3(2, rb_str_new_cstr(paths[i]), rb_str_new_cstr(labels[i])));
    aset(report, "frames", ary);
    aset(report, "stacks", rb_ary_new());
    aset(report, "samples", rb_ary_new());
    aset(report, "blame", rb_ary_new());
}
#endif

static VALUE
build_stats(void)
{
    rperf_contention_stats_t cs;
    rperf_contention_get_stats(&cs);
    VALUE h = rb_hash_new();
    uint64_t trigger = 0, sampling = 0, sampling_ns = 0, dropped_samples = 0, dropped_agg = 0;
#ifdef RPERF_HAVE_SAMPLER
    rperf_sampler_stats_t ss;
    memset(&ss, 0, sizeof(ss));
    rperf_sampler_get_stats(&ss);
    trigger = ss.trigger_count;
    sampling = ss.sampling_count;
    sampling_ns = ss.sampling_time_ns;
    dropped_samples = ss.dropped_samples;
    dropped_agg = ss.dropped_aggregation;
#endif
    aset(h, "trigger_count", ULL2NUM(trigger));
    aset(h, "sampling_count", ULL2NUM(sampling));
    aset(h, "sampling_time_ns", ULL2NUM(sampling_ns));
    aset(h, "hook_events", ULL2NUM(cs.hook_events));
    aset(h, "hook_time_ns", ULL2NUM(cs.hook_time_ns));
    aset(h, "dropped_samples", ULL2NUM(dropped_samples));
    aset(h, "dropped_aggregation", ULL2NUM(dropped_agg));
    aset(h, "dropped_intervals", ULL2NUM(cs.dropped_intervals));
    aset(h, "dropped_edges", ULL2NUM(cs.dropped_edges));
    aset(h, "dropped_threads", ULL2NUM(cs.dropped_threads));
    aset(h, "dropped_label_sets", INT2FIX(0));
    aset(h, "coalesced_intervals", ULL2NUM(cs.coalesced_intervals));
    aset(h, "edge_lock_contended", ULL2NUM(cs.edge_lock_contended));
    aset(h, "paused_ns", i64(cs.paused_ns));
    return h;
}

/* 0 for a whole run; n for the n-th interval of a snapshot(clear) series
 * (the tail after the last clear included). */
static int
report_sequence(int clear)
{
    int done = rperf_contention_sequence();
    return (clear || done > 0) ? done + 1 : 0;
}

static VALUE
build_meta(const rperf_cut_t *cut, int clear)
{
    VALUE h = rb_hash_new();
    aset(h, "tool", rb_str_new_cstr("rperf-gvl"));
    VALUE version = rb_const_defined(mRperf, rb_intern("VERSION"))
                  ? rb_const_get(mRperf, rb_intern("VERSION")) : rb_str_new_cstr("0.0.0");
    aset(h, "tool_version", version);
    aset(h, "ruby_version", rb_const_get(rb_cObject, rb_intern("RUBY_VERSION")));
    aset(h, "pid", INT2NUM((int)getpid()));
    VALUE program = rb_gv_get("$0");
    aset(h, "program", NIL_P(program) ? rb_str_new_cstr("") : rb_obj_as_string(program));
    aset(h, "mode", rb_str_new_cstr(prof.mode == 1 ? "wall" : "cpu"));
    aset(h, "frequency", INT2NUM(prof.frequency));
    aset(h, "start_time_ns", i64(cut->start_realtime_ns));
    aset(h, "start_monotonic_ns", i64(cut->start_ns));
    int64_t duration = cut->end_ns - cut->start_ns;
    aset(h, "duration_ns", i64(duration > 0 ? duration : 1));
    aset(h, "sequence", INT2NUM(report_sequence(clear)));
    return h;
}

struct build_args {
    build_ctx_t *ctx;
    rperf_edge_list_t table, extra;
    rperf_interval_t *copied;
    size_t ncopied;
};

static void
read_view(rperf_thread_slot_t *slot, void *arg)
{
    build_ctx_t *ctx = arg;
    if (slot->seq <= ctx->nviews) rperf_slot_read(slot, &ctx->views[slot->seq - 1]);
}

/* Everything the report needs from C state, gathered before the first
 * Ruby allocation: allocating may run GC and with it the GC hook on this
 * very thread, which would move its numbers past the cut. */
static void
collect(struct build_args *a)
{
    build_ctx_t *ctx = a->ctx;
    int consume = ctx->clear || ctx->cut.final;

    /* The timeline first, then the slot views: an interval pushed in
     * between shows up as a later open start, never as an overlap. */
    size_t cap = 0;
    for (int i = 1; i <= ctx->nractors; i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i);
        if (r) cap += rperf_interval_buffer_count(&r->intervals);
    }
    a->copied = malloc((cap ? cap : 1) * sizeof(rperf_interval_t));
    ctx->nviews = rperf_slot_count();
    ctx->views = malloc((size_t)(ctx->nviews ? ctx->nviews : 1) * sizeof(rperf_slot_view_t));
    if (!a->copied || !ctx->views) rb_raise(eResourceError, "rperf: cannot allocate the report");
    for (int i = 1; i <= ctx->nractors && a->ncopied < cap; i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i);
        if (r) a->ncopied += rperf_interval_buffer_copy(&r->intervals, a->copied + a->ncopied,
                                                        cap - a->ncopied, consume);
    }
    for (int i = 0; i < ctx->nviews; i++) ctx->views[i].state = -1;
    rperf_slots_foreach(read_view, ctx);

    rperf_contention_flush_labels(ctx->cut.end_ns);
    ctx->labels = rperf_contention_label_totals(&ctx->nlabels, ctx->clear);

    if (rperf_contention_cut_edges(&ctx->cut, ctx->views, ctx->nviews, ctx->clear, &a->table) < 0)
        rb_raise(eResourceError, "rperf: cannot copy wait edges");
    rperf_contention_cut_open_waits(&ctx->cut, ctx->views, ctx->nviews, &a->extra);
    unknown_ctx_t u = { ctx, &a->extra, consume };
    rperf_slots_foreach(collect_unknown, &u);
}

static VALUE
build_report_body(VALUE arg)
{
    struct build_args *a = (struct build_args *)arg;
    build_ctx_t *ctx = a->ctx;
    collect(a);

    VALUE report = rb_hash_new();
    aset(report, "format", rb_str_new_cstr("rperf-gvl-report"));
    aset(report, "version", INT2FIX(1));
    aset(report, "minor", INT2FIX(0));
    aset(report, "meta", build_meta(&ctx->cut, ctx->clear && !ctx->cut.final));

    ctx->threads = rb_ary_new();
    rperf_slots_foreach(build_thread, ctx);

    aset(report, "stats", build_stats());
    aset(report, "threads", ctx->threads);
    VALUE empty = rb_hash_new();
    VALUE set0 = rb_hash_new();
    aset(set0, "id", INT2FIX(0));
    aset(set0, "labels", empty);
    aset(report, "label_sets", rb_ary_new3(1, set0));
    aset(report, "label_totals", build_label_totals(ctx));
    aset(report, "intervals", build_intervals(ctx, a->copied, a->ncopied));
    aset(report, "edges", build_edges(ctx, &a->table, &a->extra));
    aset(report, "ractors", build_ractors(ctx));
#ifdef RPERF_HAVE_SAMPLER
    rperf_sampler_fill_report(report);
#else
    fill_synthetic(report);
#endif
    if (ctx->clear && !ctx->cut.final) {
        /* The next report starts at this cut, from these very views. */
        int64_t end = ctx->cut.end_ns;
        int64_t realtime = rperf_realtime_ns() - (rperf_now_ns() - end);
        rperf_contention_begin_interval(end, realtime, ctx->views, ctx->nviews);
#ifdef RPERF_HAVE_SAMPLER
        if (prof.sampler_running) rperf_sampler_clear();
#endif
    }
    return report;
}

static VALUE
build_report_cleanup(VALUE arg)
{
    struct build_args *a = (struct build_args *)arg;
    free(a->copied);
    rperf_edge_list_free(&a->table);
    rperf_edge_list_free(&a->extra);
    free(a->ctx->open);
    free(a->ctx->views);
    free(a->ctx->labels);
    free(a->ctx->ractor_totals);
    free(a->ctx->ractor_threads);
    return Qnil;
}

static VALUE
build_report(int final, int clear, int64_t end_ns)
{
    build_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.cut.start_ns = rperf_contention_interval_start();
    ctx.cut.start_realtime_ns = rperf_contention_interval_start_realtime();
    ctx.cut.end_ns = end_ns;
    ctx.cut.final = final;
    ctx.clear = clear;
    ctx.nractors = rperf_ractor_count();
    ctx.ractor_totals = calloc((size_t)ctx.nractors + 1, sizeof(*ctx.ractor_totals));
    ctx.ractor_threads = calloc((size_t)ctx.nractors + 1, sizeof(long));
    struct build_args a;
    memset(&a, 0, sizeof(a));
    a.ctx = &ctx;
    if (!ctx.ractor_totals || !ctx.ractor_threads) {
        build_report_cleanup((VALUE)&a);
        rb_raise(eResourceError, "rperf: cannot allocate the report");
    }
    return rb_ensure(build_report_body, (VALUE)&a, build_report_cleanup, (VALUE)&a);
}

/* ------------------------------------------------------------------ */
/* stop / snapshot                                                     */

static void
teardown(void)
{
#ifdef RPERF_HAVE_SAMPLER
    if (prof.sampler_running) rperf_sampler_free();
#endif
    prof.sampler_running = 0;
    prof.refcount = 0;
    rperf_contention_destroy();
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
    if (!rperf_contention_active()) return Qnil;

    /* After remove returns no callback runs any more, so every ring,
     * buffer and slot may be read and then freed. A paused profile keeps
     * its pause time as the end of its accounting. */
    rperf_contention_stop_recording();
    rperf_gvl_hooks_remove();
    rperf_gc_hooks_remove();
#ifdef RPERF_HAVE_SAMPLER
    if (prof.sampler_running) rperf_sampler_stop();
#endif
    int64_t end = rperf_now_ns();
    int state = 0;
    VALUE report = rb_protect(build_final, (VALUE)&end, &state);
    teardown();
    if (state) rb_jump_tag(state);
    return report;
}

/* _c_snapshot(clear) — the report so far; with clear, the next report
 * starts at this cut (totals become deltas, tables are emptied). */
static VALUE
rb_rperf_snapshot(VALUE self, VALUE vclear)
{
    (void)self;
    cleanup_forked_child();
    if (!rperf_contention_active()) return Qnil;
    int clear = RTEST(vclear);
#ifdef RPERF_HAVE_SAMPLER
    if (prof.sampler_running) rperf_sampler_flush();
#endif
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

/* The calling thread's slot, claimed if needed (a thread that started
 * while the profile was paused has none yet). It is running: it holds the
 * GVL right now. */
static rperf_thread_slot_t *
claim_current(void)
{
    VALUE thread = rb_thread_current();
    rperf_thread_slot_t *slot = rperf_slot_find(thread);
    if (slot) return slot;
    int64_t now = rperf_contention_now_clipped();
    slot = rperf_slot_claim(thread, now);
    if (!slot) return NULL;
    rperf_slot_write_begin(slot);
    RPERF_STORE(slot->state, RPERF_STATE_RUNNING);
    rperf_slot_write_end(slot);
    rperf_ractor_slot_t *r = rperf_ractor_register_current();
    if (r) RPERF_STORE(slot->ractor, r);
    return slot;
}

/* _c_set_label(id) — the current thread's label set from now on. */
static VALUE
rb_rperf_set_label(VALUE self, VALUE vid)
{
    (void)self;
    int id = NUM2INT(vid);
    if (id < 0) rb_raise(rb_eArgError, "rperf: negative label set id %d", id);
    if (!rperf_contention_active()) return vid;
    rperf_thread_slot_t *slot = claim_current();
    if (slot) rperf_contention_set_label(slot, id);
    return vid;
}

static VALUE
rb_rperf_get_label(VALUE self)
{
    (void)self;
    if (!rperf_contention_active()) return INT2FIX(0);
    rperf_thread_slot_t *slot = rperf_slot_find(rb_thread_current());
    return INT2NUM(slot ? RPERF_LOAD(slot->label_set_id) : 0);
}

/* _c_profile_inc — 0 → 1 resumes recording and the sampler. */
static VALUE
rb_rperf_profile_inc(VALUE self)
{
    (void)self;
    if (!rperf_contention_active()) return Qfalse;
    prof.refcount++;
    if (prof.refcount == 1) {
        int64_t now = rperf_now_ns();
        rperf_contention_resume(rb_thread_current(), now);
#ifdef RPERF_HAVE_SAMPLER
        /* Re-bases every slot's sample clock itself. */
        if (prof.sampler_running) rperf_sampler_resume();
#endif
    }
    return Qtrue;
}

/* _c_profile_dec — 1 → 0 pauses; never below 0. */
static VALUE
rb_rperf_profile_dec(VALUE self)
{
    (void)self;
    if (!rperf_contention_active()) return Qfalse;
    if (prof.refcount <= 0) rb_raise(eStateError, "rperf: profile refcount would go negative (unbalanced profile)");
    prof.refcount--;
    if (prof.refcount == 0) {
#ifdef RPERF_HAVE_SAMPLER
        if (prof.sampler_running) rperf_sampler_pause();
#endif
        rperf_contention_pause(rperf_now_ns());
    }
    return Qtrue;
}

/* _c_thread_contention — the current thread's cumulative totals (this
 * profile) and the CLOCK_MONOTONIC time they were read at, or nil when
 * not profiling. Reads its own slot only. */
static VALUE
rb_rperf_thread_contention(VALUE self)
{
    (void)self;
    if (!rperf_contention_active()) return Qnil;
    rperf_thread_slot_t *slot = claim_current();
    if (!slot) return Qnil;
    int64_t totals[RPERF_STATE_COUNT];
    int64_t now = rperf_now_ns();
    rperf_slot_totals_now(slot, now, totals);
    VALUE h = rb_hash_new();
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        rb_hash_aset(h, ID2SYM(rb_intern(state_keys[i])), i64(totals[i]));
    /* The clock reading the totals are taken at: the difference of two
     * reads is the exact wall time the state differences add up to (a GVL
     * switch between this call and a separate clock read would not be). */
    rb_hash_aset(h, ID2SYM(rb_intern("monotonic_ns")), i64(now));
    return h;
}

/* ------------------------------------------------------------------ */
/* rendering (analysis module)                                         */

#ifdef RPERF_HAVE_ANALYSIS

static VALUE
opt_str(VALUE opts, const char *key)
{
    VALUE v = hash_fetch(opts, key);
    return NIL_P(v) ? Qnil : rb_obj_as_string(v);
}
#endif

#ifdef RPERF_HAVE_ANALYSIS
/* A report parsed by the analysis module, kept by Report so that every
 * rendering after the first skips the parse. */
typedef struct parsed_report {
    rga_report_t *report;
    size_t json_bytes;             /* the model's size is about this much */
} parsed_report_t;

static void
parsed_report_free(void *ptr)
{
    parsed_report_t *p = ptr;
    if (p->report) rga_report_free(p->report);
    ruby_xfree(p);
}

static size_t
parsed_report_memsize(const void *ptr)
{
    const parsed_report_t *p = ptr;
    return sizeof(*p) + p->json_bytes;
}

static const rb_data_type_t parsed_report_type = {
    .wrap_struct_name = "rperf_parsed_report",
    .function = { .dmark = NULL, .dfree = parsed_report_free, .dsize = parsed_report_memsize },
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* klass for a report that cannot be read; rendering failures are
 * RenderError, and a bad option value ArgumentError. */
static VALUE
raise_analysis_error(VALUE klass, const rga_error_t *err)
{
    char msg[768];
    rga_error_format(err, msg, sizeof(msg));
    if (err->code == RGA_ERR_ARGUMENT) klass = rb_eArgError;
    else if (err->code == RGA_ERR_NOMEM) klass = eResourceError;
    rb_raise(klass, "%s", msg);
    return Qnil;
}
#endif

/* _c_parse_report(json) — validates a report.json document and returns it
 * parsed (an opaque object for _c_render); raises ReportError naming the
 * position or key of the first problem. */
static VALUE
rb_rperf_parse_report(VALUE self, VALUE json)
{
    (void)self;
    StringValue(json);
#ifdef RPERF_HAVE_ANALYSIS
    parsed_report_t *p;
    VALUE obj = TypedData_Make_Struct(rb_cObject, parsed_report_t, &parsed_report_type, p);
    rga_error_t err;
    memset(&err, 0, sizeof(err));
    rga_status_t st = rga_report_load_buffer(RSTRING_PTR(json), (size_t)RSTRING_LEN(json), NULL,
                                             &p->report, &err);
    RB_GC_GUARD(json);
    if (st != RGA_OK) raise_analysis_error(eReportError, &err);
    p->json_bytes = (size_t)RSTRING_LEN(json);
    return obj;
#else
    rb_raise(eUnsupportedError, "rperf: this build has no analysis module");
    return Qnil;
#endif
}

/* _c_parsed_intervals(parsed) — [byte offset, byte length, Intervals] of
 * the report's "intervals" array in the text it was parsed from, so Ruby can
 * parse the rest and take the timeline packed; nil when it had none. */
static VALUE
rb_rperf_parsed_intervals(VALUE self, VALUE parsed)
{
    (void)self;
#ifdef RPERF_HAVE_ANALYSIS
    const parsed_report_t *p = rb_check_typeddata(parsed, &parsed_report_type);
    const rga_report_t *r = p->report;
    if (!r->intervals_text_length) return Qnil;
    size_t n = r->n_intervals;
    rperf_interval_t *records = malloc((n ? n : 1) * sizeof(*records));
    if (!records) rb_raise(eResourceError, "rperf: cannot allocate the timeline");
    for (size_t i = 0; i < n; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        if (r->threads[iv->thread_index].seq > INT32_MAX || iv->label_set > INT32_MAX) {
            /* Valid JSON, but beyond what this process records: Ruby reads it. */
            free(records);
            return Qnil;
        }
        records[i] = (rperf_interval_t){
            .start_ns = iv->start_ns, .end_ns = iv->end_ns,
            .thread_seq = (int32_t)r->threads[iv->thread_index].seq,
            .label_set_id = (int32_t)iv->label_set, .stack_id = iv->stack, .state = iv->state,
        };
    }
    VALUE list = rperf_interval_list_new(records, n);
    return rb_ary_new_from_args(3, SIZET2NUM(r->intervals_text_offset),
                                SIZET2NUM(r->intervals_text_length), list);
#else
    (void)parsed;
    rb_raise(eUnsupportedError, "rperf: this build has no analysis module");
    return Qnil;
#endif
}

/* _c_render(parsed, view, opts) — renders a report from _c_parse_report. */
static VALUE
rb_rperf_render(VALUE self, VALUE parsed, VALUE view, VALUE opts)
{
    (void)self;
    StringValue(view);
#ifdef RPERF_HAVE_ANALYSIS
    const parsed_report_t *p = rb_check_typeddata(parsed, &parsed_report_type);
    Check_Type(opts, T_HASH);
    rga_view_opts_t o;
    memset(&o, 0, sizeof(o));
    o.width = (int)hash_long(opts, "width", 0);
    o.color = RTEST(hash_fetch(opts, "color"));
    o.ascii = RTEST(hash_fetch(opts, "ascii"));
    VALUE by = opt_str(opts, "by");
    o.by = NIL_P(by) ? NULL : StringValueCStr(by);
    VALUE share = hash_fetch(opts, "min_share");
    o.min_share = NIL_P(share) ? 0.0 : NUM2DBL(share);
    o.from_ns = hash_long(opts, "from_ns", 0);
    o.to_ns = hash_long(opts, "to_ns", 0);
    VALUE thread = opt_str(opts, "thread");
    o.thread = NIL_P(thread) ? NULL : StringValueCStr(thread);
    o.ractor = hash_long(opts, "ractor", 0);
    o.top = (size_t)hash_long(opts, "top", 0);
    VALUE state = opt_str(opts, "state");
    o.state = NIL_P(state) ? NULL : StringValueCStr(state);
    o.roots = (RTEST(hash_fetch(opts, "thread_root")) ? RGA_ROOT_THREAD : 0u) |
              (RTEST(hash_fetch(opts, "label_root")) ? RGA_ROOT_LABEL : 0u);
    VALUE labels = hash_fetch(opts, "labels");
    const char **label_ptrs = NULL;
    VALUE keep = rb_ary_new();
    if (!NIL_P(labels)) {
        Check_Type(labels, T_ARRAY);
        long n = RARRAY_LEN(labels);
        label_ptrs = ALLOCA_N(const char *, n > 0 ? n : 1);
        for (long i = 0; i < n; i++) {
            VALUE s = rb_obj_as_string(RARRAY_AREF(labels, i));
            rb_ary_push(keep, s);
            label_ptrs[i] = StringValueCStr(s);
        }
        o.labels = label_ptrs;
        o.n_labels = (size_t)n;
    }
    char *out = NULL;
    size_t out_len = 0;
    rga_error_t err;
    memset(&err, 0, sizeof(err));
    int rc = rga_render_loaded(p->report, StringValueCStr(view), &o, &out, &out_len, &err);
    RB_GC_GUARD(keep);
    RB_GC_GUARD(state);
    RB_GC_GUARD(parsed);
    if (rc != 0) raise_analysis_error(eRenderError, &err);
    VALUE result = rb_str_new(out, (long)out_len);
    free(out);
    return result;
#else
    (void)parsed;
    (void)opts;
    rb_raise(eUnsupportedError, "rperf: this build has no analysis module");
    return Qnil;
#endif
}

/* ------------------------------------------------------------------ */
/* fork and Init                                                       */

static void
after_fork_child(void)
{
    /* Only flag changes: another thread of the parent may have held any
     * lock at fork time. The rest is cleaned up on the next call. */
    rperf_gvl_hooks_after_fork_child();
    rperf_gc_hooks_after_fork_child();
    rperf_contention_after_fork_child();
#ifdef RPERF_HAVE_SAMPLER
    if (prof.sampler_running) rperf_sampler_after_fork_child();
#endif
}

/* Rperf::LIMITS: { option => { min:, max:, default:, unit: } } for every
 * option of rperf_limits.h, plus the fixed capacities; frozen. */
static void
define_limits(void)
{
    VALUE limits = rb_hash_new();
#define RPERF_DEFINE_LIMIT(name, min, max, dflt, unit)                                  \
    do {                                                                                \
        VALUE h = rb_hash_new();                                                        \
        rb_hash_aset(h, ID2SYM(rb_intern("min")), LL2NUM(min));                        \
        rb_hash_aset(h, ID2SYM(rb_intern("max")), LL2NUM(max));                        \
        rb_hash_aset(h, ID2SYM(rb_intern("default")), LL2NUM(dflt));                   \
        rb_hash_aset(h, ID2SYM(rb_intern("unit")), rb_obj_freeze(rb_str_new_cstr(unit))); \
        rb_hash_aset(limits, ID2SYM(rb_intern(#name)), rb_obj_freeze(h));              \
    } while (0);
    RPERF_OPTION_LIMITS(RPERF_DEFINE_LIMIT)
#undef RPERF_DEFINE_LIMIT
    rb_hash_aset(limits, ID2SYM(rb_intern("ractors")), INT2NUM(RPERF_MAX_RACTORS));
    rb_hash_aset(limits, ID2SYM(rb_intern("stack_depth")), INT2NUM(RPERF_MAX_STACK_DEPTH));
    rb_hash_aset(limits, ID2SYM(rb_intern("report_inflated_bytes")),
                 LL2NUM(RPERF_REPORT_INFLATED_BYTES_DEFAULT));
    rb_define_const(mRperf, "LIMITS", rb_obj_freeze(limits));
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
    rb_define_module_function(mRperf, "_c_thread_contention", rb_rperf_thread_contention, 0);
    rb_define_module_function(mRperf, "_c_parse_report", rb_rperf_parse_report, 1);
    rb_define_module_function(mRperf, "_c_parsed_intervals", rb_rperf_parsed_intervals, 1);
    rb_define_module_function(mRperf, "_c_render", rb_rperf_render, 3);
    const char *priv[] = { "_c_start", "_c_stop", "_c_snapshot", "_c_running?", "_c_set_label",
                           "_c_get_label", "_c_profile_inc", "_c_profile_dec",
                           "_c_thread_contention", "_c_parse_report", "_c_parsed_intervals", "_c_render" };
    VALUE singleton = rb_singleton_class(mRperf);
    for (size_t i = 0; i < sizeof(priv) / sizeof(priv[0]); i++) {
        VALUE name = ID2SYM(rb_intern(priv[i]));
        rb_funcall(singleton, rb_intern("private"), 1, name);
    }
    rb_define_const(mRperf, "HAVE_SAMPLER",
#ifdef RPERF_HAVE_SAMPLER
                    Qtrue
#else
                    Qfalse
#endif
    );
    rb_define_const(mRperf, "HAVE_ANALYSIS",
#ifdef RPERF_HAVE_ANALYSIS
                    Qtrue
#else
                    Qfalse
#endif
    );
    eError = rb_define_class_under(mRperf, "Error", rb_eStandardError);
    eStateError = rb_define_class_under(mRperf, "StateError", eError);
    eResourceError = rb_define_class_under(mRperf, "ResourceError", eError);
    eReportError = rb_define_class_under(mRperf, "ReportError", eError);
    eRenderError = rb_define_class_under(mRperf, "RenderError", eError);
    eUnsupportedError = rb_define_class_under(mRperf, "UnsupportedError", eError);
    define_limits();
    rperf_interval_list_define(rb_define_module_under(mRperf, "Contention"));

    rperf_slot_key_init();
    rperf_contention_init_once();
    rperf_ractor_register_job_init();
    /* dmark only runs for non-NULL data. */
    profiler_anchor = TypedData_Wrap_Struct(rb_cObject, &anchor_type, &prof);
    rb_gc_register_mark_object(profiler_anchor);
    pthread_atfork(NULL, NULL, after_fork_child);
}
