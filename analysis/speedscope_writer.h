/* speedscope_writer.h — a profile model in speedscope's JSON file format.
 *
 * The document has "$schema" (speedscope's file-format schema), one entry
 * per function in "shared.frames" ({name, file}; no line, the report has
 * none), and one "sampled" profile per thread with samples, named after the
 * thread and its Ractor ("worker (#3, Ractor 1)"), so speedscope offers a
 * per-thread selector. Samples are frame-index lists root first with their
 * weights; unit "nanoseconds", startValue 0, endValue the thread's total.
 * Threads without selected samples get no profile; with no samples at all
 * "profiles" is empty (still a valid file).
 *
 * Each profile is built and dumped with jansson in turn; the document frame
 * around them is written directly. No routine prints.
 */
#ifndef RGA_SPEEDSCOPE_WRITER_H
#define RGA_SPEEDSCOPE_WRITER_H

#include <stdio.h>

#include "profile_model.h"

/* Writes p to out. Returns RGA_OK, RGA_ERR_NOMEM, or RGA_ERR_IO. */
rga_status_t rga_speedscope_write(const rga_profile_t *p, FILE *out, rga_error_t *err);

#endif
