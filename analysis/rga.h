/* rga.h — the one entry point of the rperf-gvl analysis library.
 *
 * The Ruby extension compiles the analysis sources (all but main.c) into itself and
 * calls rga_render(); the CLI calls rga_render_report() on reports it loaded
 * and merged itself. Both produce exactly the bytes the CLI prints.
 *
 * Views:
 *   "summary"  text tables: threads, Ractors, label sets, top waiters/holders,
 *              top wait and blame stacks (summary.h)
 *   "timeline" per-thread terminal timeline (timeline.h)
 *   "dot"      wait graph as Graphviz DOT, written by cgraph (dot_writer.h)
 *   "svg"      the wait graph laid out by Graphviz dot and rendered (render.h);
 *              "png" works the same way (binary output)
 *   "perfetto" Chrome trace-event JSON for the Perfetto UI (perfetto_writer.h)
 *   "json"     the summary as JSON (summary_json.h)
 *   "pprof"    the samples as a gzip'd pprof profile (pprof_writer.h; binary)
 *   "collapsed" folded stacks for flame-graph tools (collapsed_writer.h)
 *   "speedscope" speedscope JSON, one profile per thread (speedscope_writer.h)
 *   "top"      self and cumulative time per function (top_text.h)
 *
 * The four profile views read the samples through profile_model.h and honour
 * the state filter (opts.state) besides the thread/Ractor/label filters.
 *   "html"     one self-contained interactive page: header, tables, timeline,
 *              wait graph and flame graphs (html_writer.h)
 *   "critical_path", "critical_path_json"
 *              the critical path of opts.critical_path (a thread, or
 *              "label=KEY=VALUE") over [from_ns, to_ns), as text or JSON
 *              (critical_path.h)
 *
 * opts.blame "root" makes the wait graph draw waiter → root edges and the
 * profile views weigh the roots' stacks by the wait they explain
 * (rootcause.h); "direct" weighs the profile views by blame and release
 * stacks (who ended each wait); NULL keeps the samples.
 *
 * Threading: the analysis itself is reentrant, but Graphviz keeps global
 * state, so call the "dot"/"svg"/"png" views from one thread at a time (the
 * extension holds the GVL). No routine prints or exits.
 */
#ifndef RGA_H
#define RGA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rga_error.h"
#include "report.h"

#define RGA_VERSION "0.1.0"

typedef struct rga_view_opts {
    int width;                 /* timeline columns; 0 = 100 */
    int color;                 /* nonzero: ANSI colour in text views */
    int ascii;                 /* timeline: ASCII glyphs instead of blocks */
    const char *by;            /* dot/svg: "thread" (default) | "label" | "ractor" */
    const char *edges;         /* dot/svg: "gvl" (default) | "blocked" | "all" (release edges, minor 1) */
    double min_share;          /* dot/svg: drop edges below this fraction of all wait (0..1)... */
    int min_share_set;         /* ...when nonzero; else the graph keeps the edges that tell the story
                                    (waitgraph.h, RGA_WG_STORY_*) */
    int64_t from_ns, to_ns;    /* timeline/perfetto window on the report axis; to_ns <= 0 = end */
    const char *thread;        /* filter: thread seq or exact name; NULL = all */
    int64_t ractor;            /* filter: Ractor id; 0 = all */
    const char *const *labels; /* filter: "key=value" strings, all must match */
    size_t n_labels;
    size_t top;                /* summary: rows of the top-N tables; 0 = 10 */
    int columns;               /* summary: terminal width stack rows fit in; 0 = 100 */
    const char *state;         /* profile views: "running" | "gvl_wait" | "blocked" | "gc"; NULL = all */
    unsigned roots;            /* collapsed: RGA_ROOT_THREAD | RGA_ROOT_LABEL extra root frames */
    const char *critical_path; /* critical_path views: "THREAD" or "label=KEY=VALUE" */
    const char *blame;         /* dot/svg/png and profile views: "direct" | "root"; NULL = default */
} rga_view_opts_t;

#define RGA_ROOT_THREAD 1u
#define RGA_ROOT_LABEL 2u

/* Loads the report in json[0..len) (plain or gzip) and renders view.
 * opts may be NULL (defaults). On success returns 0 (RGA_OK) and *out holds
 * *out_len bytes, NUL-terminated, malloc'd: the caller frees it with free().
 * On failure returns a nonzero rga_status_t (RGA_ERR_SYNTAX, RGA_ERR_SCHEMA,
 * RGA_ERR_ARGUMENT, ...), *out is NULL, and err (may be NULL) describes the
 * problem; rga_error_format() gives one line such as
 * "3:17: invalid JSON: ..." or "threads[2].gvl_wait_ns: negative value -5". */
int rga_render(const char *json, size_t len, const char *view, const rga_view_opts_t *opts, char **out,
               size_t *out_len, rga_error_t *err);

/* rga_render() for a report already loaded with rga_report_load_buffer():
 * the same output contract, and the report is not changed, so a caller that
 * renders several views of one report parses it once. */
int rga_render_loaded(const rga_report_t *report, const char *view, const rga_view_opts_t *opts, char **out,
                      size_t *out_len, rga_error_t *err);

/* Renders view of an already loaded (or merged) report into out. */
rga_status_t rga_render_report(const rga_report_t *report, const char *view, const rga_view_opts_t *opts, FILE *out,
                               rga_error_t *err);

/* Nonzero when view is one of the names above. */
int rga_view_known(const char *view);

/* Nonzero for the views that read the samples (pprof, collapsed, speedscope,
 * top): the ones the state filter and the empty-profile warning concern. */
int rga_view_is_profile(const char *view);

#endif
