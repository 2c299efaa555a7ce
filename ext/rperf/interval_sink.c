/*
 * interval_sink.c — the timeline's JSON text into a String, a descriptor
 * or an IO, and the causes' spill file (interval_sink.h states the rules).
 *
 * It does NOT format or read records.
 */
#define _GNU_SOURCE 1 /* O_TMPFILE, copy_file_range, mkostemp */
#include "interval_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <ruby/io.h>
#include <ruby/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void
append_to_string(const char *chunk, size_t length, void *out)
{
    rb_str_cat(*(VALUE *)out, chunk, (long)length);
}


static void
write_to_io(const char *chunk, size_t length, void *target)
{
    rperf_interval_io_target_t *t = target;
    rb_str_resize(t->buffer, 0);
    rb_str_cat(t->buffer, chunk, (long)length);
    rb_funcall(t->io, rb_intern("write"), 1, t->buffer);
}

/* To a File: straight to its descriptor (after flushing what Ruby
 * buffered), without the GVL while the kernel writes. File#write would
 * pin a frozen copy of the chunk for each call. */
typedef struct fd_write {
    int fd;
    const char *bytes;
    size_t length;
    ssize_t written;
    int error;
} fd_write_t;

static void *
write_without_gvl(void *arg)
{
    fd_write_t *w = arg;
    w->written = write(w->fd, w->bytes, w->length);
    w->error = w->written < 0 ? errno : 0;
    return NULL;
}

void
rperf_interval_write_to_fd(const char *chunk, size_t length, void *target)
{
    fd_write_t w = {.fd = *(int *)target, .bytes = chunk, .length = length};
    while (w.length > 0) {
        rb_thread_call_without_gvl(write_without_gvl, &w, RUBY_UBF_IO, NULL);
        if (w.written < 0) {
            if (w.error == EINTR || w.error == EAGAIN) {
                rb_thread_check_ints();
                continue;
            }
            rb_syserr_fail(w.error, "rperf: writing the timeline");
        }
        w.bytes += w.written;
        w.length -= (size_t)w.written;
    }
}


void
rperf_interval_sink_to_string(rperf_interval_sink_t *s, size_t capacity)
{
    s->string = rb_str_buf_new((long)capacity);
    s->emit = append_to_string;
    s->arg = &s->string;
    s->fd = -1;
}

void
rperf_interval_sink_to_io(rperf_interval_sink_t *s, VALUE io)
{
    if (RB_TYPE_P(io, T_FILE)) {
        rb_io_flush(io);
        s->fd = rb_io_descriptor(io);
        s->emit = rperf_interval_write_to_fd;
        s->arg = &s->fd;
        return;
    }
    s->fd = -1;
    s->io = (rperf_interval_io_target_t){io, rb_str_buf_new(RPERF_INTERVAL_JSON_CHUNK)};
    s->emit = write_to_io;
    s->arg = &s->io;
}

/* The causes' text of a one-pass write waits in a temporary file until
 * its place in the document: O_TMPFILE (never named) in `dir`, else a
 * file named there and removed at once. -1 when none can be made. */
static int
open_spill_in(const char *dir)
{
    if (!dir || !*dir)
        return -1;
    int fd = -1;
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/.rperf-causes-XXXXXX", dir) >= sizeof(path))
        return -1;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

int
rperf_interval_spill_open(VALUE io)
{
    if (RB_TYPE_P(io, T_FILE)) {
        VALUE path = rb_io_path(io);
        if (RB_TYPE_P(path, T_STRING)) {
            VALUE dir = rb_funcall(rb_cFile, rb_intern("dirname"), 1, path);
            int fd = open_spill_in(StringValueCStr(dir));
            if (fd >= 0)
                return fd;
        }
    }
    int fd = open_spill_in(getenv("TMPDIR"));
    return fd >= 0 ? fd : open_spill_in("/tmp");
}

typedef struct fd_copy {
    int from, to;
    loff_t offset;
    size_t left;
    ssize_t copied;
    int error;
} fd_copy_t;

static void *
copy_without_gvl(void *arg)
{
    fd_copy_t *c = arg;
    c->copied = copy_file_range(c->from, &c->offset, c->to, NULL, c->left, 0);
    c->error = c->copied < 0 ? errno : 0;
    return NULL;
}

void
rperf_interval_spill_copy(int spill, size_t length, rperf_interval_sink_t *out)
{
    fd_copy_t c = {.from = spill, .to = out->fd, .left = length};
    while (out->fd >= 0 && c.left > 0) {
        rb_thread_call_without_gvl(copy_without_gvl, &c, RUBY_UBF_IO, NULL);
        if (c.copied > 0) {
            c.left -= (size_t)c.copied;
            continue;
        }
        if (c.copied < 0 && (c.error == EINTR || c.error == EAGAIN)) {
            rb_thread_check_ints();
            continue;
        }
        if (c.copied < 0 && c.error != EXDEV && c.error != EINVAL && c.error != ENOSYS && c.error != EOPNOTSUPP &&
            c.error != EBADF)
            rb_syserr_fail(c.error, "rperf: writing the timeline's causes");
        break; /* not for these descriptors (or nothing copied): by hand */
    }
    VALUE buffer = rb_str_buf_new(RPERF_INTERVAL_JSON_CHUNK);
    char *bytes = RSTRING_PTR(buffer);
    while (c.left > 0) {
        size_t want = c.left < RPERF_INTERVAL_JSON_CHUNK ? c.left : RPERF_INTERVAL_JSON_CHUNK;
        ssize_t got = pread(spill, bytes, want, c.offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            rb_syserr_fail(got < 0 ? errno : EIO, "rperf: reading back the timeline's causes");
        out->emit(bytes, (size_t)got, out->arg);
        c.offset += got;
        c.left -= (size_t)got;
    }
    RB_GC_GUARD(buffer);
}