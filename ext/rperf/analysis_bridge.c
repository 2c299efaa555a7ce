/*
 * analysis_bridge.c — the Ruby methods that hand reports to the analysis
 * library (analysis/rga.h): _c_parse_report, _c_parsed_intervals,
 * _c_render and _c_metrics_render. Errors become Rperf's error classes.
 *
 * It does NOT record anything or touch the profiler's state, and does NOT
 * choose views or options (lib/rperf/report.rb does). In a build without
 * the analysis library each method raises UnsupportedError.
 */
#include <ruby.h>
#include <ruby/thread.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_bridge.h"
#include "errors.h"
#include "interval_list.h"
#include "ruby_opts.h"
#ifdef RPERF_HAVE_ANALYSIS
#include "metrics.h"
#include "output.h"
#include "rga.h"
#endif


#ifdef RPERF_HAVE_ANALYSIS
/* A report parsed by the analysis module, kept by Report so that every
 * rendering after the first skips the parse. */
typedef struct parsed_report {
    rga_report_t *report;
    size_t json_bytes; /* the model's size is about this much */
} parsed_report_t;

static void
parsed_report_free(void *ptr)
{
    parsed_report_t *p = ptr;
    if (p->report)
        rga_report_free(p->report);
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
    .function = {.dmark = NULL, .dfree = parsed_report_free, .dsize = parsed_report_memsize},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* klass for a report that cannot be read; rendering failures are
 * RenderError, and a bad option value ArgumentError. */
static VALUE
raise_analysis_error(VALUE klass, const rga_error_t *err)
{
    char msg[768];
    rga_error_format(err, msg, sizeof(msg));
    if (err->code == RGA_ERR_ARGUMENT)
        klass = rb_eArgError;
    else if (err->code == RGA_ERR_NOMEM)
        klass = rperf_eResourceError;
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
    rga_status_t st = rga_report_load_buffer(RSTRING_PTR(json), (size_t)RSTRING_LEN(json), NULL, &p->report, &err);
    RB_GC_GUARD(json);
    if (st != RGA_OK)
        raise_analysis_error(rperf_eReportError, &err);
    p->json_bytes = (size_t)RSTRING_LEN(json);
    return obj;
#else
    rb_raise(rperf_eUnsupportedError, "rperf: this build has no analysis module");
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
    if (!r->intervals_text_length)
        return Qnil;
    size_t n = r->n_intervals;
    rperf_interval_store_t store;
    rperf_interval_store_init(&store);
    for (size_t i = 0; i < n; i++) {
        const rga_interval_t *iv = &r->intervals[i];
        if (r->threads[iv->thread_index].seq > INT32_MAX || iv->label_set > INT32_MAX) {
            /* Valid JSON, but beyond what this process records: Ruby reads it. */
            rperf_interval_store_free(&store);
            return Qnil;
        }
        rperf_interval_t rec = {
            .start_ns = iv->start_ns,
            .end_ns = iv->end_ns,
            .thread_seq = (int32_t)r->threads[iv->thread_index].seq,
            .label_set_id = (int32_t)iv->label_set,
            .stack_id = iv->stack,
            .state = iv->state,
        };
        if (rperf_interval_store_append(&store, &rec) < 0) {
            rperf_interval_store_free(&store);
            rb_raise(rperf_eResourceError, "rperf: cannot allocate the timeline");
        }
    }
    VALUE list = rperf_interval_list_adopt(&store);
    return rb_ary_new_from_args(3, SIZET2NUM(r->intervals_text_offset), SIZET2NUM(r->intervals_text_length), list);
#else
    (void)parsed;
    rb_raise(rperf_eUnsupportedError, "rperf: this build has no analysis module");
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
    o.width = (int)rperf_opt_long(opts, "width", 0);
    o.color = RTEST(rperf_opt(opts, "color"));
    o.ascii = RTEST(rperf_opt(opts, "ascii"));
    VALUE by = rperf_opt_str(opts, "by");
    o.by = NIL_P(by) ? NULL : StringValueCStr(by);
    VALUE edges = rperf_opt_str(opts, "edges");
    o.edges = NIL_P(edges) ? NULL : StringValueCStr(edges);
    VALUE share = rperf_opt(opts, "min_share");
    o.min_share = NIL_P(share) ? 0.0 : NUM2DBL(share);
    o.min_share_set = !NIL_P(share);
    o.from_ns = rperf_opt_long(opts, "from_ns", 0);
    o.to_ns = rperf_opt_long(opts, "to_ns", 0);
    VALUE thread = rperf_opt_str(opts, "thread");
    o.thread = NIL_P(thread) ? NULL : StringValueCStr(thread);
    o.ractor = rperf_opt_long(opts, "ractor", 0);
    o.top = (size_t)rperf_opt_long(opts, "top", 0);
    VALUE state = rperf_opt_str(opts, "state");
    o.state = NIL_P(state) ? NULL : StringValueCStr(state);
    VALUE critical_path = rperf_opt_str(opts, "critical_path");
    o.critical_path = NIL_P(critical_path) ? NULL : StringValueCStr(critical_path);
    VALUE blame = rperf_opt_str(opts, "blame");
    o.blame = NIL_P(blame) ? NULL : StringValueCStr(blame);
    o.roots = (RTEST(rperf_opt(opts, "thread_root")) ? RGA_ROOT_THREAD : 0u) |
              (RTEST(rperf_opt(opts, "label_root")) ? RGA_ROOT_LABEL : 0u);
    VALUE labels = rperf_opt(opts, "labels");
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
    RB_GC_GUARD(edges);
    RB_GC_GUARD(critical_path);
    RB_GC_GUARD(blame);
    RB_GC_GUARD(parsed);
    if (rc != 0)
        raise_analysis_error(rperf_eRenderError, &err);
    VALUE result = rb_str_new(out, (long)out_len);
    free(out);
    return result;
#else
    (void)parsed;
    (void)opts;
    rb_raise(rperf_eUnsupportedError, "rperf: this build has no analysis module");
    return Qnil;
#endif
}

#ifdef RPERF_HAVE_ANALYSIS
typedef struct metrics_call {
    const char *dir;
    unsigned flags;
    rga_status_t status;
    rga_error_t err;
    char *text;
    size_t len;
} metrics_call_t;

/* Without the GVL: reading the directory may wait for another process's fold. */
static void *
metrics_render_nogvl(void *arg)
{
    metrics_call_t *c = arg;
    rga_output_t out;
    c->status = rga_output_open(&out, RGA_OUTPUT_MEMORY, &c->err);
    if (c->status != RGA_OK)
        return NULL;
    c->status = rga_metrics_render_dir(c->dir, c->flags, out.fp, &c->err);
    if (c->status != RGA_OK) {
        rga_output_discard(&out);
        return NULL;
    }
    c->status = rga_output_close(&out, &c->text, &c->len, &c->err);
    return NULL;
}
#endif

/* _c_metrics_render(dir, flags) — the exposition of a metrics directory
 * (flags: metrics.h's RGA_METRICS_*). */
static VALUE
rb_rperf_metrics_render(VALUE self, VALUE dir, VALUE flags)
{
    (void)self;
    FilePathValue(dir);
#ifdef RPERF_HAVE_ANALYSIS
    metrics_call_t c;
    memset(&c, 0, sizeof(c));
    c.dir = StringValueCStr(dir);
    c.flags = NUM2UINT(flags);
    rb_thread_call_without_gvl(metrics_render_nogvl, &c, RUBY_UBF_IO, NULL);
    RB_GC_GUARD(dir);
    if (c.status != RGA_OK) {
        free(c.text);
        raise_analysis_error(rperf_eReportError, &c.err);
    }
    VALUE result = rb_utf8_str_new(c.text, (long)c.len);
    free(c.text);
    return result;
#else
    (void)flags;
    rb_raise(rperf_eUnsupportedError, "rperf: this build has no analysis module");
    return Qnil;
#endif
}

void
rperf_analysis_bridge_define(VALUE mRperf)
{
    rb_define_module_function(mRperf, "_c_parse_report", rb_rperf_parse_report, 1);
    rb_define_module_function(mRperf, "_c_parsed_intervals", rb_rperf_parsed_intervals, 1);
    rb_define_module_function(mRperf, "_c_render", rb_rperf_render, 3);
    rb_define_module_function(mRperf, "_c_metrics_render", rb_rperf_metrics_render, 2);
}
