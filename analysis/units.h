/* units.h — durations for people: formatting ns as µs/ms/s and parsing "10ms".
 *
 * Pure functions, no allocation, thread-safe.
 */
#ifndef RGA_UNITS_H
#define RGA_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Formats ns with three significant-ish digits and a unit chosen for reading:
 * "0", "850ns", "12.3µs", "4.56ms", "1.23s", "2m05s". Returns buf. */
char *rga_format_duration(int64_t ns, char *buf, size_t size);

/* Parses a duration: a non-negative decimal number followed by ns, us, µs, ms,
 * s or m; a bare number means seconds. Returns false on junk or overflow. */
bool rga_parse_duration(const char *text, int64_t *ns);

/* Formats a percentage with one decimal ("12.5%"); "-" when whole is 0. */
char *rga_format_percent(int64_t part, int64_t whole, char *buf, size_t size);

#endif
