/*
 * cause_rules.h — which blocked cause a method stands for, by its name.
 *
 * Plain C (no Ruby): the cause table (cause_table.h) asks it once per frame
 * with the label rb_profile_frame_full_label gives ("Thread::Mutex#lock",
 * "IO.select", "Ractor.receive"). It does NOT read frames, does NOT keep
 * anything and knows nothing of threads; the rules themselves are listed in
 * docs/architecture.md ("Blocked causes").
 *
 * Contract
 * - rperf_cause_for_label: any thread, no allocation. Returns an
 *   enum rperf_blocked_cause: RPERF_CAUSE_OTHER for a method no rule names,
 *   RPERF_CAUSE_UNKNOWN for NULL or an empty label.
 */
#ifndef RPERF_CAUSE_RULES_H
#define RPERF_CAUSE_RULES_H

#include <stddef.h>

#include "report_format.h" /* enum rperf_blocked_cause */

int rperf_cause_for_label(const char *label, size_t len);

#endif
