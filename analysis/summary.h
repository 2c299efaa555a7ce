/* summary.h — the numbers behind the default view: per thread, per Ractor,
 * per label set, top waiters, top holders, top wait stacks, top blame stacks.
 *
 * rga_summary_build() computes them from a loaded report and a filter; the
 * text (summary_text.c) and JSON (summary_json.c) writers only format them.
 * Thread totals come from threads[] unless a label filter is active, then
 * from the matching label_totals rows. Holders, wait stacks and blame are
 * restricted to rows whose waiter (holders, wait stacks) or holder (blame)
 * passes the filter. Lists are sorted, largest first. A report with blocked
 * causes (minor 1) adds blocked time by cause per thread and label set,
 * release edges (restricted like holders, by waiter), the releasers' stacks
 * (restricted like blame, by releaser) and blocked methods. A report with a
 * timeline adds the root causes (rootcause.h): every wait of the listed
 * threads and label sets followed along its chain to its root, the roots'
 * stacks, and each label set's time by root (its critical path's shares).
 *
 * The summary borrows strings from the report: keep the report alive while
 * the summary is used. Free with rga_summary_free().
 */
#ifndef RGA_SUMMARY_H
#define RGA_SUMMARY_H

#include <stdio.h>

#include "filter.h"
#include "report.h"
#include "rootcause.h"

typedef struct rga_summary_thread {
    int64_t seq;
    const char *name;
    int64_t ractor;
    int64_t lifetime_ns;
    int64_t state_ns[RGA_STATE_COUNT];
    int64_t acquisitions, waits;
    bool exited;
    bool has_causes; /* report minor 1: cause_ns holds blocked_ns by cause */
    int64_t cause_ns[RGA_CAUSE_COUNT];
    int64_t release_unknown_ns;
} rga_summary_thread_t;

typedef struct rga_summary_ractor {
    int64_t id;
    bool main;
    bool identified; /* false: one thread whose Ractor is not known */
    size_t n_threads;
    int64_t state_ns[RGA_STATE_COUNT];
    int64_t lifetime_ns; /* sum of its threads' lifetimes */
} rga_summary_ractor_t;

typedef struct rga_summary_label {
    int64_t label_set;
    size_t n_threads;
    int64_t state_ns[RGA_STATE_COUNT];
    bool has_causes;
    int64_t cause_ns[RGA_CAUSE_COUNT];
} rga_summary_label_t;

/* Who released whom: release edges summed over label sets. releaser 0 is
 * the waiter's release_unknown_ns (no releaser found; cause UNKNOWN there,
 * since the report does not split it by cause). idle: in a report with
 * labels, a Queue or ConditionVariable wait of a waiter without labels: an
 * idle worker waiting for work (a server's thread pool, a job runner), not
 * a wait that delayed labelled work. */
typedef struct rga_summary_release {
    int64_t releaser, waiter;
    int cause;
    bool idle;
    int64_t blocked_ns, count;
} rga_summary_release_t;

typedef struct rga_summary_holder {
    rga_holder_kind_t kind;
    int64_t seq; /* thread holders; 0 otherwise */
    int64_t wait_ns, count;
} rga_summary_holder_t;

typedef struct rga_summary_stack {
    int64_t stack;
    int64_t ns;
} rga_summary_stack_t;

/* One non-zero drop counter in proportion: dropped of `of`, the events of
 * its kind the profiler met, kept or not. of is 0 when the report does not
 * count them; then share_ns of total_ns bounds the time the drop touched
 * (cause-table drops: at most the blocked time charged to `unknown`). */
typedef struct rga_summary_drop {
    const char *what;   /* the stats key without "dropped_" */
    const char *unit;   /* what was counted: "samples", "GVL waits", ... */
    const char *effect; /* what the views lose */
    int64_t dropped, of;
    int64_t share_ns, total_ns;
} rga_summary_drop_t;

#define RGA_SUMMARY_DROP_KINDS 9
/* A drop is material from this share of its kind (parts per million):
 * the views then call the report incomplete; below it they list it. */
#define RGA_SUMMARY_DROP_MATERIAL_PPM 10000

typedef struct rga_summary {
    const rga_report_t *report;
    int64_t duration_ns;
    int64_t total_ns[RGA_STATE_COUNT]; /* over the listed threads */
    int64_t total_lifetime_ns;
    rga_summary_thread_t *threads;
    size_t n_threads; /* by seq */
    rga_summary_ractor_t *ractors;
    size_t n_ractors; /* by id */
    rga_summary_label_t *labels;
    size_t n_labels; /* by gvl_wait, desc */
    size_t *waiters;
    size_t n_waiters; /* indices into threads, by gvl_wait desc, wait > 0 */
    rga_summary_holder_t *holders;
    size_t n_holders; /* by wait_ns desc */
    rga_summary_stack_t *wait_stacks;
    size_t n_wait_stacks;
    rga_summary_stack_t *blame_stacks;
    size_t n_blame_stacks;
    int64_t total_edge_wait_ns;
    /* Report minor 1 (empty otherwise): releases by blocked_ns desc, the
     * listed threads' blocked methods by cause then blocked_ns desc. */
    bool has_causes;
    rga_summary_release_t *releases;
    size_t n_releases;
    const rga_blocked_method_t **methods;
    size_t n_methods;
    rga_summary_stack_t *release_stacks; /* releasers' stacks when they woke a waiter (lock blame) */
    size_t n_release_stacks;
    /* Root causes (roots.available: the report has a timeline) and the
     * samples grouped to name their stacks. */
    rga_rootcauses_t roots;
    rga_rc_stacks_t *root_stacks;
    /* The report's non-zero drop counters, in stats order. */
    rga_summary_drop_t drops[RGA_SUMMARY_DROP_KINDS];
    size_t n_drops;
    bool drops_material; /* one is at least RGA_SUMMARY_DROP_MATERIAL_PPM */
} rga_summary_t;

/* A drop's share of its kind in parts per million (of its time bound when
 * the report does not count its kind). */
int64_t rga_summary_drop_ppm(const rga_summary_drop_t *d);

/* Why a report has no root causes, for the views to say ("" when it has). */
const char *rga_summary_no_roots_reason(const rga_report_t *r);

/* Stacks shown per root: one in the text summary, this many in JSON. */
#define RGA_SUMMARY_ROOT_STACKS 5

rga_status_t rga_summary_build(const rga_report_t *r, const rga_filter_t *filter, rga_summary_t *out,
                               rga_error_t *err);
void rga_summary_free(rga_summary_t *s);

/* gc_mark + gc_sweep */
int64_t rga_summary_gc_ns(const int64_t *state_ns);

/* "k=v, k2=v2" for a label set, "(no labels)" for the empty set. Returns buf. */
char *rga_label_set_text(const rga_report_t *r, int64_t label_set, char *buf, size_t size);

/* "label (path:line) < caller < ..." for a stack, leaf first, skipping the
 * synthetic <GVL>/<GC> frames, at most max_frames frames. Returns buf. */
char *rga_stack_text(const rga_report_t *r, int64_t stack, int max_frames, char *buf, size_t size);

/* Text view options. */
typedef struct rga_summary_text_opts {
    bool color;
    size_t top;     /* rows in the top-N tables; 0 = 10 */
    size_t columns; /* terminal width the stack rows fit in; 0 = 100 */
} rga_summary_text_opts_t;

/* Writes the human-readable summary. Stack tables show each stack as one
 * line (stack_text.h) and merge rows whose lines are equal, adding their
 * times, so every row is distinct; the JSON summary keeps them apart.
 * Returns 0, RGA_ERR_NOMEM, or RGA_ERR_IO when out fails. */
rga_status_t rga_summary_write_text(const rga_summary_t *s, FILE *out, const rga_summary_text_opts_t *opts,
                                    rga_error_t *err);

#endif
