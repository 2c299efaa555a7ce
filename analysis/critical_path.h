/* critical_path.h — the critical path of one thread or one label set: what
 * its wall time between two instants went to, segment by segment, with
 * every wait followed along its chain (rootcause.h).
 *
 * The subject is a thread (its seq or exact Thread#name) or a label
 * ("label=KEY=VALUE": the label sets holding that pair). A thread's path
 * covers its lifetime clipped to [from, to): a stretch with no interval is a
 * no_data segment. A label's path covers the intervals of its label sets
 * clipped to [from, to) (not given: from its first to its last), on
 * whichever threads they ran (a label set on two
 * threads at once has two segments at once). The segments' lengths sum to
 * that coverage exactly (covered_ns), and the shares to it too.
 *
 * A segment is a stretch in which the subject's time went to one root
 * through one chain: "ran", "waited for the GVL behind X running", "blocked
 * on a Mutex behind Y, who waited behind Z sleeping". Consecutive pieces of
 * one thread with the same chain and root are one segment. Where the report
 * cannot say (a wait with no releaser known, a cross-Ractor wait, no
 * interval), the root says so.
 *
 * Errors: RGA_ERR_ARGUMENT for a subject that matches nothing or a window
 * that selects none of it; RGA_ERR_MISSING for a report without a timeline
 * (counters mode, timeline: false). The path borrows the report. Writers:
 * text for a terminal (names escaped) and JSON (jansson).
 */
#ifndef RGA_CRITICAL_PATH_H
#define RGA_CRITICAL_PATH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "report.h"
#include "rootcause.h"

typedef struct rga_cp_spec {
    const char *subject;    /* "THREAD" or "label=KEY=VALUE" */
    int64_t from_ns, to_ns; /* the window on the report axis; to_ns <= 0: its end */
    bool label_set_given;   /* instead of subject: the label set with this id */
    int64_t label_set;
} rga_cp_spec_t;

typedef struct rga_cp_segment {
    int64_t start_ns, end_ns;
    uint32_t thread;    /* index of the subject's thread whose time it is */
    int64_t label_set;  /* that thread's label set then */
    size_t first_hop;   /* hops[first_hop .. + n_hops): hops[first_hop] is that thread waiting */
    size_t n_hops;      /* 0: its own time */
    rga_rc_root_t root; /* where the chain ends */
} rga_cp_segment_t;

typedef struct rga_critical_path {
    const rga_report_t *report;
    bool by_label;
    int64_t thread;         /* thread path: thread index */
    char label[256];        /* label path: "KEY=VALUE" */
    int64_t from_ns, to_ns; /* the window the path covers */
    int64_t covered_ns;     /* the segments' total */
    int64_t own_ns;         /* of it, the subject's own time (no hop) */
    size_t n_threads;       /* threads the path ran on */
    size_t handoffs;        /* consecutive segments of one thread whose root thread differs */
    rga_cp_segment_t *segments;
    size_t n_segments; /* each thread's in time order, thread after thread (rga_cp_order sorts them) */
    rga_rc_hop_t *hops;
    size_t n_hops;
    rga_rc_share_t *shares; /* by ns desc; root.label_set -1; own marks the subject's own time */
    size_t n_shares;
    rga_key_table_t parts;   /* (root, root label set) -> ns: the shares' stacks */
    rga_rc_stacks_t *stacks; /* NULL: the shares get no stacks */
    bool owns_stacks;
} rga_critical_path_t;

rga_status_t rga_critical_path_build(const rga_report_t *r, const rga_cp_spec_t *spec, rga_critical_path_t *out,
                                     rga_error_t *err);

/* The same on an index (and samples grouped, or NULL) made once for several
 * paths of one report; the path borrows stacks. */
rga_status_t rga_critical_path_build_on(rga_rc_index_t *ix, rga_rc_stacks_t *stacks, const rga_report_t *r,
                                        const rga_cp_spec_t *spec, rga_critical_path_t *out, rga_error_t *err);
void rga_critical_path_free(rga_critical_path_t *p);

/* The text of a segment's chain for people: "running", "GVL → hog (#7):
 * running", "mutex → w1 (#4) mutex → holder (#2): blocked: sleep". Names
 * are escaped for a terminal. Returns buf. */
char *rga_cp_segment_text(const rga_critical_path_t *p, const rga_cp_segment_t *s, char *buf, size_t size);

/* Marks the n longest segments (mark[i] = 1; ties by time order): what a
 * view shows of a long path. malloc'd, n_segments + 1 bytes; NULL when out
 * of memory. */
unsigned char *rga_cp_longest(const rga_critical_path_t *p, size_t n);

/* The indices of the marked segments (all with mark NULL) by start, then
 * thread: *n of them, malloc'd; NULL when out of memory. */
size_t *rga_cp_order(const rga_critical_path_t *p, const unsigned char *mark, size_t *n);

typedef struct rga_cp_text_opts {
    bool color;
    size_t rows;    /* segments shown (the longest, in time order); 0 = 40 */
    size_t columns; /* terminal width; 0 = 100 */
} rga_cp_text_opts_t;

rga_status_t rga_critical_path_write_text(const rga_critical_path_t *p, FILE *out, const rga_cp_text_opts_t *opts,
                                          rga_error_t *err);

/* {"format": "rperf-gvl-critical-path", "version": 1, "subject", "from_ns",
 * "to_ns", "covered_ns", "own_ns", "handoffs", "segments": [{start_ns,
 * end_ns, thread, label_set, hops: [{thread, name, wait}], root}], "shares":
 * [root + {own, ns, stacks}]}; NULL when out of memory. */
json_t *rga_critical_path_to_json(const rga_critical_path_t *p);
rga_status_t rga_critical_path_write_json(const rga_critical_path_t *p, FILE *out, rga_error_t *err);

#endif
