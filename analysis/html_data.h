/* html_data.h — the data block of the HTML report page: what of a report the
 * page embeds, as one jansson object.
 *
 * The page (analysis/html/) draws everything from this object; it never sees
 * the report itself. What goes in:
 *   - "summary": the summary JSON (summary_json.h) for the header and tables,
 *     its root causes cut to the RGA_HTML_MAX_ROOTS largest with one stack
 *     text each (the per-waiter and per-label-set lists left out: the
 *     page draws paths instead);
 *   - "label_sets", "frames", "stacks": only what the samples, blame rows and
 *     kept intervals name, renumbered densely;
 *   - "samples" and "blame" rows (already aggregated by the profiler), for the
 *     flame graphs, which the page folds itself;
 *   - "edges": the wait graph's thread-level edges (waitgraph.h), the largest
 *     max_edges; the rest of each waiter's wait in one edge to "other";
 *   - the timeline: intervals kept one by one in "intervals" (columns; with
 *     blocked causes, report minor 1, also "cause" and "releaser" columns and
 *     "cause_names"), and
 *     "buckets": per thread, the time of every interval NOT kept, summed per
 *     (bucket, state) on a grid of width_px buckets over the whole axis:
 *     exact totals per state, and per bucket the state's share quantised to
 *     0..63 (one base64url character per bucket), which is what the page
 *     draws.
 *   - "paths": the critical path (critical_path.h) of every listed thread
 *     and of the max_label_paths label sets with the most time, for the
 *     page to highlight: per path its window, covered and own time,
 *     hand-offs and shares by root, and its segments in columns (start
 *     delta-coded, length, lane = the thread whose timeline explains it,
 *     root and text as indices into "roots" and "texts"; label paths also
 *     the subject thread). A path keeps its longest segments ("kept" of
 *     "segments"): at most max_path_segments, and max_path_total over all
 *     paths shared evenly (at least 60 each); the shares stay exact (the
 *     RGA_HTML_MAX_PATH_SHARES largest, the rest in one row of root -1). A report
 *     without a timeline has {"available": false, "reason"}.
 * When the report has at most max_intervals intervals (after the filter)
 * all are kept and "buckets" is empty. Otherwise the kept ones are the
 * longest, none shorter than one bucket (a pixel's worth at the default zoom),
 * at most max_intervals; "intervals.aggregated" says how many were folded.
 * Kept + bucketed time equals each thread's interval time per state exactly.
 *
 * What it does NOT do: write HTML (html_writer.h) or decide colours or
 * layout. Honours the thread/Ractor/label filter like the other views.
 * Borrowing: the object copies every string; the report may be freed after.
 */
#ifndef RGA_HTML_DATA_H
#define RGA_HTML_DATA_H

#include <jansson.h>
#include <stddef.h>

#include "filter.h"
#include "report.h"

typedef struct rga_html_limits {
    size_t max_intervals;     /* intervals embedded one by one; 0 = RGA_HTML_MAX_INTERVALS */
    size_t width_px;          /* buckets of the aggregate grid; 0 = RGA_HTML_WIDTH_PX */
    size_t max_edges;         /* wait-graph edges embedded; 0 = RGA_HTML_MAX_EDGES */
    size_t max_path_segments; /* segments kept per critical path; 0 = RGA_HTML_MAX_PATH_SEGMENTS */
    size_t max_label_paths;   /* label sets given a path; 0 = RGA_HTML_MAX_LABEL_PATHS */
    size_t max_path_total;    /* segments kept over all paths; 0 = RGA_HTML_MAX_PATH_TOTAL */
} rga_html_limits_t;

/* 150k intervals are about 4 MB of page: a 1-million-interval report stays
 * under 10 MB. 2,000 buckets: a wide screen's timeline at the default zoom. */
#define RGA_HTML_MAX_INTERVALS 150000
#define RGA_HTML_WIDTH_PX 2000
/* The page draws a dozen edges; a thousand keep any thread's own story. */
#define RGA_HTML_MAX_EDGES 1000
/* A path's longest 5,000 segments draw it at any zoom a person reads; 50
 * label sets cover the tables' rows. */
#define RGA_HTML_MAX_PATH_SEGMENTS 5000
#define RGA_HTML_MAX_LABEL_PATHS 50
/* About 1.3 MB of page for every path together, however many threads. */
#define RGA_HTML_MAX_PATH_TOTAL 40000
/* Rows of the page's root-cause table and of a path's shares. */
#define RGA_HTML_MAX_ROOTS 100
#define RGA_HTML_MAX_PATH_SHARES 20
/* Bytes of one name, label or frame text in the page (cut at a character,
 * then "…"): a 1 MiB thread name once made a 6 MB page that crashed the
 * browser's tab. The summary and the other views keep the whole text. */
#define RGA_HTML_MAX_TEXT 512

/* Builds the data object. limits may be NULL (defaults). On success *out
 * holds a new reference and RGA_OK is returned; on failure *out is NULL and
 * err says why (RGA_ERR_NOMEM only). */
rga_status_t rga_html_data_build(const rga_report_t *r, const rga_filter_t *filter, const rga_html_limits_t *limits,
                                 json_t **out, rga_error_t *err);

#endif
