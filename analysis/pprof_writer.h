/* pprof_writer.h — a profile model as a gzip-compressed pprof profile
 * (profile.proto), for `go tool pprof`, Pyroscope, Parca and Grafana.
 *
 * Sample types: samples/count (estimated from the weight, see
 * rga_profile_sample_count) and wall/nanoseconds or cpu/nanoseconds after the
 * report's mode (the default sample type); period_type/period are the
 * sampling interval, time_nanos/duration_nanos the report's interval. One
 * pprof sample per report sample (stack, thread, label set), leaf first,
 * labelled thread_seq (number), thread (name, "#seq" when unnamed), ractor
 * (number) and every key of its label set (strings). Functions have a name
 * but no system_name, so pprof keeps Ruby names such as "block in <main>"
 * whole (it simplifies names whose system name equals the name). Each function is one
 * location in one mapping ("ruby", with functions and file names). Report
 * frames carry no line numbers, so every line is 0.
 *
 * The message is built with protobuf-c (code generated from profile.proto)
 * and packed straight into zlib's gzip stream. Not for the wait graph,
 * timeline or edges. No routine prints.
 */
#ifndef RGA_PPROF_WRITER_H
#define RGA_PPROF_WRITER_H

#include <stdio.h>

#include "profile_model.h"

/* Writes p to out. Returns RGA_OK, RGA_ERR_NOMEM, or RGA_ERR_IO when
 * compressing or writing fails. */
rga_status_t rga_pprof_write(const rga_profile_t *p, FILE *out, rga_error_t *err);

#endif
