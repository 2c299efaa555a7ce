/*
 * line_queue.h — the log writer's queue of lines (Rperf::LineQueue): one
 * malloc'd byte buffer that request threads append whole lines to and the
 * writer thread takes at once. A queued line is bytes, not a Ruby String:
 * it costs no object, and none lives long enough to grow the old
 * generation and its major collections (docs/performance.md).
 *
 * It does NOT format lines (lib/rperf/contention_log.rb and log_unit.c
 * do), does NOT write them (Rperf::Log::Writer and its Sink do) and does
 * NOT wake the writer (Writer does, from the counts returned here).
 *
 * Contract (Ruby-called C: the GVL held)
 * - Every method below is one C call that calls no Ruby code between its
 *   first and last change to the queue, so threads of one Ractor see each
 *   call whole: no lock. The queue belongs to the Ractor that made it.
 * - Bounded by max_lines (>= 1): a line past it is dropped and counted.
 *   A line holds no "\n" (the formats escape it); the queue ends each one
 *   with "\n".
 * - "Served": a writer thread of process `pid` takes from the queue.
 *   push and rperf_line_queue_append return false when none is: the
 *   caller starts one and calls #serve. A push from another process (a
 *   fork child) first empties what the parent queued: those lines are
 *   the parent's to write.
 * - Rperf::LineQueue.new(max_lines)
 *   #push(line, pid) -> lines queued now (Integer), nil when dropped,
 *     false when queued but not served.
 *   #take -> [text, lines] (every queued line, each ending "\n", UTF-8)
 *     or nil when empty.
 *   #serve(pid) -> true (now served by pid's writer).
 *   #retire -> true when the queue was empty and is no longer served
 *     (the writer may end), false when lines wait (it must not).
 *   #size, #accepted, #dropped -> Integer.
 */
#ifndef RPERF_LINE_QUEUE_H
#define RPERF_LINE_QUEUE_H

#include <ruby.h>
#include <stddef.h>

typedef struct rperf_line_part {
    const char *bytes;
    size_t len;
} rperf_line_part_t;

void rperf_line_queue_define(VALUE mRperf);

/* Raises TypeError unless obj is a LineQueue, ArgumentError unless it was
 * initialized. Call it before rperf_line_queue_append, outside any frame
 * that holds arrays: under ASan a raise (Ruby's longjmp) leaves the guard
 * bytes of the frames it leaves marked, and later calls trip on them. */
void rperf_line_queue_check(VALUE obj);

/* The checked LineQueue `obj` gets one line made of `n` parts and its
 * "\n", exactly as #push: Qfalse, Qnil or the count. Calls no Ruby code
 * and raises nothing but NoMemoryError (the buffer cannot grow; the queue
 * is unchanged). */
VALUE rperf_line_queue_append(VALUE obj, long pid, const rperf_line_part_t *parts, int n);

#endif
