/* perfetto_writer.h — Chrome trace-event JSON of the intervals (opens in Perfetto UI).
 *
 * One process per Ractor (pid = Ractor id, process_name metadata), one track
 * per thread (tid = seq, thread_name metadata), one complete event ("ph":"X")
 * per interval named after its state, with the interval's labels and stack
 * as args. Timestamps are microseconds on the report's axis. Each event is
 * built and serialised with jansson and streamed to out, so memory stays
 * flat for large reports. Honours thread/Ractor/label filters and the
 * [from_ns, to_ns) window (to_ns <= 0: no upper bound).
 */
#ifndef RGA_PERFETTO_WRITER_H
#define RGA_PERFETTO_WRITER_H

#include <stdio.h>

#include "filter.h"
#include "report.h"

rga_status_t rga_perfetto_write(const rga_report_t *r, const rga_filter_t *filter, int64_t from_ns, int64_t to_ns,
                                FILE *out, rga_error_t *err);

#endif
