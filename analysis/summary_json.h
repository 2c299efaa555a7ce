/* summary_json.h — the summary as machine-readable JSON (--json, view "json").
 *
 * Same numbers as the text view, all times in integer ns, built with jansson:
 * {"format":"rperf-gvl-summary","version":1,"meta":{...},"dropped":{...},
 *  "drops":[...] (non-zero drops in proportion: {what, dropped, of (when
 *  the report counts the kind), unit, effect, ppm (share of the kind; with
 *  no "of", at most that share of blocked time), material}),
 *  "totals":{...},"threads":[...],"ractors":[...],"label_sets":[...],
 *  "top_waiters":[...],"top_holders":[...],"top_wait_stacks":[...],
 *  "top_blame_stacks":[...]}. Lists are complete (not cut to a top N).
 * A report with blocked causes (minor 1) adds "blocked_by_cause" ({cause:
 * ns}, nonzero causes) and "release_unknown_ns" to threads, "blocked_by_cause"
 * to label sets, "causes", "blocked_edges" and "release_stacks" to
 * "dropped", and the lists
 * "top_releasers" ({releaser, waiter, cause, blocked_ns, count}; releaser 0,
 * cause "unknown": the waiter's releasable-cause time with no releaser found)
 * "blocked_methods" ({thread, cause, method, blocked_ns, count}) and
 * "top_release_stacks" (the releasers' stacks, weighted by the blocked time
 * they ended, like "top_blame_stacks").
 * "root_causes" (rootcause.h): {"available": false, "reason": text} for a
 * report without a timeline; else "waited_ns", "cuts" ({cycles, cycle_ns,
 * depth, depth_ns, max_depth}), "roots" (a root, its "ns", "chain_ns" and
 * largest "stacks"), "waiters" (a root, "waiter" seq, "wait" gvl|blocked,
 * "ns") and "label_sets" ({label_set, time_ns, shares: [a root, "own",
 * "ns"]}). A root is {kind, thread (seq, 0 none), name, what, cause (for
 * blocked, no_releaser and ractor)}.
 */
#ifndef RGA_SUMMARY_JSON_H
#define RGA_SUMMARY_JSON_H

#include <jansson.h>
#include <stdio.h>

#include "summary.h"

/* Sets key to value, or appends value, stealing it; a failure (or a NULL
 * value) clears *ok instead of returning, so builders read as lists. */
void rga_json_put(json_t *obj, const char *key, json_t *value, bool *ok);
void rga_json_push(json_t *arr, json_t *value, bool *ok);

/* Writes o indented, and a newline, then releases it; o NULL (a failed
 * build) is RGA_ERR_NOMEM naming what, a failed write RGA_ERR_IO. */
rga_status_t rga_json_write(json_t *o, FILE *out, const char *what, rga_error_t *err);

/* New reference, or NULL on allocation failure. */
json_t *rga_summary_to_json(const rga_summary_t *s);

rga_status_t rga_summary_write_json(const rga_summary_t *s, FILE *out, rga_error_t *err);

/* A root as JSON ({kind, thread, name, what, cause?}); NULL when out of memory. */
json_t *rga_rc_root_json(const rga_report_t *r, const rga_rc_root_t *root);

/* The root's largest stacks over the label sets of parts, at most max
 * (<= RGA_SUMMARY_ROOT_STACKS): [{stack, ns, text, frames}]. stacks NULL:
 * an empty list. NULL when out of memory. */
json_t *rga_rc_stacks_json(const rga_report_t *r, const rga_key_table_t *parts, const rga_rc_stacks_t *stacks,
                           const rga_rc_root_t *root, size_t max);

#endif
