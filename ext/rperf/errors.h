/*
 * errors.h — Rperf::Error and its subclasses, the classes of everything the
 * extension raises at run time (invalid arguments raise ArgumentError).
 *
 * Contract
 * - rperf_errors_define(mRperf): once, at Init, before any other part can
 *   raise; the classes are constants of Rperf, so the GC keeps them.
 * - The VALUEs are read-only after that, from any Ractor.
 * This file does NOT decide which failure is which class: each raiser does.
 */
#ifndef RPERF_ERRORS_H
#define RPERF_ERRORS_H

#include <ruby.h>

extern VALUE rperf_eError;            /* Rperf::Error < StandardError */
extern VALUE rperf_eStateError;       /* already running, not running, unbalanced profile */
extern VALUE rperf_eResourceError;    /* memory, timer, hook or thread that could not be had */
extern VALUE rperf_eReportError;      /* a report that cannot be read: syntax, version, schema */
extern VALUE rperf_eRenderError;      /* a view that cannot be rendered (Graphviz, output) */
extern VALUE rperf_eUnsupportedError; /* a part this build was made without */

void rperf_errors_define(VALUE mRperf);

#endif
