/* summary_json.h — the summary as machine-readable JSON (--json, view "json").
 *
 * Same numbers as the text view, all times in integer ns, built with jansson:
 * {"format":"rperf-gvl-summary","version":1,"meta":{...},"dropped":{...},
 *  "totals":{...},"threads":[...],"ractors":[...],"label_sets":[...],
 *  "top_waiters":[...],"top_holders":[...],"top_wait_stacks":[...],
 *  "top_blame_stacks":[...]}. Lists are complete (not cut to a top N).
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
