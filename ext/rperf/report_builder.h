/*
 * report_builder.h — turns the profiler's state at a cut into one Hash in
 * the report.json v1 shape (docs/report-format.md).
 *
 * Contract
 * - rperf_report_build: Ruby context, main Ractor, GVL held; a profile is
 *   active (rperf_contention_active). final: the hooks are gone (stop);
 *   clear (snapshot): the next report starts at this cut, so totals become
 *   deltas and the timeline, edges and sampler tables are emptied. Raises
 *   Rperf::ResourceError when memory runs out; frees what it allocated on
 *   every path (rb_ensure).
 * - rperf_report_state_keys: the report's state-total keys, indexed by
 *   enum rperf_state.
 * This file does NOT stop, pause or free anything of the profile.
 */
#ifndef RPERF_REPORT_BUILDER_H
#define RPERF_REPORT_BUILDER_H

#include <ruby.h>
#include <stdint.h>

#include "report_format.h" /* RPERF_STATE_COUNT, enum rperf_profile_mode */

typedef struct rperf_report_params {
    VALUE module;                 /* Rperf, whose VERSION goes into meta */
    enum rperf_profile_mode mode; /* counters: the sampler is not read at all
                                   * (its arrays are empty, its counters 0) */
    int frequency;                /* Hz; 0 in counters mode */
    int sampler_running;          /* clear also empties the sampler's tables */
} rperf_report_params_t;

extern const char *const rperf_report_state_keys[RPERF_STATE_COUNT];

VALUE rperf_report_build(const rperf_report_params_t *params, int final, int clear, int64_t end_ns);

#endif
