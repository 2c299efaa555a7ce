/* rga_error.h — error codes and the error record every analysis routine fills.
 *
 * The analysis library never prints: a failing routine returns a nonzero
 * rga_status_t and describes the problem in an rga_error_t that the caller
 * owns (a plain struct, no heap). The CLI turns it into one line on stderr;
 * the Ruby extension into an exception message. rga_error_format() builds that
 * line: "FILE:LINE:COLUMN: PATH: REASON", omitting the parts that are unknown.
 */
#ifndef RGA_ERROR_H
#define RGA_ERROR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum rga_status {
    RGA_OK = 0,
    RGA_ERR_IO = 1,        /* file missing/unreadable/unwritable, bad gzip stream */
    RGA_ERR_SYNTAX = 2,    /* not JSON, truncated JSON, number beyond int64 */
    RGA_ERR_VERSION = 3,   /* wrong "format" or unsupported "version" */
    RGA_ERR_SCHEMA = 4,    /* missing key, wrong type, negative time, end < start */
    RGA_ERR_REFERENCE = 5, /* an id that points nowhere */
    RGA_ERR_ARGUMENT = 6,  /* bad view name or option value */
    RGA_ERR_NOMEM = 7,     /* allocation failed */
    RGA_ERR_RENDER = 8,    /* Graphviz failed to build, lay out or render */
    RGA_ERR_MISSING = 9    /* the report lacks what the view needs (a timeline for a critical path) */
} rga_status_t;

typedef struct rga_error {
    rga_status_t code;
    char file[256]; /* input name, "" for an anonymous buffer */
    long line;      /* 1-based; 0 = unknown */
    long column;    /* 1-based; 0 = unknown */
    char path[128]; /* JSON path such as "threads[3].gvl_wait_ns"; "" = none */
    char reason[256];
} rga_error_t;

/* Clears err (may be NULL). */
void rga_error_clear(rga_error_t *err);

/* Sets code and a printf-style reason; keeps file/line/column/path. Returns code.
 * err may be NULL, then only the code is returned. */
rga_status_t rga_error_set(rga_error_t *err, rga_status_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* rga_error_set with a va_list, for callers that add position or path first. */
rga_status_t rga_error_vset(rga_error_t *err, rga_status_t code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Clears err, then sets file (may be NULL), JSON path (may be NULL), code and
 * reason: an error about a whole file or one of its fields. Returns code. */
rga_status_t rga_error_vset_at(rga_error_t *err, rga_status_t code, const char *file, const char *path,
                               const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Writes "file:line:column: path: reason" into buf (always NUL-terminated). */
void rga_error_format(const rga_error_t *err, char *buf, size_t size);

/* Stable lowercase name of a code, e.g. "syntax" for RGA_ERR_SYNTAX. */
const char *rga_status_name(rga_status_t code);

#endif
