/* report_internal.h — routines shared by the report_*.c files, not part of the
 * public API (the Ruby extension and the CLI use report.h only). */
#ifndef RGA_REPORT_INTERNAL_H
#define RGA_REPORT_INTERNAL_H

#include "report.h"

/* Checks cross-references after loading or merging: sorts threads by seq and
 * label sets by id, rejects duplicates and ids that point nowhere, and turns
 * each interval's thread seq (stored in thread_index while loading) into an
 * index into threads[]. Fills err with a JSON path on failure. */
rga_status_t rga_report_validate(rga_report_t *report, rga_error_t *err);

#endif
