/* output.c — FILE* targets for the writers: file, stdout or memory (see output.h). */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

rga_status_t rga_output_open(rga_output_t *o, const char *path, rga_error_t *err)
{
    memset(o, 0, sizeof(*o));
    if (path == RGA_OUTPUT_MEMORY) {
        o->kind = 2;
        o->path = "<memory>";
        o->fp = open_memstream(&o->mem, &o->mem_len);
    } else if (!path || strcmp(path, "-") == 0) {
        o->kind = 1;
        o->path = "<stdout>";
        o->fp = stdout;
    } else {
        o->path = path;
        o->fp = fopen(path, "wb");
    }
    if (!o->fp) {
        if (err)
            snprintf(err->file, sizeof(err->file), "%s", o->path);
        return rga_error_set(err, RGA_ERR_IO, "cannot open for writing: %s", strerror(errno));
    }
    return RGA_OK;
}

rga_status_t rga_output_close(rga_output_t *o, char **buf, size_t *len, rga_error_t *err)
{
    if (!o->fp)
        return RGA_OK;
    bool failed = ferror(o->fp) != 0;
    int saved = errno;
    if (o->kind == 1) {
        failed |= fflush(o->fp) != 0;
    } else {
        failed |= fclose(o->fp) != 0;
    }
    if (!failed)
        saved = 0;
    else if (errno)
        saved = errno;
    o->fp = NULL;
    if (o->kind == 2) {
        if (!failed && buf) {
            *buf = o->mem;
            if (len)
                *len = o->mem_len;
        } else {
            free(o->mem);
        }
        o->mem = NULL;
    }
    if (failed) {
        if (err && o->path)
            snprintf(err->file, sizeof(err->file), "%s", o->path);
        return rga_error_set(err, RGA_ERR_IO, "write failed: %s", saved ? strerror(saved) : "I/O error");
    }
    return RGA_OK;
}
