/* output.h — one way to write every view: to a FILE* that is a file, stdout
 * or a growing memory buffer.
 *
 * Writers in this library take a FILE*. rga_output_open() gives one for a
 * path ("-" or NULL = stdout) or, with path == RGA_OUTPUT_MEMORY, for memory
 * (open_memstream), so tests and the Ruby extension get the same bytes the
 * CLI writes. rga_output_close() flushes, reports write errors and, for
 * memory, hands over the malloc'd buffer (NUL-terminated; free()).
 */
#ifndef RGA_OUTPUT_H
#define RGA_OUTPUT_H

#include <stdio.h>

#include "rga_error.h"

#define RGA_OUTPUT_MEMORY ((const char *)1) /* path value selecting a memory buffer */

typedef struct rga_output {
    FILE *fp;
    const char *path;  /* for messages; "<memory>" or "<stdout>" */
    int kind;          /* 0 file, 1 stdout, 2 memory */
    char *mem;
    size_t mem_len;
} rga_output_t;

rga_status_t rga_output_open(rga_output_t *o, const char *path, rga_error_t *err);

/* Closes (stdout is flushed, not closed). For memory, buf and len receive the
 * bytes (may be NULL to discard). Returns RGA_ERR_IO when any write failed. */
rga_status_t rga_output_close(rga_output_t *o, char **buf, size_t *len, rga_error_t *err);

#endif
