/*
 * utf8_text.h — text that enters a report (thread names, the program name,
 * frame paths and labels) made valid UTF-8, so that no name a program
 * chooses can make its report unwritable as JSON.
 *
 * The rule (docs/report-format.md): a String in UTF-8, US-ASCII or
 * ASCII-8BIT (binary) is read as UTF-8 bytes; one in another encoding is
 * transcoded to UTF-8; every byte sequence that is then not valid UTF-8,
 * and every character without a UTF-8 form, becomes U+FFFD (String#scrub).
 * This file does NOT escape control characters (the views do) and does NOT
 * read labels (the Ruby side registers label sets).
 *
 * Contract
 * - rperf_utf8_text(str): Ruby context, GVL held (allocates). str must be a
 *   String; returns a new, unfrozen UTF-8 String with valid contents, never
 *   str itself. Never raises for any encoding or contents (only NoMemoryError).
 */
#ifndef RPERF_UTF8_TEXT_H
#define RPERF_UTF8_TEXT_H

#include <ruby.h>

VALUE rperf_utf8_text(VALUE str);

#endif
