/* term_text.h — text bound for a terminal: bytes a terminal would act on
 * escaped, and widths in display columns.
 *
 * Names, labels and frames in a report come from the profiled program and
 * from whoever can reach it (a request path becomes a label). Printed raw,
 * ESC/CSI/OSC sequences, CR, LF and other controls would move the cursor,
 * retitle the window or forge lines; bidirectional controls reorder the
 * rest of the line, and U+2028/U+2029 break it. rga_term_escape() writes
 * them as \xNN, byte by byte (C0 controls, DEL, C1 controls, U+061C,
 * U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, U+2028, U+2029, and bytes
 * that are not valid UTF-8); everything else passes unchanged. The text
 * views, folded stacks, DOT labels and the CLI's error messages use it; the
 * JSON and Perfetto writers do not (JSON quotes by its own rules).
 *
 * rga_text_width() counts display columns of UTF-8 text: East Asian wide and
 * fullwidth characters are 2, combining marks and zero-width characters 0,
 * others 1 (a built-in table, independent of the locale). Pure functions,
 * thread-safe, no allocation.
 */
#ifndef RGA_TERM_TEXT_H
#define RGA_TERM_TEXT_H

#include <stddef.h>

/* Copies src into dst (size > 0 bytes, always NUL-terminated) with every
 * control or invalid byte written as \xNN. Text that does not fit is cut at
 * a character (or escape) boundary. Returns dst. */
char *rga_term_escape(const char *src, char *dst, size_t size);

/* Display columns of UTF-8 text (an invalid byte counts 1). */
size_t rga_text_width(const char *s);

/* Bytes of the longest prefix of s that fits in cols display columns, never
 * splitting a character. */
size_t rga_text_prefix(const char *s, size_t cols);

/* Bytes of the longest valid UTF-8 prefix of s of at most max_bytes bytes:
 * it ends before a character cut short (or any invalid byte). */
size_t rga_text_prefix_bytes(const char *s, size_t max_bytes);

#endif
