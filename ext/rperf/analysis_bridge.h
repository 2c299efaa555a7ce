/*
 * analysis_bridge.h — the analysis library's Ruby methods (analysis_bridge.c).
 *
 * Contract
 * - rperf_analysis_bridge_define(mRperf): defines Rperf._c_parse_report(json)
 *   (a parsed report, or ReportError), _c_parsed_intervals(parsed) ([offset,
 *   length, Intervals] of the text's timeline, or nil), _c_render(parsed,
 *   view, opts) (the view's bytes, or RenderError / ArgumentError) and
 *   _c_metrics_render(dir, flags) (a metrics directory's text, or
 *   ReportError). Init calls it once; the caller makes them private.
 * - Every method runs with the GVL; _c_metrics_render reads the directory
 *   without it. Without the analysis library each raises UnsupportedError.
 */
#ifndef RPERF_ANALYSIS_BRIDGE_H
#define RPERF_ANALYSIS_BRIDGE_H

#include <ruby.h>

void rperf_analysis_bridge_define(VALUE mRperf);

#endif
