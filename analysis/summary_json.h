/* summary_json.h — the summary as machine-readable JSON (--json, view "json").
 *
 * Same numbers as the text view, all times in integer ns, built with jansson:
 * {"format":"rperf-gvl-summary","version":1,"meta":{...},"dropped":{...},
 *  "totals":{...},"threads":[...],"ractors":[...],"label_sets":[...],
 *  "top_waiters":[...],"top_holders":[...],"top_wait_stacks":[...],
 *  "top_blame_stacks":[...]}. Lists are complete (not cut to a top N).
 * A report with blocked causes (minor 1) adds "blocked_by_cause" ({cause:
 * ns}, nonzero causes) and "release_unknown_ns" to threads, "blocked_by_cause"
 * to label sets, "causes" and "blocked_edges" to "dropped", and the lists
 * "top_releasers" ({releaser, waiter, cause, blocked_ns, count}; releaser 0,
 * cause "unknown": the waiter's releasable-cause time with no releaser found)
 * "blocked_methods" ({thread, cause, method, blocked_ns, count}) and
 * "top_release_stacks" (the releasers' stacks, weighted by the blocked time
 * they ended, like "top_blame_stacks").
 */
#ifndef RGA_SUMMARY_JSON_H
#define RGA_SUMMARY_JSON_H

#include <jansson.h>
#include <stdio.h>

#include "summary.h"

/* New reference, or NULL on allocation failure. */
json_t *rga_summary_to_json(const rga_summary_t *s);

rga_status_t rga_summary_write_json(const rga_summary_t *s, FILE *out, rga_error_t *err);

#endif
