/* rootcause.h — who really made a thread wait: wait chains followed to their
 * root, from the report's timeline.
 *
 * The report charges each wait to the thread that ended it: the GVL holder
 * at each moment (edges), or the thread that released a Mutex, Queue,
 * ConditionVariable or join (interval_causes). When that thread was itself
 * waiting, the wait goes on: this module follows it. To explain thread T's
 * time over [a, b) it walks T's intervals in order:
 *   - running or GC: T's own time (root: T running, T in GC);
 *   - GVL wait: each moment goes to the thread of T's Ractor then running or
 *     in GC (the Ractor's holder timeline, made from its threads' running and
 *     GC intervals); no such thread: hand-off;
 *   - blocked on mutex, condvar, queue or join with a releaser R: the same
 *     span of R's time is explained, recursively (what R was doing while T
 *     waited for it);
 *   - blocked on one of those with no releaser known (or the waiter itself
 *     named as its releaser): the chain stops there
 *     and says so (no_releaser); blocked on another Ractor: cut at the Ractor
 *     boundary (ractor); blocked on io, sleep, process, other or unknown: an
 *     external cause (blocked);
 *   - no interval of the thread at that time: no_data.
 * A chain that reaches a thread already on it stops (cycle); one longer than
 * RGA_RC_MAX_DEPTH hops stops (depth). Both are counted in the index.
 *
 * The pieces of one walk partition [a, b) exactly: a thread's root-cause
 * shares sum to its time, whatever the report holds. The release instant is
 * the end of the waiter's blocked interval (its READY; when it then took the
 * GVL at once, its resume, microseconds later).
 *
 * rga_rootcauses_build() explains every interval of the threads and label
 * sets that pass a filter and adds up: for each wait (GVL wait, and blocked
 * time on a releasable cause) the roots (who and what ended up explaining
 * it), per waiter and root, per root and the root's label set; and for every
 * label set its whole time by root (its critical path's shares).
 * rga_rc_stacks_t names a root's code: the root thread's sampled stacks in
 * the root's state and label set (samples carry no time, so these are its
 * stacks in that state over the whole report, not only at those moments).
 *
 * A report without a timeline (counters mode, timeline: false) has no
 * chains: `available` is false and every list empty.
 *
 * Ownership: an index borrows the report (keep it alive and unchanged) and
 * keeps scratch state for its walks: one thread at a time. Results own their
 * arrays. No routine prints.
 */
#ifndef RGA_ROOTCAUSE_H
#define RGA_ROOTCAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "key_table.h"
#include "report.h"

/* Hops a chain may take before it is cut (a convoy of N waiters is N deep). */
#define RGA_RC_MAX_DEPTH 256

/* What a piece of time ended up being. */
typedef enum rga_rc_kind {
    RGA_RC_RUNNING = 0,     /* the root thread ran Ruby code (held its Ractor's GVL) */
    RGA_RC_GC = 1,          /* GC ran on the root thread */
    RGA_RC_BLOCKED = 2,     /* the root thread was blocked on an external cause (io, sleep, ...) */
    RGA_RC_HANDOFF = 3,     /* no thread held the GVL: hand-off */
    RGA_RC_NO_RELEASER = 4, /* blocked on mutex/condvar/queue/join, releaser not known */
    RGA_RC_RACTOR = 5,      /* blocked on another Ractor: the chain is cut there */
    RGA_RC_NO_DATA = 6,     /* no interval of the thread covers that time */
    RGA_RC_CYCLE = 7,       /* the chain came back to a thread on it */
    RGA_RC_DEPTH = 8,       /* the chain was longer than RGA_RC_MAX_DEPTH */
    RGA_RC_KIND_COUNT = 9
} rga_rc_kind_t;

/* One waiting thread on a chain: it waited (GVL or blocked on cause) on the
 * next hop, or on the root after the last. */
typedef struct rga_rc_hop {
    uint32_t thread;   /* thread index */
    uint8_t state;     /* RGA_STATE_GVL_WAIT or RGA_STATE_BLOCKED */
    uint8_t cause;     /* blocked: the cause */
    int64_t label_set; /* the thread's label set then */
} rga_rc_hop_t;

/* Where a chain ends. */
typedef struct rga_rc_root {
    uint8_t kind;      /* rga_rc_kind_t */
    uint8_t cause;     /* BLOCKED, NO_RELEASER, RACTOR: the blocked cause */
    int32_t thread;    /* thread index; -1 for HANDOFF */
    int64_t label_set; /* the root thread's label set then (0 when none) */
} rga_rc_root_t;

/* A piece of explained time: [start_ns, end_ns) of the explained thread,
 * through hops[0..n_hops) (hops[0] is the explained thread when it waited;
 * no hop: its own time) to root. hops is valid during the callback only. */
typedef struct rga_rc_piece {
    int64_t start_ns, end_ns;
    const rga_rc_hop_t *hops;
    size_t n_hops;
    rga_rc_root_t root;
} rga_rc_piece_t;

typedef void (*rga_rc_piece_fn)(const rga_rc_piece_t *piece, void *arg);

typedef struct rga_rc_index rga_rc_index_t;

/* Indexes the report's timeline: intervals per thread, each Ractor's holder
 * timeline, each blocked interval's releaser. RGA_ERR_NOMEM only. */
rga_status_t rga_rc_index_build(const rga_report_t *r, rga_rc_index_t **out, rga_error_t *err);
void rga_rc_index_free(rga_rc_index_t *ix);

/* Pieces cut by a cycle or by the depth bound since the index was built:
 * how many, and their time. */
void rga_rc_index_cuts(const rga_rc_index_t *ix, int64_t *cycles, int64_t *cycle_ns, int64_t *depth,
                       int64_t *depth_ns);

/* The thread's interval indices in time order: *first, n. */
const size_t *rga_rc_thread_intervals(const rga_rc_index_t *ix, size_t thread_index, size_t *n);

/* Explains thread_index's time over [from, to) (a span with no interval is
 * no_data): fn gets the pieces in time order; they partition [from, to). */
void rga_rc_explain(rga_rc_index_t *ix, size_t thread_index, int64_t from, int64_t to, rga_rc_piece_fn fn,
                    void *arg);

/* The same for interval i (a report index) clipped to [from, to). */
void rga_rc_explain_interval(rga_rc_index_t *ix, size_t interval, int64_t from, int64_t to, rga_rc_piece_fn fn,
                             void *arg);

/* True for the intervals that wait on another thread: GVL waits, and blocked
 * intervals whose cause is mutex, condvar, queue or join. */
bool rga_rc_is_wait(const rga_interval_t *iv);

/* "running", "gc", "blocked", "handoff", "no_releaser", "ractor", "no_data",
 * "cycle", "depth" (the JSON names). */
const char *rga_rc_kind_name(int kind);

/* What the root was doing, for people: "running", "GC", "blocked: sleep",
 * "hand-off", "queue, releaser unknown", "waiting on another Ractor (cut)",
 * "no data", "cycle (cut)", "chain too deep (cut)". Returns buf. */
char *rga_rc_root_what(const rga_rc_root_t *root, char *buf, size_t size);

/* Who a root is, for a terminal: its thread ("name (#seq)", escaped), or
 * "[hand-off]" when no thread held the GVL. Returns buf. */
char *rga_rc_root_who(const rga_report_t *r, const rga_rc_root_t *root, char *buf, size_t size);

/* A root of the tables: kind, cause and thread (label sets folded). */
typedef struct rga_rc_total {
    rga_rc_root_t root; /* label_set -1 */
    int64_t ns;         /* waited time it explains */
    int64_t chain_ns;   /* of ns, reached through another waiting thread (2 hops or more) */
} rga_rc_total_t;

/* A root's share of a waiter's waits or of a label set's time. */
typedef struct rga_rc_share {
    int64_t key;        /* waiter thread seq (flows), or label set id (labels) */
    int wait_state;     /* flows: RGA_STATE_GVL_WAIT or RGA_STATE_BLOCKED; labels: -1 */
    bool own;           /* labels: the label set's own thread's time (no hop) */
    rga_rc_root_t root; /* label_set -1 */
    int64_t ns;
} rga_rc_share_t;

/* A label set's time and its shares (label_shares[first .. first + n)). */
typedef struct rga_rc_label {
    int64_t label_set;
    int64_t time_ns; /* its intervals' time (that passed the filter) */
    size_t first, n; /* into label_shares, by ns desc */
} rga_rc_label_t;

typedef struct rga_rootcauses {
    const rga_report_t *report;
    bool available;        /* the report has a timeline */
    int64_t waited_ns;     /* all waits explained (= the sum of roots) */
    rga_rc_total_t *roots; /* by ns desc */
    size_t n_roots;
    rga_rc_share_t *flows; /* per (waiter, wait state, root), by ns desc */
    size_t n_flows;
    rga_rc_label_t *labels; /* by time desc */
    size_t n_labels;
    rga_rc_share_t *label_shares;
    size_t n_label_shares;
    rga_key_table_t parts; /* key: kind | cause << 8, root thread, root label set, 0, 0, 0; sum[0]: ns */
    /* With RGA_RC_EDGES, every wait by key: kind | cause << 8, root thread,
     * root label set, waiter seq, waiter label set, wait (-1 GVL, else the
     * waiter's blocked cause); sum[0]: ns, sum[1]: of it, 2 hops or more.
     * (Many keys: the wait graph needs them, the tables do not.) */
    rga_key_table_t edges;
    int64_t cycles, cycle_ns, depth_cuts, depth_ns; /* counted cuts */
} rga_rootcauses_t;

/* Explains every interval of the threads and label sets that pass filter
 * (NULL: all). RGA_ERR_NOMEM only; out is then empty. */
rga_status_t rga_rootcauses_build(const rga_report_t *r, const rga_filter_t *filter, rga_rootcauses_t *out,
                                  rga_error_t *err);

/* The same; flags RGA_RC_EDGES also fills edges. */
#define RGA_RC_EDGES 1u
rga_status_t rga_rootcauses_build_flags(const rga_report_t *r, const rga_filter_t *filter, unsigned flags,
                                        rga_rootcauses_t *out, rga_error_t *err);
void rga_rootcauses_free(rga_rootcauses_t *rc);

/* The parts key of a root (label_set -1 folds label sets away). */
void rga_rc_root_key(const rga_rc_root_t *root, int64_t key[RGA_KEY_WIDTH]);

/* ---- the roots' stacks ------------------------------------------------------------------ */

typedef struct rga_rc_stacks rga_rc_stacks_t;

/* Groups the report's samples by (thread, state, blocked cause, label set).
 * A [GVL blocked] sample's cause is that of its blocking method (the frame
 * under the synthetic one) as blocked_methods names it. RGA_ERR_NOMEM only. */
rga_status_t rga_rc_stacks_build(const rga_report_t *r, rga_rc_stacks_t **out, rga_error_t *err);
void rga_rc_stacks_free(rga_rc_stacks_t *s);

typedef void (*rga_rc_stack_fn)(int64_t stack, int64_t ns, void *arg);

/* Splits ns of root's time over the root thread's samples of the root's
 * state (and blocked cause) in its label set, or in any label set when it
 * has none there, by weight; the parts sum to ns exactly. Returns false
 * (fn not called) when the root names no thread or no sample matches. */
bool rga_rc_stacks_split(const rga_rc_stacks_t *s, const rga_rc_root_t *root, int64_t ns, rga_rc_stack_fn fn,
                         void *arg);

typedef struct rga_rc_stack {
    int64_t stack, ns;
} rga_rc_stack_t;

/* A root's stacks over every label set of parts (a table keyed like
 * rga_rootcauses_t.parts): the largest (stack, ns), by ns desc, at most
 * capacity of them into out. Returns how many; -1 when out of memory. */
long rga_rc_top_stacks(const rga_key_table_t *parts, const rga_rc_stacks_t *s, const rga_rc_root_t *root,
                       rga_rc_stack_t *out, size_t capacity);

#endif
