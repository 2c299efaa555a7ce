/* rga_error.c — filling and formatting rga_error_t.
 *
 * Only string formatting lives here; deciding what went wrong is the job of
 * the routine that fails. No allocation, so it is safe on the NOMEM path.
 */
#include "rga_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
rga_error_clear(rga_error_t *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}

rga_status_t
rga_error_vset(rga_error_t *err, rga_status_t code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
    return code;
}

rga_status_t
rga_error_set(rga_error_t *err, rga_status_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rga_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

rga_status_t
rga_error_vset_at(rga_error_t *err, rga_status_t code, const char *file, const char *path, const char *fmt,
                  va_list ap)
{
    if (!err)
        return code;
    rga_error_clear(err);
    snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
    snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
    return rga_error_vset(err, code, fmt, ap);
}

static void append(char *buf, size_t size, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += ((size_t)n < size - *used) ? (size_t)n : size - *used - 1;
}

void
rga_error_format(const rga_error_t *err, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    if (err->file[0])
        append(buf, size, &used, "%s:", err->file);
    if (err->line > 0)
        append(buf, size, &used, "%ld:%ld:", err->line, err->column);
    if (used > 0)
        append(buf, size, &used, " ");
    if (err->path[0])
        append(buf, size, &used, "%s: ", err->path);
    append(buf, size, &used, "%s", err->reason[0] ? err->reason : rga_status_name(err->code));
}

const char *
rga_status_name(rga_status_t code)
{
    switch (code) {
    case RGA_OK: return "ok";
    case RGA_ERR_IO: return "io";
    case RGA_ERR_SYNTAX: return "syntax";
    case RGA_ERR_VERSION: return "version";
    case RGA_ERR_SCHEMA: return "schema";
    case RGA_ERR_REFERENCE: return "reference";
    case RGA_ERR_ARGUMENT: return "argument";
    case RGA_ERR_NOMEM: return "out of memory";
    case RGA_ERR_RENDER: return "render";
    case RGA_ERR_MISSING: return "missing";
    }
    return "unknown";
}
