/*
 * log_numbers.h — the numbers of a contention log line, appended to the
 * line with their keys: nanoseconds as integers, or as milliseconds with at
 * most three decimals and no trailing zeros (1234567 ns -> "1.235").
 *
 * It does NOT choose the keys, their order or the line's layout
 * (lib/rperf/contention_log.rb does), and does NOT read counters.
 *
 * Contract
 * - rperf_log_numbers_define(mRperf): defines Rperf._c_append_numbers(out,
 *   ms, keys, *values): appends keys[i] then values[i] for each value, as
 *   milliseconds when ms is truthy, else as integers; returns out. keys is
 *   an Array of Strings at least as long as values; values are Integers
 *   (negative ones are written as 0). Ruby context, GVL held; raises
 *   TypeError or ArgumentError for other arguments, leaving out as it was.
 * - rperf_log_ms(ns, buf): the millisecond text of ns into buf (at least
 *   RPERF_LOG_NUMBER_MAX bytes, no NUL); returns its length.
 * - rperf_log_number(v, ms, buf): v as _c_append_numbers writes it (a
 *   negative v as 0; milliseconds when ms, else the integer) into buf, as
 *   rperf_log_ms; returns its length.
 * - rperf_log_integer(v, buf): v in decimal, a '-' before a negative one
 *   (what Integer#to_s writes), into buf as rperf_log_ms; returns its
 *   length.
 */
#ifndef RPERF_LOG_NUMBERS_H
#define RPERF_LOG_NUMBERS_H

#include <ruby.h>
#include <stddef.h>
#include <stdint.h>

#define RPERF_LOG_NUMBER_MAX 32

size_t rperf_log_ms(int64_t ns, char *buf);
size_t rperf_log_number(int64_t v, int ms, char *buf);
size_t rperf_log_integer(int64_t v, char *buf);
void rperf_log_numbers_define(VALUE mRperf);

#endif
