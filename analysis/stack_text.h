/* stack_text.h — one readable line for a stack, for the summary's tables.
 *
 * rga_stack_line() renders a stack leaf first so that rows of a top-N table
 * tell stacks apart at a glance:
 *   - a run of identical consecutive frames (recursion) is one item,
 *     "Object#fib ×12";
 *   - a frame's path is shown only where it changes from the last path
 *     shown, and never for "<cfunc>"/"<internal:...>" paths, so the line
 *     holds more frames;
 *   - frames are added while the line fits in `width` terminal columns
 *     (UTF-8 code points, as table.h counts them); the first item (or the
 *     first `keep`) is always shown, and " < …" ends a line that left
 *     frames out;
 *   - the synthetic <GVL>/<GC> frames are skipped; a stack made only of
 *     [GVL wait] (a new thread waiting before its first Ruby frame) reads
 *     "[GVL wait] (before the thread's first frame)".
 * Lines of different stacks can be equal (deep stacks cut at the same
 * place); callers that list them merge such rows. This is display only: the
 * JSON summary keeps the full stacks.
 *
 * Pure function of the report: no allocation, thread-safe. buf always ends
 * in NUL (truncated at size - 1 bytes when too small).
 */
#ifndef RGA_STACK_TEXT_H
#define RGA_STACK_TEXT_H

#include <stddef.h>

#include "report.h"

/* Text of a stack that holds only the synthetic [GVL wait] frame. */
#define RGA_STACK_GVL_WAIT_ONLY "[GVL wait] (before the thread's first frame)"

/* Writes the line for stack into buf (width 0 = no width limit). Returns buf. */
char *rga_stack_line(const rga_report_t *r, int64_t stack, size_t width, char *buf, size_t size);
/* The same, with the first `keep` items shown whatever the width (a release
 * stack's leaf is the releasing method; its caller is what the reader wants
 * to see). keep 1 is rga_stack_line. */
char *rga_stack_line_keep(const rga_report_t *r, int64_t stack, size_t width, size_t keep, char *buf, size_t size);

#endif
