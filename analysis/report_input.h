/*
 * report_input.h — the bytes of a report before it is parsed: a file or
 * standard input read whole, and gzip data inflated.
 *
 * It does NOT parse or check JSON beyond what inflating needs: inflated
 * bytes must look like JSON text (no control byte but whitespace, a '{'
 * first), so a gzip bomb stops at its first chunk.
 *
 * Contract
 * - Thread-safe; the inflate cap (rga_report_max_inflated, report.h) is
 *   read once per call.
 * - On success *out is malloc'd (the caller frees it); on failure it is
 *   NULL and err says why (RGA_ERR_IO, RGA_ERR_SYNTAX or RGA_ERR_NOMEM).
 */
#ifndef RGA_REPORT_INPUT_H
#define RGA_REPORT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include "rga_error.h"

/* The gzip magic bytes at the start of data. */
bool rga_input_is_gzip(const char *data, size_t len);
/* Inflates every gzip member of data (concatenated members are one file). */
rga_status_t rga_input_inflate(const char *data, size_t len, char **out, size_t *out_len, rga_error_t *err);
/* Reads path to its end; "-" is standard input, left open. A directory is
 * refused. *out may be NULL for an empty file (*out_len 0). */
rga_status_t rga_input_read(const char *path, char **out, size_t *out_len, rga_error_t *err);

#endif
