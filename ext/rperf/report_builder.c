/*
 * report_builder.c — one report.json v1 Hash (docs/report-format.md, String
 * keys throughout) from the profiler's C state at a cut: per-thread and
 * per-Ractor totals, label totals, the timeline (as a packed
 * Rperf::Contention::Intervals), the wait edges, the sampler's arrays and
 * the counters. A counters-mode report has the same shape with empty
 * timeline, edges and sampler arrays, and says so in meta.recording.
 *
 * Everything is read from C state before the first Ruby allocation (see
 * collect()), then turned into Ruby objects. Text a program chose (thread
 * names, $0) is made valid UTF-8 on the way in (utf8_text.h). It does NOT
 * decide when a report is cut or what happens to the profile afterwards
 * (rperf.c), and does NOT add "label_sets" beyond the empty set 0 (Ruby
 * keeps the label registry).
 */
#include "report_builder.h"
#include "grow_array.h"
#include "cause_table.h"
#include "clock.h"
#include "contention.h"
#include "errors.h"
#include "interval_json.h"
#include "interval_list.h"
#include "interval_runs.h"
#include "ractor_table.h"
#include "sampler.h"
#include "thread_slot.h"
#include "utf8_text.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

const char *const rperf_report_state_keys[RPERF_STATE_COUNT] = {"running_ns", "gvl_wait_ns", "blocked_ns",
                                                                "gc_mark_ns", "gc_sweep_ns"};

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

typedef struct build_ctx {
    const rperf_report_params_t *params;
    rperf_cut_t cut;
    int clear;
    VALUE threads;
    /* Per Ractor row: the identified Ractors (ids 1..nractors), then one
     * row per thread whose Ractor is not known (rows of unrelated threads
     * never add up). Sized nractors + nviews. */
    int64_t (*ractor_totals)[RPERF_STATE_COUNT];
    long *ractor_threads;
    int nractors;           /* Ractors taken before the cut */
    int nunidentified;      /* rows after them */
    int *unidentified_row;  /* by thread seq - 1: its row's index after nractors + 1, 0 until needed */
    int *unidentified_seq;  /* by that index - 1: the thread's seq */
    rperf_interval_t *open; /* intervals open at the cut */
    size_t open_count, open_cap;
    rperf_slot_view_t *views; /* views[seq - 1] read at the cut; state -1: none */
    int nviews;
    rperf_label_total_t *labels;
    size_t nlabels;
    /* Hash [ractor, waiter, releaser, cause, waiter label, releaser label, stack] => [ns, count] */
    VALUE release_edges;
    VALUE blocked_methods;        /* Hash [thread, cause, label] => [ns, count] */
    uint32_t release_generation;  /* release stacks below it are in the views (rperf_contention_views_end) */
    struct release_row *releases; /* the report's releases by waiter list entry, split by stack at the end */
    size_t nreleases, releases_cap;
    struct release_part *parts; /* the sampler's release stacks of this report */
    size_t nparts, parts_cap;
} build_ctx_t;

/* One entry of a waiter's release list in this report. */
typedef struct release_row {
    int ractor, waiter, release_index, releaser, cause, waiter_label, releaser_label;
    int64_t ns;
    uint64_t count;
} release_row_t;

/* The blocked time of releases of one list entry under one releaser stack. */
typedef struct release_part {
    int waiter, release_index;
    uint32_t stack_id;
    int64_t ns;
    uint64_t count;
} release_part_t;

static const char *const cause_names[RPERF_CAUSE_COUNT] = RPERF_CAUSE_NAMES;

/* The report's Ractor id of a thread, and its row index in
 * ractor_totals (*row; -1 when the thread is not in this report). A
 * Ractor identified after the cut (a hook of another Ractor may take a
 * slot while the report is built) is not in this report's rows: its
 * threads count as unidentified here. */
static int
ractor_row_of(build_ctx_t *ctx, const rperf_thread_slot_t *slot, int *row)
{
    const rperf_ractor_slot_t *r = RPERF_LOAD(slot->ractor);
    if (r && r->id <= ctx->nractors) {
        *row = r->id - 1;
        return r->id;
    }
    *row = -1;
    if (slot->seq > ctx->nviews)
        return 0; /* not in this report */
    int *k = &ctx->unidentified_row[slot->seq - 1];
    if (!*k) {
        ctx->unidentified_seq[ctx->nunidentified] = slot->seq;
        *k = ++ctx->nunidentified;
    }
    *row = ctx->nractors + *k - 1;
    return RPERF_REPORT_UNIDENTIFIED_RACTOR(slot->seq);
}

static int
ractor_id_of(build_ctx_t *ctx, const rperf_thread_slot_t *slot)
{
    int row;
    return ractor_row_of(ctx, slot, &row);
}

/* Threads of the main Ractor that have not held its GVL since the profile
 * began (new threads waiting for their first turn) are found in its
 * Thread.list; threads of other Ractors identify themselves at a RESUMED.
 * Ruby context, before the cut is read (Thread.list allocates). */
static void
identify_main_ractor_threads(void)
{
    rperf_ractor_slot_t *main_ractor = rperf_ractor_by_id(1);
    if (!main_ractor || main_ractor->key != (uintptr_t)rb_thread_main())
        return; /* Thread.list lists the calling Ractor's threads */
    VALUE threads = rb_funcall(rb_cThread, rb_intern("list"), 0);
    for (long i = 0; i < RARRAY_LEN(threads); i++) {
        rperf_thread_slot_t *slot = rperf_slot_find(RARRAY_AREF(threads, i));
        if (slot && !RPERF_LOAD(slot->ractor))
            RPERF_STORE(slot->ractor, main_ractor);
    }
}

static void
push_open(build_ctx_t *ctx, const rperf_thread_slot_t *slot, int state, int64_t from, int64_t to, uint8_t cause,
          int releaser)
{
    if (to <= from)
        return;
    if (rperf_grow_array((void **)&ctx->open, &ctx->open_cap, ctx->open_count + 1, sizeof(*ctx->open), 64) < 0)
        return;
    ctx->open[ctx->open_count++] = (rperf_interval_t){
        .start_ns = from,
        .end_ns = to,
        .thread_seq = slot->seq,
        .label_set_id = RPERF_LOAD(slot->label_set_id),
        .stack_id = -1,
        .releaser_seq = releaser,
        .state = (uint8_t)state,
        .cause = cause,
    };
}

/* The cause of a blocked interval's byte (contention.h). */
static int
interval_cause(int thread_seq, uint8_t byte)
{
    if (!(byte & RPERF_INTERVAL_CAUSE_PENDING))
        return byte < RPERF_CAUSE_COUNT ? byte : RPERF_CAUSE_OTHER;
    int method = byte & ~RPERF_INTERVAL_CAUSE_PENDING;
    const rperf_thread_slot_t *slot = rperf_slot_by_seq(thread_seq);
    if (!slot || method >= RPERF_SLOT_BLOCK_METHODS)
        return RPERF_CAUSE_UNKNOWN;
    return rperf_cause_table_cause(RPERF_LOAD(slot->methods[method].frame));
}

static VALUE
cause_hash(const int64_t by_cause[RPERF_CAUSE_COUNT])
{
    VALUE h = rb_hash_new();
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++) {
        if (by_cause[c] > 0)
            aset(h, cause_names[c], LL2NUM(by_cause[c]));
    }
    return h;
}

static void
add_pair(VALUE hash, VALUE key, int64_t ns, uint64_t count)
{
    VALUE cur = rb_hash_aref(hash, key);
    if (NIL_P(cur)) {
        rb_hash_aset(hash, key, rb_ary_new_from_args(2, LL2NUM(ns), ULL2NUM(count)));
        return;
    }
    rb_ary_store(cur, 0, LL2NUM(NUM2LL(rb_ary_entry(cur, 0)) + ns));
    rb_ary_store(cur, 1, ULL2NUM(NUM2ULL(rb_ary_entry(cur, 1)) + count));
}

/* Makes room for element `count` of a growing array (doubling); 0 or -1. */
static int
room_for_one(void **array, size_t *cap, size_t count, size_t size)
{
    return rperf_grow_array(array, cap, count + 1, size, 64);
}

/* Per thread: blocked time by cause and by method, its release edges and
 * the releasable time no releaser was found for. */
static void
build_thread_causes(build_ctx_t *ctx, VALUE h, const rperf_thread_slot_t *slot, const rperf_slot_view_t *v, int rid)
{
    rperf_slot_cause_delta_t cd;
    rperf_slot_report_methods(slot, ctx->cut.end_ns, v, &cd);
    int64_t by_cause[RPERF_CAUSE_COUNT] = {0};
    int method_cause[RPERF_SLOT_BLOCK_METHODS];
    for (int i = 0; i < v->nmethods; i++) {
        int c = i == 0 ? RPERF_CAUSE_UNKNOWN : rperf_cause_table_cause(v->methods[i].frame);
        method_cause[i] = c;
        by_cause[c] += cd.method_ns[i];
        if (i > 0 && cd.method_ns[i] > 0) {
            VALUE key = rb_ary_new_from_args(3, INT2NUM(slot->seq), INT2NUM(c),
                                             rperf_cause_table_label(v->methods[i].frame));
            add_pair(ctx->blocked_methods, key, cd.method_ns[i], cd.method_count[i]);
        }
    }
    aset(h, "blocked_by_cause", cause_hash(by_cause));
    if (ctx->params->mode == RPERF_PROFILE_COUNTERS)
        return;
    int64_t releasable = 0, released = 0;
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++) {
        if (RPERF_CAUSE_RELEASABLE(c))
            releasable += by_cause[c];
    }
    for (int i = 0; i < v->nreleases; i++) {
        const rperf_release_t *rel = &v->releases[i];
        if (cd.release_ns[i] <= 0 || rel->method < 0 || rel->method >= v->nmethods)
            continue;
        int c = method_cause[rel->method];
        if (!RPERF_CAUSE_RELEASABLE(c))
            continue;
        if (room_for_one((void **)&ctx->releases, &ctx->releases_cap, ctx->nreleases, sizeof(*ctx->releases)) < 0)
            rb_raise(rperf_eResourceError, "rperf: cannot allocate the report");
        ctx->releases[ctx->nreleases++] = (release_row_t){
            .ractor = rid,
            .waiter = slot->seq,
            .release_index = i,
            .releaser = rel->releaser,
            .cause = c,
            .waiter_label = rel->waiter_label,
            .releaser_label = rel->releaser_label,
            .ns = cd.release_ns[i],
            .count = cd.release_count[i],
        };
        released += cd.release_ns[i];
    }
    aset(h, "release_unknown_ns", LL2NUM(releasable > released ? releasable - released : 0));
}

/* Any bytes a program gave its thread become valid UTF-8 here. */
static VALUE
thread_name(VALUE thread)
{
    VALUE name = rb_funcall(thread, rb_intern("name"), 0);
    return RB_TYPE_P(name, T_STRING) ? rperf_utf8_text(name) : rb_utf8_str_new_cstr("");
}

static void
build_thread(rperf_thread_slot_t *slot, void *arg)
{
    build_ctx_t *ctx = arg;
    int64_t delta[RPERF_STATE_COUNT];
    uint64_t acq, waits;
    int64_t start = ctx->cut.start_ns, end = ctx->cut.end_ns;

    if (slot->seq > ctx->nviews || ctx->views[slot->seq - 1].state < 0)
        return; /* after the cut */
    const rperf_slot_view_t v = ctx->views[slot->seq - 1];
    rperf_slot_report_totals(slot, end, &v, delta, &acq, &waits);
    if (v.exited && v.last_seen_ns < start)
        return; /* gone before this interval */
    /* The last clearing cut may have counted it past that cut's end. */
    int64_t from = slot->counted_to_ns > start ? slot->counted_to_ns : start;
    if (v.exited && from > start && v.last_seen_ns <= from)
        return; /* its exit was in the last report */

    int64_t first = v.first_seen_ns > from ? v.first_seen_ns : from;
    int64_t last = rperf_slot_view_counted_to(&v, end);
    if (last < first)
        last = first;

    if (!slot->native_id && !v.exited) {
        VALUE tid = rb_funcall(slot->thread, rb_intern("native_thread_id"), 0);
        if (!NIL_P(tid))
            slot->native_id = NUM2LL(tid);
    }
    int row;
    int rid = ractor_row_of(ctx, slot, &row);

    VALUE h = rb_hash_new();
    aset(h, "seq", INT2NUM(slot->seq));
    aset(h, "name", thread_name(slot->thread));
    aset(h, "native_id", i64(slot->native_id));
    aset(h, "ractor", INT2NUM(rid));
    aset(h, "first_seen_ns", i64(first - start));
    aset(h, "last_seen_ns", i64(last - start));
    aset(h, "exited", v.exited ? Qtrue : Qfalse);
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        aset(h, rperf_report_state_keys[i], i64(delta[i]));
    aset(h, "acquisitions", ULL2NUM(acq));
    aset(h, "waits", ULL2NUM(waits));
    aset(h, "label_set", INT2NUM(RPERF_LOAD(slot->label_set_id)));
    build_thread_causes(ctx, h, slot, &v, rid);
    rb_ary_push(ctx->threads, h);

    if (row >= 0) {
        for (int i = 0; i < RPERF_STATE_COUNT; i++)
            ctx->ractor_totals[row][i] += delta[i];
        ctx->ractor_threads[row]++;
    }

    /* The state open at the cut, split at the cut; or an exited thread's
     * last span, which EXITED charged up to the exit but could not put in
     * the Ractor's timeline (it runs without the GVL): on a busy machine
     * the exiting thread may wait tens of ms for a CPU there. Timeline only. */
    if (rperf_contention_config()->timeline) {
        int64_t from = v.timeline_from_ns;
        int64_t clip = rperf_contention_clip_ns();
        if (from < clip)
            from = clip;
        /* A paused profile's open states end at the pause, as in the totals. */
        int64_t to = v.exited ? v.state_since_ns : rperf_contention_accounting_end(end);
        int m = v.block_method >= 0 && v.block_method < v.nmethods ? v.block_method : 0;
        uint8_t cause = rperf_interval_cause_byte(v.methods[m].frame, m);
        if (v.state == RPERF_STATE_GVL_WAIT && v.ready_ns > from) {
            push_open(ctx, slot, RPERF_STATE_BLOCKED, from, v.ready_ns, cause, v.ready_releaser);
            from = v.ready_ns;
        }
        /* Still blocked at the cut: nobody has released it yet. */
        push_open(ctx, slot, v.state, from, to, v.state == RPERF_STATE_BLOCKED ? cause : 0, 0);
    }
}

struct build_args {
    build_ctx_t *ctx;
    rperf_edge_list_t table, extra;
    rperf_interval_buffer_cursor_t *cursors; /* per Ractor id - 1, begun at the cut */
    int ncursors;
    int consume;                 /* the report takes the intervals out of the rings */
    rperf_interval_runs_t *runs; /* while build_intervals runs (its worker joined by finish) */
};

/* Records decoded and sorted at a time: a timeline of more is sorted a
 * slice at a time into encoded runs, which the report merges as it reads
 * them, so a stop never holds more than two slices of decoded records and
 * their sorts' scratch (5 MiB); 31 runs for a million intervals. */
#define INTERVAL_SLICE 32768

/* Clips the slice's n records to the cut, makes their times relative to
 * the cut's start and resolves their causes, in place; returns how many
 * are kept and adds the rows interval_causes will list to *cause_rows.
 * Done on this thread (the GVL held): a cause may need the slot table. */
static size_t
clip_slice(build_ctx_t *ctx, rperf_interval_t *slice, size_t fill, size_t *cause_rows)
{
    int64_t start = ctx->cut.start_ns, end = ctx->cut.end_ns;
    size_t n = 0, rows = 0;
    for (size_t i = 0; i < fill; i++) {
        rperf_interval_t iv = slice[i];
        if (iv.start_ns < start)
            iv.start_ns = start;
        if (iv.end_ns > end)
            iv.end_ns = end;
        if (iv.end_ns <= iv.start_ns)
            continue;
        iv.start_ns -= start;
        iv.end_ns -= start;
        /* The ring may hold a method index for a cause resolved only now;
         * the report's records carry the cause itself (interval_list.h). */
        int cause = iv.state == RPERF_STATE_BLOCKED ? interval_cause(iv.thread_seq, iv.cause) : RPERF_CAUSE_UNKNOWN;
        iv.cause = (uint8_t)cause;
        if (!RPERF_CAUSE_RELEASABLE(cause))
            iv.releaser_seq = 0;
        rows += (size_t)rperf_interval_json_has_cause(&iv);
        slice[n++] = iv;
    }
    *cause_rows += rows;
    return n;
}

/* The full slice clipped and handed to the sorter; the next slice to fill.
 * NULL when memory ran out. */
static rperf_interval_t *
flush_slice(build_ctx_t *ctx, rperf_interval_runs_t *runs, size_t fill, size_t *cause_rows)
{
    size_t n = clip_slice(ctx, rperf_interval_runs_slice(runs), fill, cause_rows);
    return rperf_interval_runs_submit(runs, n) < 0 ? NULL : rperf_interval_runs_slice(runs);
}

/* The timeline, clipped to the cut, in report order and report units
 * (ns from the cut's start), as an Rperf::Contention::Intervals: the rings
 * read from the cursors collect() began (and emptied as they are read when
 * the report consumes them), then the intervals open at the cut. This
 * thread decodes, clips and sorts a slice while a worker thread encodes
 * the one before (interval_runs.h); nothing here calls Ruby or
 * raises before the worker is joined.
 * *cause_rows: how many of them interval_causes lists. */
static VALUE
build_intervals(build_ctx_t *ctx, struct build_args *a, size_t *cause_rows)
{
    a->runs = rperf_interval_runs_new(INTERVAL_SLICE, 1);
    rperf_interval_t *slice = a->runs ? rperf_interval_runs_slice(a->runs) : NULL;
    size_t fill = 0;
    *cause_rows = 0;
    for (int i = 1; slice && i <= a->ncursors; i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i);
        if (!r)
            continue;
        for (;;) {
            size_t got = rperf_interval_buffer_read(&r->intervals, &a->cursors[i - 1], slice + fill,
                                                    INTERVAL_SLICE - fill);
            fill += got;
            if (a->consume)
                rperf_interval_buffer_consume(&r->intervals, &a->cursors[i - 1]);
            if (fill < INTERVAL_SLICE)
                break;
            slice = flush_slice(ctx, a->runs, fill, cause_rows);
            fill = 0;
            if (!slice)
                break;
        }
    }
    for (size_t i = 0; slice && i < ctx->open_count; i++) {
        slice[fill++] = ctx->open[i];
        if (fill == INTERVAL_SLICE) {
            slice = flush_slice(ctx, a->runs, fill, cause_rows);
            fill = 0;
        }
    }
    if (slice)
        flush_slice(ctx, a->runs, fill, cause_rows);
    rperf_interval_store_t *runs;
    size_t nruns;
    int made = a->runs != NULL;
    int failed = rperf_interval_runs_finish(a->runs, &runs, &nruns) < 0 || !made;
    a->runs = NULL;
#ifdef __GLIBC__
    /* The slices were the largest blocks of this process a moment ago:
     * without a trim glibc keeps megabytes of them at the heap's top. */
    malloc_trim(0);
#endif
    if (failed)
        rb_raise(rperf_eResourceError, "rperf: cannot allocate intervals");
    /* Not merged here: the report keeps the sorted runs and merges them as
     * it reads (interval_list.h). */
    return rperf_interval_list_adopt_runs(runs, nruns);
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
    } else {
        ns = __atomic_load_n(&slot->unknown_edge_ns, __ATOMIC_RELAXED);
        count = __atomic_load_n(&slot->unknown_edge_count, __ATOMIC_RELAXED);
    }
    if (ns <= 0)
        return;
    rperf_edge_t e = {
        .ractor = 0,
        .waiter = slot->seq,
        .holder = 0,
        .waiter_label = RPERF_LOAD(slot->label_set_id),
        .holder_label = 0,
        .kind = RPERF_HOLDER_UNKNOWN,
        .wait_ns = ns,
        .count = count,
    };
    rperf_edge_list_add(u->list, &e);
}

static VALUE
build_edges(build_ctx_t *ctx, rperf_edge_list_t *table, rperf_edge_list_t *extra)
{
    VALUE ary = rb_ary_new();
    rperf_edge_list_t *lists[2] = {table, extra};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->count; i++) {
            const rperf_edge_t *e = &lists[l]->items[i];
            if (e->wait_ns <= 0)
                continue;
            int rid = e->ractor;
            if (rid == 0 || rid > ctx->nractors) {
                rperf_thread_slot_t *w = rperf_slot_by_seq(e->waiter);
                rid = w ? ractor_id_of(ctx, w) : 0;
                if (rid == 0)
                    continue; /* a waiter after the cut */
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
    int n = ctx->nractors + ctx->nunidentified;
    for (int i = 0; i < n; i++) {
        VALUE h = rb_hash_new();
        rperf_ractor_slot_t *r = i < ctx->nractors ? rperf_ractor_by_id(i + 1) : NULL;
        int id = i < ctx->nractors ? i + 1
                                   : RPERF_REPORT_UNIDENTIFIED_RACTOR(ctx->unidentified_seq[i - ctx->nractors]);
        aset(h, "id", INT2NUM(id));
        aset(h, "main", (r && r->main) ? Qtrue : Qfalse);
        /* Additions (minor): per-Ractor totals, and a row of its own for
         * each thread whose Ractor is not known. */
        aset(h, "identified", i < ctx->nractors ? Qtrue : Qfalse);
        aset(h, "threads", LONG2NUM(ctx->ractor_threads[i]));
        for (int s = 0; s < RPERF_STATE_COUNT; s++)
            aset(h, rperf_report_state_keys[s], i64(ctx->ractor_totals[i][s]));
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
        for (int s = 0; s < RPERF_STATE_COUNT; s++)
            aset(h, rperf_report_state_keys[s], i64(row->totals[s]));
        aset(h, "blocked_by_cause", cause_hash(row->causes));
        rb_ary_push(ary, h);
    }
    return ary;
}

/* Each stat from its counter in build_stats (`ss`, `cs`); REGISTRY's is the
 * label-set registry's, which lib/ writes over the 0. */
#define STAT_FROM_SAMPLER(name) ss.name
#define STAT_FROM_CONTENTION(name) cs.name
#define STAT_FROM_REGISTRY(name) 0
#define SET_STAT(name, counter) aset(h, #name, ULL2NUM(STAT_FROM_##counter(name)));

static VALUE
build_stats(const rperf_report_params_t *params)
{
    rperf_contention_stats_t cs;
    rperf_contention_get_stats(&cs);
    VALUE h = rb_hash_new();
    rperf_sampler_stats_t ss;
    memset(&ss, 0, sizeof(ss));
    /* A sampler that did not run this profile may still hold the counters
     * of an earlier one. */
    if (params->mode != RPERF_PROFILE_COUNTERS)
        rperf_sampler_get_stats(&ss);
    RPERF_REPORT_STATS(SET_STAT)
    return h;
}

/* Counters mode: the sampler's part of the shape, empty; the frame table
 * still starts with the synthetic frames every report has. */
static void
fill_without_samples(VALUE report)
{
    static const char *const paths[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_PATHS;
    static const char *const labels[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_LABELS;
    VALUE frames = rb_ary_new_capa(RPERF_SYNTHETIC_FRAMES);
    for (int i = 0; i < RPERF_SYNTHETIC_FRAMES; i++)
        rb_ary_push(frames, rb_ary_new_from_args(2, rb_str_new_cstr(paths[i]), rb_str_new_cstr(labels[i])));
    aset(report, "frames", frames);
    aset(report, "stacks", rb_ary_new());
    aset(report, "samples", rb_ary_new());
    aset(report, "blame", rb_ary_new());
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
build_meta(const rperf_report_params_t *params, const rperf_cut_t *cut, int clear)
{
    VALUE h = rb_hash_new();
    aset(h, "tool", rb_str_new_cstr("rperf-gvl"));
    VALUE version = rb_const_defined(params->module, rb_intern("VERSION"))
                        ? rb_const_get(params->module, rb_intern("VERSION"))
                        : rb_str_new_cstr("0.0.0");
    aset(h, "tool_version", version);
    aset(h, "ruby_version", rb_const_get(rb_cObject, rb_intern("RUBY_VERSION")));
    aset(h, "pid", INT2NUM((int)getpid()));
    VALUE program = rb_gv_get("$0");
    aset(h, "program", NIL_P(program) ? rb_utf8_str_new_cstr("") : rperf_utf8_text(rb_obj_as_string(program)));
    /* Counters mode measures wall-clock time and samples nothing. */
    aset(h, "mode", rb_str_new_cstr(params->mode == RPERF_PROFILE_CPU ? "cpu" : "wall"));
    aset(h, "frequency", INT2NUM(params->frequency));
    aset(h, "recording", rb_str_new_cstr(params->mode == RPERF_PROFILE_COUNTERS ? "counters" : "full"));
    aset(h, "start_time_ns", i64(cut->start_realtime_ns));
    aset(h, "start_monotonic_ns", i64(cut->start_ns));
    int64_t duration = cut->end_ns - cut->start_ns;
    aset(h, "duration_ns", i64(duration > 0 ? duration : 1));
    aset(h, "sequence", INT2NUM(report_sequence(clear)));
    return h;
}


static void
read_view(rperf_thread_slot_t *slot, void *arg)
{
    build_ctx_t *ctx = arg;
    if (slot->seq <= ctx->nviews)
        rperf_slot_read(slot, &ctx->views[slot->seq - 1]);
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
     * between shows up as a later open start, never as an overlap. The
     * rings are only marked here (a cursor per Ractor ends at what they
     * hold now); build_intervals decodes them a slice at a time. */
    a->consume = consume;
    a->ncursors = ctx->nractors;
    a->cursors = calloc((size_t)(ctx->nractors ? ctx->nractors : 1), sizeof(*a->cursors));
    ctx->nviews = rperf_slot_count();
    ctx->views = malloc((size_t)(ctx->nviews ? ctx->nviews : 1) * sizeof(rperf_slot_view_t));
    if (!a->cursors || !ctx->views)
        rb_raise(rperf_eResourceError, "rperf: cannot allocate the report");
    for (int i = 1; i <= ctx->nractors; i++) {
        rperf_ractor_slot_t *r = rperf_ractor_by_id(i);
        if (r)
            rperf_interval_buffer_begin(&r->intervals, &a->cursors[i - 1]);
    }
    for (int i = 0; i < ctx->nviews; i++)
        ctx->views[i].state = -1;
#ifdef RPERF_STALL_EVENTS
    /* Test builds only: a cut preempted between its clock read and its
     * views, so events after the cut show in them (rperf_slot_view_counted_to). */
    struct timespec stall = {0, 300000};
    nanosleep(&stall, NULL);
#endif
    rperf_contention_views_begin(ctx->clear && !ctx->cut.final ? ctx->cut.end_ns : 0);
    rperf_slots_foreach(read_view, ctx);
    ctx->release_generation = rperf_contention_views_end();

    rperf_contention_flush_labels(ctx->cut.end_ns);
    ctx->labels = rperf_contention_label_totals(&ctx->nlabels, ctx->clear);

    if (rperf_contention_cut_edges(&ctx->cut, ctx->views, ctx->nviews, ctx->clear, &a->table) < 0)
        rb_raise(rperf_eResourceError, "rperf: cannot copy wait edges");
    rperf_contention_cut_open_waits(&ctx->cut, ctx->views, ctx->nviews, &a->extra);
    unknown_ctx_t u = {ctx, &a->extra, consume};
    rperf_slots_foreach(collect_unknown, &u);
}

/* The sampler's release stacks of this report (rperf_sampler_each_release_stack
 * callback, drain mutex held: C memory only). */
static void
collect_release_part(int waiter_seq, int release_index, uint32_t stack_id, int64_t ns, uint64_t count, void *arg)
{
    build_ctx_t *ctx = arg;
    if (room_for_one((void **)&ctx->parts, &ctx->parts_cap, ctx->nparts, sizeof(*ctx->parts)) < 0)
        return; /* rows without the rest of the stacks: never a wrong one */
    ctx->parts[ctx->nparts++] = (release_part_t){
        .waiter = waiter_seq, .release_index = release_index, .stack_id = stack_id, .ns = ns, .count = count};
}

static int
cmp_part(const void *a, const void *b)
{
    const release_part_t *x = a, *y = b;
    if (x->waiter != y->waiter)
        return x->waiter < y->waiter ? -1 : 1;
    if (x->release_index != y->release_index)
        return x->release_index < y->release_index ? -1 : 1;
    return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static void
add_release_edge(build_ctx_t *ctx, const release_row_t *r, long stack, int64_t ns, uint64_t count)
{
    VALUE key = rb_ary_new_from_args(7, INT2NUM(r->ractor), INT2NUM(r->waiter), INT2NUM(r->releaser),
                                     INT2NUM(r->cause), INT2NUM(r->waiter_label), INT2NUM(r->releaser_label),
                                     LONG2NUM(stack));
    add_pair(ctx->release_edges, key, ns, count);
}

/* The release edges, each split by the releaser's stacks: a list entry's
 * stacks sum to its time (the same releases, captured at READY), and what
 * has no stack (a full buffer, a finishing thread) stays a row without one.
 * Should the stacks ever exceed the entry's time, the entry keeps none. */
static void
build_release_edges(build_ctx_t *ctx)
{
    if (ctx->nreleases)
        rperf_sampler_each_release_stack(ctx->release_generation, collect_release_part, ctx);
    if (ctx->nparts > 1)
        qsort(ctx->parts, ctx->nparts, sizeof(*ctx->parts), cmp_part);
    for (size_t n = 0; n < ctx->nreleases; n++) {
        const release_row_t *r = &ctx->releases[n];
        release_part_t want = {.waiter = r->waiter, .release_index = r->release_index, .stack_id = 0};
        size_t p = 0, hi = ctx->nparts; /* the first part not below `want` */
        while (p < hi) {
            size_t mid = p + (hi - p) / 2;
            if (cmp_part(&ctx->parts[mid], &want) < 0)
                p = mid + 1;
            else
                hi = mid;
        }
        size_t end = p;
        int64_t stacked = 0;
        uint64_t stacked_count = 0;
        for (; end < ctx->nparts && ctx->parts[end].waiter == r->waiter &&
               ctx->parts[end].release_index == r->release_index;
             end++) {
            stacked += ctx->parts[end].ns;
            stacked_count += ctx->parts[end].count;
        }
        if (stacked > r->ns || stacked_count > r->count) {
            add_release_edge(ctx, r, -1, r->ns, r->count);
            continue;
        }
        /* Parts of one stack from several generations fold into one row. */
        for (; p < end; p++)
            add_release_edge(ctx, r, (long)ctx->parts[p].stack_id, ctx->parts[p].ns, ctx->parts[p].count);
        if (r->ns > stacked || r->count > stacked_count)
            add_release_edge(ctx, r, -1, r->ns - stacked, r->count - stacked_count);
    }
}

/* Rows of a Hash of keys => [ns, count] (build_thread_causes): each key
 * item under its name (`cause` items as cause names, a negative
 * `releaser_stack` left out), then `ns_key` and "count". */
static VALUE
rows_of_pairs(VALUE pairs, const char *const *names, int nnames, const char *ns_key)
{
    VALUE ary = rb_ary_new();
    VALUE keys = rb_funcall(pairs, rb_intern("keys"), 0);
    for (long i = 0; i < RARRAY_LEN(keys); i++) {
        VALUE k = rb_ary_entry(keys, i);
        VALUE val = rb_hash_aref(pairs, k);
        VALUE h = rb_hash_new();
        for (int n = 0; n < nnames; n++) {
            VALUE item = rb_ary_entry(k, n);
            if (strcmp(names[n], "cause") == 0)
                item = rb_str_new_cstr(cause_names[NUM2INT(item)]);
            if (strcmp(names[n], "releaser_stack") == 0 && NUM2LONG(item) < 0)
                continue;
            aset(h, names[n], item);
        }
        aset(h, ns_key, rb_ary_entry(val, 0));
        aset(h, "count", rb_ary_entry(val, 1));
        rb_ary_push(ary, h);
    }
    return ary;
}

static const char *const release_edge_keys[] = {"ractor",        "waiter",           "releaser",
                                                "cause",         "waiter_label_set", "releaser_label_set",
                                                "releaser_stack"};
static const char *const blocked_method_keys[] = {"thread", "cause", "method"};

static VALUE
build_report_body(VALUE arg)
{
    struct build_args *a = (struct build_args *)arg;
    build_ctx_t *ctx = a->ctx;
    /* Names every method blocked so far (it allocates: before the cut is
     * read); later ones are named while the report is written. */
    rperf_cause_table_resolve_all();
    identify_main_ractor_threads();
    collect(a);
    size_t rows = (size_t)ctx->nractors + (size_t)ctx->nviews + 1;
    ctx->ractor_totals = calloc(rows, sizeof(*ctx->ractor_totals));
    ctx->ractor_threads = calloc(rows, sizeof(long));
    ctx->unidentified_row = calloc((size_t)ctx->nviews + 1, sizeof(int));
    ctx->unidentified_seq = calloc((size_t)ctx->nviews + 1, sizeof(int));
    if (!ctx->ractor_totals || !ctx->ractor_threads || !ctx->unidentified_row || !ctx->unidentified_seq)
        rb_raise(rperf_eResourceError, "rperf: cannot allocate the report");

    VALUE report = rb_hash_new();
    aset(report, "format", rb_str_new_cstr("rperf-gvl-report"));
    aset(report, "version", INT2FIX(RPERF_REPORT_VERSION));
    aset(report, "minor", INT2FIX(RPERF_REPORT_MINOR));
    VALUE names = rb_ary_new_capa(RPERF_CAUSE_COUNT);
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++)
        rb_ary_push(names, rb_str_new_cstr(cause_names[c]));
    aset(report, "causes", names);
    ctx->release_edges = rb_hash_new();
    ctx->blocked_methods = rb_hash_new();
    aset(report, "meta", build_meta(ctx->params, &ctx->cut, ctx->clear && !ctx->cut.final));

    ctx->threads = rb_ary_new();
    rperf_slots_foreach(build_thread, ctx);

    aset(report, "stats", build_stats(ctx->params));
    aset(report, "threads", ctx->threads);
    VALUE empty = rb_hash_new();
    VALUE set0 = rb_hash_new();
    aset(set0, "id", INT2FIX(0));
    aset(set0, "labels", empty);
    aset(report, "label_sets", rb_ary_new3(1, set0));
    aset(report, "label_totals", build_label_totals(ctx));
    size_t cause_rows;
    VALUE intervals = build_intervals(ctx, a, &cause_rows);
    aset(report, "intervals", intervals);
    aset(report, "edges", build_edges(ctx, &a->table, &a->extra));
    aset(report, "blocked_methods", rows_of_pairs(ctx->blocked_methods, blocked_method_keys, 3, "blocked_ns"));
    if (ctx->params->mode != RPERF_PROFILE_COUNTERS) {
        aset(report, "interval_causes", rperf_interval_list_causes(intervals, cause_rows));
        build_release_edges(ctx);
        aset(report, "blocked_edges", rows_of_pairs(ctx->release_edges, release_edge_keys, 7, "blocked_ns"));
    }
    aset(report, "ractors", build_ractors(ctx));
    if (ctx->params->mode == RPERF_PROFILE_COUNTERS)
        fill_without_samples(report);
    else
        rperf_sampler_fill_report(report);
    if (ctx->clear && !ctx->cut.final) {
        /* The next report starts at this cut, from these very views. */
        int64_t end = ctx->cut.end_ns;
        int64_t realtime = rperf_realtime_ns() - (rperf_now_ns() - end);
        rperf_contention_begin_interval(end, realtime, ctx->views, ctx->nviews);
        if (ctx->params->sampler_running)
            rperf_sampler_clear();
    }
    return report;
}

static VALUE
build_report_cleanup(VALUE arg)
{
    struct build_args *a = (struct build_args *)arg;
    free(a->cursors);
    rperf_interval_store_t *runs;
    size_t nruns;
    rperf_interval_runs_finish(a->runs, &runs, &nruns); /* joins a worker left by an exception */
    for (size_t i = 0; i < nruns; i++)
        rperf_interval_store_free(&runs[i]);
    free(runs);
    rperf_edge_list_free(&a->table);
    rperf_edge_list_free(&a->extra);
    free(a->ctx->open);
    free(a->ctx->views);
    free(a->ctx->labels);
    free(a->ctx->ractor_totals);
    free(a->ctx->ractor_threads);
    free(a->ctx->unidentified_row);
    free(a->ctx->unidentified_seq);
    free(a->ctx->releases);
    free(a->ctx->parts);
    return Qnil;
}

VALUE
rperf_report_build(const rperf_report_params_t *params, int final, int clear, int64_t end_ns)
{
    build_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    ctx.params = params;
    ctx.cut.start_ns = rperf_contention_interval_start();
    ctx.cut.start_realtime_ns = rperf_contention_interval_start_realtime();
    ctx.cut.end_ns = end_ns;
    ctx.cut.final = final;
    ctx.clear = clear;
    ctx.nractors = rperf_ractor_count();
    struct build_args a;
    memset(&a, 0, sizeof(a));
    a.ctx = &ctx;
    return rb_ensure(build_report_body, (VALUE)&a, build_report_cleanup, (VALUE)&a);
}
