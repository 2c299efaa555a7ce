/*
 * log_unit.h — one contention log unit (a request) counted in C: its begin
 * in one call (profile refcount +1, the thread's label set switched, the
 * thread's counters read), its end in one (the label back, counters read,
 * refcount -1), the read after the reply, and the line's numbers (main,
 * before_* and after_* windows) appended to a Ruby String, the same bytes
 * as lib/rperf/contention_log.rb's Ruby path writes.
 *
 * It does NOT make the line's start (tag, kind, labels), does NOT write
 * application fields and does NOT keep the label-set registry
 * (lib/rperf/contention_log.rb and lib/rperf.rb do). Its request path
 * (below) only takes the units the log's Ruby would write the same way.
 *
 * Contract (Ruby-called C: the GVL held, the calling thread's own slot)
 * - rperf_log_unit_define(mRperf, ops): defines Rperf::UnitReads (a unit's
 *   counter reads, made only by _c_unit_begin; it owns them, a fixed-size
 *   block from plain malloc; freed, it waits in a bounded free list for the
 *   next unit) and the private methods below. ops (static, kept)
 *   are the profiler's steps, given by rperf.c.
 * - _c_unit_begin(labels, prior) -> UnitReads or nil. nil (nothing done)
 *   when no profile is active or the thread already has a label set: the
 *   caller takes its Ruby path then. labels: a frozen Hash whose id comes
 *   from Rperf.fast_label_id (which may raise; then nothing is done).
 *   prior: the end of the thread's previous unit (a UnitReads, or a
 *   thread_counters Array), else ignored; it bounds the before window.
 * - _c_unit_end(reads) -> true, or false when the profile is gone (the
 *   refcount and label are then left alone) or the unit already ended.
 * - _c_unit_after(reads) -> true when the counters were read now as the
 *   unit's after-reply read; false when ended not, or already read.
 * - _c_unit_append(reads, out, keys, ms) -> out: the numbers of an ended
 *   unit appended to out. keys: frozen Strings in the line's order (the
 *   main four, the ten causes, GC (one key for ms, two for ns), share,
 *   threads, then the before and after windows' keys: 5 each for ms, 6
 *   for ns). Raises ArgumentError or TypeError on other arguments,
 *   before appending anything.
 * - _c_unit_line(reads, prefix, status, ends, keys, ms) -> a new String
 *   in prefix's encoding: prefix, ends[0] and status when status is an
 *   Integer (nil: none), the numbers as _c_unit_append, ends[1]. Raises as
 *   _c_unit_append, before making the String.
 * - _c_unit_push(reads, queue, pid, prefix, status, ends, keys, ms): the
 *   same line appended to a Rperf::LineQueue (line_queue.h) with no String
 *   made; returns what its push returns. Raises as _c_unit_line, before
 *   the queue changes.
 * - _c_unit_read(reads, which) -> a new thread_counters Array, or nil when
 *   that read was not taken: 0 begin, 1 end, 2 after reply, 3 prior, 4 the
 *   unit's last (after reply, else end: the next unit's prior).
 *
 * A request's whole way (ContentionLog's common case; anything else goes
 * back to its Ruby methods, so the lines are the same):
 * - _c_request_begin(cfg, labels, hooks) -> a counting
 *   Rperf::ContentionLog::Unit, or nil with nothing done. cfg: the log's
 *   frozen Array in log_unit.c's REQ_* order (ContentionLog#initialize).
 *   nil when the thread's last unit still waits for its hook, the labels
 *   are not in the label cap's identity table, or _c_unit_begin's nil.
 *   The Unit is made before the begin read; nothing raises after it.
 * - _c_request_end(unit) -> true once ended here: with an after-reply
 *   Array the unit waits (the log's pending table, the thread's entry in
 *   its last ends) and its reads join the Array; without one its line is
 *   written now. false with nothing done for a unit not begun by
 *   _c_request_begin or already ended; raises as the Ruby steps would.
 * - UnitReads#call(*): the after-reply hook. The first call writes the
 *   line (with the after read on the unit's own thread), later ones
 *   nothing. A StandardError goes to the log's sink (c_failed); C writes
 *   the line only through the log's writer queue (cached prefix, Integer
 *   or no status, no fields, no error, not capped), else it calls
 *   ContentionLog#complete_after or #emit_ended.
 */
#ifndef RPERF_LOG_UNIT_H
#define RPERF_LOG_UNIT_H

#include <ruby.h>
#include <stdint.h>

#include "thread_counters.h"

typedef struct rperf_log_unit_ops {
    /* 1 when a profile is active and the calling thread has no label set. */
    int (*label_free)(void);
    /* Refcount +1, the thread's label set to label_id, its counters at the
     * switch into out; 1. 0 with nothing done when label_free() is not. */
    int (*begin)(int label_id, int64_t out[COUNTER_COUNT]);
    /* The label back to none, counters at the switch into out, refcount
     * -1; 1. 0 with nothing done when no profile is active. */
    int (*end)(int64_t out[COUNTER_COUNT]);
    /* The thread's counters now into out; 0 when no profile is active. */
    int (*read)(int64_t out[COUNTER_COUNT]);
} rperf_log_unit_ops_t;

void rperf_log_unit_define(VALUE mRperf, const rperf_log_unit_ops_t *ops);

/* In a fork child (async-signal-safe: a flag only): the process id the
 * request path writes is read again. */
void rperf_log_unit_after_fork_child(void);

#endif
