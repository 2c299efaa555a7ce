/* waitgraph.h — who makes whom wait: the report's edges as a graph.
 *
 * rga_waitgraph_build() turns edges (waiter → holder, wait_ns, count) into
 * nodes and aggregated edges. Nodes are threads by default; `by` collapses
 * them into label sets or Ractors. GC, hand-off latency and unknown holders
 * are their own nodes. Edges below min_share of the total wait are pruned
 * (their time is still in the totals). A negative min_share asks for the
 * default graph instead: the largest edges until they carry
 * RGA_WG_STORY_COVER of all wait, at most RGA_WG_STORY_MAX_EDGES — a
 * person reads a dozen edges, not thirty crossing ones of 2% each; the
 * rest stays in the nodes' waited/caused totals. An edge passes the filter when its
 * waiter or its holder passes it, so filtering on a thread shows both who
 * made it wait and whom it made wait.
 *
 * Every thread, label set or Ractor node carries the state totals of what
 * it collapses (running, GVL wait, blocked, GC), so a collapsed graph still
 * says how busy each group was.
 *
 * This is the model only; dot_writer.c turns it into a Graphviz graph.
 * The graph owns its arrays and copies its labels.
 */
#ifndef RGA_WAITGRAPH_H
#define RGA_WAITGRAPH_H

#include "filter.h"
#include "report.h"

typedef enum rga_group_by { RGA_BY_THREAD = 0, RGA_BY_LABEL = 1, RGA_BY_RACTOR = 2 } rga_group_by_t;

/* Which edges the graph draws: GVL waits (waiter → holder, the default),
 * release edges of blocked threads (waiter → the thread that woke it,
 * report minor 1), or both. */
typedef enum rga_edge_kinds { RGA_EDGES_GVL = 1, RGA_EDGES_BLOCKED = 2, RGA_EDGES_ALL = 3 } rga_edge_kinds_t;

typedef enum rga_node_kind {
    RGA_NODE_THREAD,
    RGA_NODE_LABEL_SET,
    RGA_NODE_RACTOR,
    RGA_NODE_GC,
    RGA_NODE_HANDOFF,
    RGA_NODE_UNKNOWN
} rga_node_kind_t;

typedef struct rga_wg_node {
    rga_node_kind_t kind;
    int64_t key;         /* thread seq, label set id or Ractor id; 0 for the special nodes */
    int64_t ractor;      /* for clustering; 0 when the node spans Ractors */
    char label[160];     /* display name, e.g. "worker-1 #3" */
    int64_t wait_ns;     /* waited (as waiter) in the kept edges' source totals */
    int64_t caused_ns;   /* made others wait */
    int64_t blocked_ns;  /* release edges: blocked until another node woke it */
    int64_t released_ns; /* release edges: blocked time of others it ended */
    /* What the node stands for, in whole (filters pick edges, not these):
     * a thread's totals, the sum of a label set's label_totals rows, or the
     * sum over a Ractor's threads. Zero for GC, hand-off and unknown. */
    int64_t state_ns[RGA_STATE_COUNT];
} rga_wg_node_t;

typedef struct rga_wg_edge {
    size_t from, to;        /* node indices: waiter → holder (or releaser, or root) */
    int64_t wait_ns, count; /* a release edge: blocked time and wakes; a root edge: count 0 */
    int cause;              /* -1: a GVL wait edge; else the enum rga_cause of a release edge (or of
                               the blocked waits of a root edge) */
    int root;               /* -1: a direct edge; else a root edge: rga_rc_kind_t | cause << 8 of its root */
} rga_wg_edge_t;

typedef struct rga_waitgraph {
    const rga_report_t *report; /* borrowed, outlives the graph: names its Ractors */
    rga_group_by_t by;
    rga_wg_node_t *nodes;
    size_t n_nodes;
    rga_wg_edge_t *edges;
    size_t n_edges;        /* kept edges: GVL edges by wait_ns desc, then release edges likewise */
    int64_t total_wait_ns; /* over all filtered GVL edges */
    size_t n_pruned;       /* of both kinds */
    rga_edge_kinds_t kinds;
    int64_t total_blocked_ns; /* over all filtered release edges */
    bool roots;               /* edges go to the roots of the wait chains (rga_waitgraph_build_roots) */
} rga_waitgraph_t;

#define RGA_WG_STORY_COVER 0.8
#define RGA_WG_STORY_MAX_EDGES 12

/* Parses "thread" | "label" | "ractor". */
bool rga_group_by_parse(const char *text, rga_group_by_t *out);

/* Parses "gvl" | "blocked" | "all"; NULL is "gvl". */
bool rga_edge_kinds_parse(const char *text, rga_edge_kinds_t *out);

/* The GVL wait graph (rga_waitgraph_build_kinds with RGA_EDGES_GVL). */
rga_status_t rga_waitgraph_build(const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by,
                                 double min_share, rga_waitgraph_t *out, rga_error_t *err);

/* The graph of the chosen edge kinds. Pruning (min_share, or the default
 * story) applies to each kind on its own: GVL edges against all GVL wait,
 * release edges against all blocked time that has a releaser, so a few
 * long release edges never push every GVL edge out, nor the reverse. */
rga_status_t rga_waitgraph_build_kinds(const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by,
                                       rga_edge_kinds_t kinds, double min_share, rga_waitgraph_t *out,
                                       rga_error_t *err);
/* The root-cause graph: an edge from a waiter to the root of its wait chains
 * (rootcause.h) — the thread that ran, was in GC or was blocked on an
 * external cause, or hand-off — one per (waiter, root, kind of wait). GVL
 * waits count as waits (wait_ns, caused_ns), blocked waits (kinds
 * RGA_EDGES_BLOCKED) as blocked (blocked_ns, released_ns); an edge passes the
 * filter when its waiter or its root does. Pruning as above. A report
 * without a timeline has no edge. */
rga_status_t rga_waitgraph_build_roots(const rga_report_t *r, const rga_filter_t *filter, rga_group_by_t by,
                                       rga_edge_kinds_t kinds, double min_share, rga_waitgraph_t *out,
                                       rga_error_t *err);
void rga_waitgraph_free(rga_waitgraph_t *g);

/* Index of the node (kind, key), or -1. */
long rga_waitgraph_find(const rga_waitgraph_t *g, rga_node_kind_t kind, int64_t key);

#endif
