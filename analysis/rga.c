/* rga.c — dispatch from a view name to the model builders and writers.
 *
 * Owns nothing long-lived: each call builds the filter and the view model,
 * writes, and frees them. Loading is report_load.c's job.
 */
#include "rga.h"
#include "collapsed_writer.h"
#include "critical_path.h"
#include "dot_writer.h"
#include "filter.h"
#include "html_writer.h"
#include "output.h"
#include "perfetto_writer.h"
#include "pprof_writer.h"
#include "profile_model.h"
#include "render.h"
#include "speedscope_writer.h"
#include "summary.h"
#include "summary_json.h"
#include "timeline.h"
#include "top_text.h"
#include "units.h"
#include "waitgraph.h"

#include <string.h>

static const char *const views[] = {"summary",  "timeline", "dot",  "svg",           "png",
                                    "perfetto", "json",     "html", "critical_path", "critical_path_json"};
static const char *const profile_views[] = {"pprof", "collapsed", "speedscope", "top"};

static int
in_list(const char *view, const char *const *list, size_t n)
{
    for (size_t i = 0; view && i < n; i++)
        if (strcmp(list[i], view) == 0)
            return 1;
    return 0;
}

int
rga_view_is_profile(const char *view)
{
    return in_list(view, profile_views, sizeof(profile_views) / sizeof(profile_views[0]));
}

/* A --from at or past the end of the report selects nothing: the timeline
 * and Perfetto views refuse it alike (the empty range --to before --from is
 * refused where the options are read). */
static rga_status_t
check_window(const rga_report_t *r, int64_t from_ns, rga_error_t *err)
{
    int64_t end = rga_report_end_ns(r);
    if (from_ns < end)
        return RGA_OK;
    char from[32], len[32];
    rga_format_duration(from_ns, from, sizeof(from));
    rga_format_duration(end, len, sizeof(len));
    return rga_error_set(err, RGA_ERR_ARGUMENT, "--from %s is at or past the end of the report (%s)", from, len);
}

/* --blame: NULL, "direct" or "root". */
static rga_status_t
check_blame(const char *blame, rga_error_t *err)
{
    if (!blame || strcmp(blame, "direct") == 0 || strcmp(blame, "root") == 0)
        return RGA_OK;
    return rga_error_set(err, RGA_ERR_ARGUMENT, "--blame %s: expected direct or root", blame);
}

static bool
blame_root(const char *blame)
{
    return blame && strcmp(blame, "root") == 0;
}

/* The views that read samples: one model, then the view's writer. */
static rga_status_t
render_profile(const rga_report_t *r, const rga_filter_t *filter, const char *view, const rga_view_opts_t *opts,
               FILE *out, rga_error_t *err)
{
    rga_profile_t p;
    rga_status_t st = check_blame(opts->blame, err);
    if (st != RGA_OK)
        return st;
    rga_profile_weight_t weight = !opts->blame              ? RGA_WEIGHT_SAMPLES
                                  : blame_root(opts->blame) ? RGA_WEIGHT_ROOT
                                                            : RGA_WEIGHT_DIRECT;
    st = rga_profile_build_weighted(r, filter, weight, &p, err);
    if (st != RGA_OK)
        return st;
    if (strcmp(view, "pprof") == 0) {
        st = rga_pprof_write(&p, out, err);
    } else if (strcmp(view, "collapsed") == 0) {
        rga_collapsed_opts_t co = {(opts->roots & RGA_ROOT_THREAD) != 0, (opts->roots & RGA_ROOT_LABEL) != 0};
        st = rga_collapsed_write(&p, &co, out, err);
    } else if (strcmp(view, "speedscope") == 0) {
        st = rga_speedscope_write(&p, out, err);
    } else {
        rga_top_t t;
        st = rga_top_build(&p, &t, err);
        if (st == RGA_OK) {
            st = rga_top_write_text(&t, opts->top, opts->color != 0, out, err);
            rga_top_free(&t);
        }
    }
    rga_profile_free(&p);
    return st;
}

/* One thread's or label's critical path, as text or JSON. */
static rga_status_t
render_critical_path(const rga_report_t *r, const char *view, const rga_view_opts_t *opts, FILE *out,
                     rga_error_t *err)
{
    rga_cp_spec_t spec = {opts->critical_path, opts->from_ns, opts->to_ns, false, 0};
    rga_critical_path_t p;
    rga_status_t st = rga_critical_path_build(r, &spec, &p, err);
    if (st != RGA_OK)
        return st;
    if (strcmp(view, "critical_path_json") == 0) {
        st = rga_critical_path_write_json(&p, out, err);
    } else {
        rga_cp_text_opts_t to = {opts->color != 0, opts->top, opts->columns > 0 ? (size_t)opts->columns : 0};
        st = rga_critical_path_write_text(&p, out, &to, err);
    }
    rga_critical_path_free(&p);
    return st;
}

int
rga_view_known(const char *view)
{
    return in_list(view, views, sizeof(views) / sizeof(views[0])) || rga_view_is_profile(view);
}

rga_status_t
rga_render_report(const rga_report_t *r, const char *view, const rga_view_opts_t *opts, FILE *out, rga_error_t *err)
{
    static const rga_view_opts_t defaults = {0};
    if (!opts)
        opts = &defaults;
    if (!rga_view_known(view))
        return rga_error_set(err, RGA_ERR_ARGUMENT,
                             "unknown view \"%s\" (summary, timeline, dot, svg, png, perfetto, json, pprof, "
                             "collapsed, speedscope, top, html, critical_path, critical_path_json)",
                             view ? view : "(null)");
    rga_filter_spec_t spec = {opts->thread, (long long)opts->ractor, opts->labels, opts->n_labels, opts->state};
    rga_filter_t filter;
    rga_status_t st = rga_filter_init(&filter, r, &spec, err);
    if (st != RGA_OK)
        return st;
    if (rga_view_is_profile(view)) {
        st = render_profile(r, &filter, view, opts, out, err);
    } else if (strcmp(view, "summary") == 0 || strcmp(view, "json") == 0) {
        rga_summary_t s;
        st = rga_summary_build(r, &filter, &s, err);
        if (st == RGA_OK) {
            rga_summary_text_opts_t to = {opts->color != 0, opts->top,
                                          opts->columns > 0 ? (size_t)opts->columns : 0};
            st = view[0] == 's' ? rga_summary_write_text(&s, out, &to, err) : rga_summary_write_json(&s, out, err);
            rga_summary_free(&s);
        }
    } else if ((strcmp(view, "timeline") == 0 || strcmp(view, "perfetto") == 0) &&
               (st = check_window(r, opts->from_ns, err)) != RGA_OK) {
        /* the window lies past the report: no view of it */
    } else if (strcmp(view, "timeline") == 0) {
        rga_timeline_t t;
        size_t width = opts->width > 0 ? (size_t)opts->width : 100;
        st = rga_timeline_build(r, &filter, opts->from_ns, opts->to_ns, width, &t, err);
        if (st == RGA_OK) {
            rga_timeline_text_opts_t to = {opts->color != 0, opts->ascii != 0};
            st = rga_timeline_write_text(&t, out, &to, err);
            rga_timeline_free(&t);
        }
    } else if (strcmp(view, "perfetto") == 0) {
        st = rga_perfetto_write(r, &filter, opts->from_ns, opts->to_ns, out, err);
    } else if (strcmp(view, "html") == 0) {
        st = rga_html_write(r, &filter, out, err);
    } else if (strncmp(view, "critical_path", 13) == 0) {
        st = render_critical_path(r, view, opts, out, err);
    } else {
        rga_group_by_t by;
        rga_edge_kinds_t kinds;
        if (!rga_group_by_parse(opts->by, &by)) {
            st = rga_error_set(err, RGA_ERR_ARGUMENT, "--by %s: expected thread, label or ractor", opts->by);
        } else if (!rga_edge_kinds_parse(opts->edges, &kinds)) {
            st = rga_error_set(err, RGA_ERR_ARGUMENT, "--edges %s: expected gvl, blocked or all", opts->edges);
        } else if ((st = check_blame(opts->blame, err)) == RGA_OK) {
            rga_waitgraph_t g;
            double share = opts->min_share_set ? opts->min_share : -1.0;
            /* The root graph follows every wait: GVL and blocked unless --edges says which. */
            if (blame_root(opts->blame))
                st = rga_waitgraph_build_roots(r, &filter, by, opts->edges ? kinds : RGA_EDGES_ALL, share, &g, err);
            else
                st = rga_waitgraph_build_kinds(r, &filter, by, kinds, share, &g, err);
            if (st == RGA_OK) {
                st = strcmp(view, "dot") == 0 ? rga_dot_write(&g, out, err) : rga_graph_render(&g, view, out, err);
                rga_waitgraph_free(&g);
            }
        }
    }
    rga_filter_free(&filter);
    return st;
}

/* The start both entry points share: empty outputs, and unknown views
 * refused before any work. */
static rga_status_t
begin_render(const char *view, char **out, size_t *out_len, rga_error_t *err)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    rga_error_clear(err);
    if (!rga_view_known(view))
        return rga_error_set(err, RGA_ERR_ARGUMENT, "unknown view \"%s\"", view ? view : "(null)");
    return RGA_OK;
}

int
rga_render_loaded(const rga_report_t *r, const char *view, const rga_view_opts_t *opts, char **out, size_t *out_len,
                  rga_error_t *err)
{
    rga_status_t st = begin_render(view, out, out_len, err);
    if (st != RGA_OK)
        return st;
    rga_output_t o;
    st = rga_output_open(&o, RGA_OUTPUT_MEMORY, err);
    if (st == RGA_OK) {
        rga_status_t wst = rga_render_report(r, view, opts, o.fp, err);
        st = rga_output_close(&o, wst == RGA_OK ? out : NULL, out_len, wst == RGA_OK ? err : NULL);
        if (wst != RGA_OK)
            st = wst;
    }
    return st;
}

int
rga_render(const char *json, size_t len, const char *view, const rga_view_opts_t *opts, char **out, size_t *out_len,
           rga_error_t *err)
{
    rga_status_t st = begin_render(view, out, out_len, err);
    if (st != RGA_OK)
        return st;
    rga_report_t *r = NULL;
    st = rga_report_load_buffer(json ? json : "", json ? len : 0, NULL, &r, err);
    if (st != RGA_OK)
        return st;
    st = rga_render_loaded(r, view, opts, out, out_len, err);
    rga_report_free(r);
    return st;
}
