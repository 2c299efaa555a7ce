/* output.h — one way to write every view: to a FILE* that is a file, stdout
 * or a growing memory buffer, without ever destroying what the write did not
 * create.
 *
 * Writers in this library take a FILE*. rga_output_open() gives one for a
 * path ("-" or NULL = stdout) or, with path == RGA_OUTPUT_MEMORY, for memory
 * (open_memstream), so tests and the Ruby extension get the same bytes the
 * CLI writes.
 *
 * A path that names a regular file or nothing yet is written through a
 * temporary file in the same directory (".NAME.XXXXXX", NAME cut to fit
 * NAME_MAX), renamed over the path by rga_output_close() once every byte is
 * written: a failed or abandoned write leaves the old file as it was and
 * removes only the temporary. A symbolic link to a regular file is followed
 * (the link stays, its target is replaced). Anything else that exists (a
 * device such as /dev/null, a FIFO, a socket) is opened and written directly
 * and is never removed or replaced. A directory is refused.
 *
 * rga_output_close() flushes, reports write errors (the file is then left
 * untouched and the temporary removed) and, for memory, hands over the
 * malloc'd buffer (NUL-terminated; free()). rga_output_discard() ends a write
 * that must not be kept. Not thread-safe per rga_output_t.
 */
#ifndef RGA_OUTPUT_H
#define RGA_OUTPUT_H

#include <stdio.h>

#include "rga_error.h"

#define RGA_OUTPUT_MEMORY ((const char *)1) /* path value selecting a memory buffer */

typedef struct rga_output {
    FILE *fp;
    const char *path; /* for messages; "<memory>" or "standard output" */
    int kind;         /* 0 file, 1 stdout, 2 memory, 3 file written in place (device, FIFO) */
    char *mem;
    size_t mem_len;
    char *tmp_path;   /* kind 0: the temporary being written (malloc'd) */
    char *final_path; /* kind 0: what it is renamed to (malloc'd; a link's target) */
} rga_output_t;

/* Returns RGA_ERR_IO (err->file = path) when the target cannot be written:
 * a missing directory, no permission, a directory, a read-only file. */
rga_status_t rga_output_open(rga_output_t *o, const char *path, rga_error_t *err);

/* Closes (stdout is flushed, not closed) and, for a file, renames the
 * temporary into place. For memory, buf and len receive the bytes (may be
 * NULL to discard). Returns RGA_ERR_IO when any write failed; the target is
 * then unchanged. */
rga_status_t rga_output_close(rga_output_t *o, char **buf, size_t *len, rga_error_t *err);

/* Closes without keeping anything: the temporary is removed, the target is
 * unchanged (a device or stdout keeps what was already written to it). */
void rga_output_discard(rga_output_t *o);

/* The length of the longest head of name of at most max bytes that does not
 * end inside a UTF-8 character: temporary names made from a file's name are
 * cut with it to fit NAME_MAX. */
size_t rga_name_head(const char *name, size_t max);

#endif
