/*
 * cause_table.h — the fixed, lock-free table of the frames threads were
 * blocked in: a thread's leaf frame at SUSPENDED becomes a small id, and the
 * id's cause (cause_rules.h) and method label are found later, by name,
 * with the GVL.
 *
 * Why lazily: naming a frame (rb_profile_frame_full_label) allocates, and a
 * GVL hook may not; a method's entry can also differ per call site (module
 * methods get one per including class), so entries are not known in
 * advance. It does NOT charge time (contention_events.c keeps per-thread time per
 * id) and does NOT decide when a thread is blocked.
 *
 * Contract
 * - open/close: GVL held, main Ractor, no hook running (profile start and
 *   destroy). open returns 0, or -1 when memory runs out.
 * - rperf_cause_table_leaf(thread): hook context of `thread` itself while
 *   it holds its Ractor's GVL (SUSPENDED), so no GC can move what it
 *   returns; reads one frame, no allocation: the leaf frame VALUE, 0 if none.
 * - rperf_cause_table_intern(frame): same context; no allocation, no Ruby
 *   call, at most RPERF_CAUSE_TABLE_PROBES compare-and-swaps. Returns the id
 *   (>= 1) of `frame` when it is a C method or a built-in one
 *   (<internal:...>), 0 when it is 0, Ruby code (a GVL hand-over at an
 *   interrupt check, not a wait) or the table is full (then counted in
 *   dropped). An id's frame is pinned until close, so a caller may keep
 *   the pair (frame, id) and compare frames by identity.
 * - cause / label / resolve_all: GVL held (any Ractor for cause and
 *   resolve_all, main Ractor for label); they allocate. cause(0) is
 *   RPERF_CAUSE_UNKNOWN.
 * - cause_if_resolved: any context, never allocates; -1 until resolved.
 * - mark: from the profiler's GC mark function; pins every frame (their
 *   addresses are the table's keys, so compaction must not move them).
 * - dropped / note_dropped: atomic counter of blocked events charged to
 *   "unknown" because a fixed table (this one or a thread's) was full.
 */
#ifndef RPERF_CAUSE_TABLE_H
#define RPERF_CAUSE_TABLE_H

#include <ruby.h>
#include <stdint.h>

#define RPERF_CAUSE_TABLE_SLOTS 2048 /* power of two: ids 1..SLOTS */
#define RPERF_CAUSE_TABLE_PROBES 32

int rperf_cause_table_open(void);
void rperf_cause_table_close(void);
void rperf_cause_table_mark(void);

VALUE rperf_cause_table_leaf(VALUE thread);
uint32_t rperf_cause_table_intern(VALUE frame);

int rperf_cause_table_cause(uint32_t id);
int rperf_cause_table_cause_if_resolved(uint32_t id);
void rperf_cause_table_resolve_all(void);
/* The method's label (rb_profile_frame_full_label), valid UTF-8. */
VALUE rperf_cause_table_label(uint32_t id);

uint64_t rperf_cause_table_dropped(int reset);
void rperf_cause_table_note_dropped(void);

#endif
