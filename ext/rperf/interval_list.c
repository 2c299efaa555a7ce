/*
 * interval_list.c — Rperf::Contention::Intervals: the encoded timeline of
 * a report (interval_store.h), read from Ruby one tuple at a time (size,
 * at, each) or written as JSON, whole (to_json) or streamed to an IO
 * (write_json). Enumerable and the rest of the Array-like
 * surface are added in lib/rperf/contention.rb.
 */
#include "interval_list.h"
#include "interval_json.h"
#include "errors.h"

#include <errno.h>
#include <ruby/io.h>
#include <ruby/thread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct interval_list {
    rperf_interval_store_t store;
} interval_list_t;

/* The causes view: the list it reads, and how many of its records are
 * blocked with a known cause (counted by whoever built the list, as it
 * went: a pass of its own was a tenth of a large stop). */
typedef struct cause_view {
    VALUE intervals;
    size_t count;
} cause_view_t;

static void
list_free(void *ptr)
{
    interval_list_t *list = ptr;
    rperf_interval_store_free(&list->store);
    ruby_xfree(list);
}

static size_t
list_memsize(const void *ptr)
{
    const interval_list_t *list = ptr;
    return sizeof(*list) + rperf_interval_store_bytes(&list->store);
}

static const rb_data_type_t list_type = {
    .wrap_struct_name = "rperf_intervals",
    .function = {.dmark = NULL, .dfree = list_free, .dsize = list_memsize},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_FROZEN_SHAREABLE,
};

static VALUE cIntervals, cIntervalCauses;

static void
view_mark(void *ptr)
{
    rb_gc_mark(((cause_view_t *)ptr)->intervals);
}

static const rb_data_type_t view_type = {
    .wrap_struct_name = "rperf_interval_causes",
    .function = {.dmark = view_mark, .dfree = RUBY_TYPED_DEFAULT_FREE, .dsize = NULL},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_FROZEN_SHAREABLE,
};

static const interval_list_t *
get_list(VALUE self)
{
    return rb_check_typeddata(self, &list_type);
}

static VALUE
make_empty(VALUE unused)
{
    (void)unused;
    interval_list_t *list;
    return TypedData_Make_Struct(cIntervals, interval_list_t, &list_type, list);
}

VALUE
rperf_interval_list_adopt(rperf_interval_store_t *store)
{
    int state = 0;
    VALUE obj = rb_protect(make_empty, Qnil, &state);
    if (state) {
        rperf_interval_store_free(store);
        rb_jump_tag(state);
    }
    interval_list_t *list = DATA_PTR(obj);
    rperf_interval_store_shrink(store);
    list->store = *store;
    rperf_interval_store_init(store);
    return rb_obj_freeze(obj);
}

VALUE
rperf_interval_list_new(rperf_interval_t *records, size_t count)
{
    rperf_interval_store_t store;
    rperf_interval_store_init(&store);
    for (size_t i = 0; i < count; i++) {
        if (rperf_interval_store_append(&store, &records[i]) < 0) {
            free(records);
            rperf_interval_store_free(&store);
            rb_raise(rperf_eResourceError, "rperf: cannot allocate the timeline");
        }
    }
    free(records);
    return rperf_interval_list_adopt(&store);
}

static VALUE
tuple(const rperf_interval_t *iv)
{
    return rb_ary_new_from_args(6, INT2NUM(iv->thread_seq), INT2FIX(iv->state), LL2NUM(iv->start_ns),
                                LL2NUM(iv->end_ns), INT2NUM(iv->label_set_id), INT2NUM(iv->stack_id));
}

static VALUE
cause_tuple(const rperf_interval_t *iv)
{
    return rb_ary_new_from_args(4, INT2NUM(iv->thread_seq), LL2NUM(iv->start_ns), INT2FIX(iv->cause),
                                INT2NUM(iv->releaser_seq));
}

static const cause_view_t *
get_view(VALUE self)
{
    return rb_check_typeddata(self, &view_type);
}

static const rperf_interval_store_t *
view_store(VALUE self)
{
    return &get_list(get_view(self)->intervals)->store;
}

VALUE
rperf_interval_list_causes(VALUE intervals, size_t count)
{
    get_list(intervals); /* a type check */
    cause_view_t *view;
    VALUE obj = TypedData_Make_Struct(cIntervalCauses, cause_view_t, &view_type, view);
    view->intervals = intervals;
    view->count = count;
    return rb_obj_freeze(obj);
}

/* size → Integer */
static VALUE
list_size(VALUE self)
{
    return SIZET2NUM(get_list(self)->store.count);
}

/* at(index) → the tuple, or nil out of range; negative counts from the end. */
static VALUE
list_at(VALUE self, VALUE vindex)
{
    const interval_list_t *list = get_list(self);
    long index = NUM2LONG(vindex);
    if (index < 0)
        index += (long)list->store.count;
    rperf_interval_t iv;
    if (index < 0 || rperf_interval_store_get(&list->store, (size_t)index, &iv) < 0)
        return Qnil;
    return tuple(&iv);
}

static VALUE
list_enum_size(VALUE self, VALUE args, VALUE eobj)
{
    (void)args;
    (void)eobj;
    return list_size(self);
}

/* each { |tuple| } — a new Array per call; self without a block → Enumerator. */
static VALUE
list_each(VALUE self)
{
    RETURN_SIZED_ENUMERATOR(self, 0, 0, list_enum_size);
    /* The list is frozen: nothing appends while the cursor reads. */
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, &get_list(self)->store, 0);
    rperf_interval_t iv;
    while (rperf_interval_store_next(&cur, &iv))
        rb_yield(tuple(&iv));
    return self;
}

static void
append_to_string(const char *chunk, size_t length, void *out)
{
    rb_str_cat(*(VALUE *)out, chunk, (long)length);
}

/* To an IO other than a File (a GzipWriter, a StringIO): one String
 * reused for every chunk, since their #write is done with it when it
 * returns, and a new String a chunk would leave the whole text behind as
 * garbage until the next GC. */
typedef struct io_target {
    VALUE io;
    VALUE buffer;
} io_target_t;

static void
write_to_io(const char *chunk, size_t length, void *target)
{
    io_target_t *t = target;
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

static void
write_to_fd(const char *chunk, size_t length, void *target)
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

static VALUE
json_text(const rperf_interval_store_t *store, rperf_interval_json_rows_t rows, size_t count)
{
    VALUE out = rb_str_buf_new((long)(count * 32 + 2));
    rperf_interval_json_write(store, rows, append_to_string, &out);
    return out;
}

/* Streams the JSON text to io a chunk at a time, never held whole. A File
 * gets the bytes at its descriptor (binary, no encoding conversion);
 * anything else with #write must be done with its argument when #write
 * returns (IO-likes, GzipWriter, StringIO are). Raises SystemCallError
 * when the descriptor refuses the bytes (disk full). */
static VALUE
stream_json(const rperf_interval_store_t *store, rperf_interval_json_rows_t rows, VALUE io)
{
    if (RB_TYPE_P(io, T_FILE)) {
        rb_io_flush(io);
        int fd = rb_io_descriptor(io);
        rperf_interval_json_write(store, rows, write_to_fd, &fd);
        return io;
    }
    io_target_t target = {io, rb_str_buf_new(RPERF_INTERVAL_JSON_CHUNK)};
    rperf_interval_json_write(store, rows, write_to_io, &target);
    RB_GC_GUARD(target.buffer);
    return io;
}

/* to_json(*) → "[[seq,state,start,end,label_set,stack],...]" */
static VALUE
list_to_json(int argc, VALUE *argv, VALUE self)
{
    (void)argc;
    (void)argv;
    const interval_list_t *list = get_list(self);
    return json_text(&list->store, RPERF_INTERVAL_JSON_INTERVALS, list->store.count);
}

/* write_json(io) → io: the to_json text, streamed (stream_json). */
static VALUE
list_write_json(VALUE self, VALUE io)
{
    return stream_json(&get_list(self)->store, RPERF_INTERVAL_JSON_INTERVALS, io);
}

/* encoded_bytesize → the bytes the encoded records take. */
static VALUE
list_encoded_bytesize(VALUE self)
{
    return SIZET2NUM(rperf_interval_store_bytes(&get_list(self)->store));
}

/* IntervalCauses: size, at, each, to_json, write_json as for Intervals,
 * over the blocked records with a known cause. */
static VALUE
view_size(VALUE self)
{
    return SIZET2NUM(get_view(self)->count);
}

static VALUE
view_enum_size(VALUE self, VALUE args, VALUE eobj)
{
    (void)args;
    (void)eobj;
    return view_size(self);
}

static VALUE
view_each(VALUE self)
{
    RETURN_SIZED_ENUMERATOR(self, 0, 0, view_enum_size);
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, view_store(self), 0);
    rperf_interval_t iv;
    while (rperf_interval_store_next(&cur, &iv)) {
        if (rperf_interval_json_has_cause(&iv))
            rb_yield(cause_tuple(&iv));
    }
    return self;
}

/* at(index): a scan, since rows are not indexed; rarely used (each is). */
static VALUE
view_at(VALUE self, VALUE vindex)
{
    long index = NUM2LONG(vindex);
    long count = (long)get_view(self)->count;
    if (index < 0)
        index += count;
    if (index < 0 || index >= count)
        return Qnil;
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, view_store(self), 0);
    rperf_interval_t iv;
    while (rperf_interval_store_next(&cur, &iv)) {
        if (rperf_interval_json_has_cause(&iv) && index-- == 0)
            return cause_tuple(&iv);
    }
    return Qnil;
}

static VALUE
view_to_json(int argc, VALUE *argv, VALUE self)
{
    (void)argc;
    (void)argv;
    return json_text(view_store(self), RPERF_INTERVAL_JSON_CAUSES, get_view(self)->count);
}

static VALUE
view_write_json(VALUE self, VALUE io)
{
    return stream_json(view_store(self), RPERF_INTERVAL_JSON_CAUSES, io);
}

void
rperf_interval_list_define(VALUE mContention)
{
    cIntervals = rb_define_class_under(mContention, "Intervals", rb_cObject);
    rb_undef_alloc_func(cIntervals);
    rb_define_method(cIntervals, "size", list_size, 0);
    rb_define_method(cIntervals, "at", list_at, 1);
    rb_define_method(cIntervals, "each", list_each, 0);
    rb_define_method(cIntervals, "to_json", list_to_json, -1);
    rb_define_method(cIntervals, "write_json", list_write_json, 1);
    rb_define_method(cIntervals, "encoded_bytesize", list_encoded_bytesize, 0);

    cIntervalCauses = rb_define_class_under(mContention, "IntervalCauses", rb_cObject);
    rb_undef_alloc_func(cIntervalCauses);
    rb_define_method(cIntervalCauses, "size", view_size, 0);
    rb_define_method(cIntervalCauses, "at", view_at, 1);
    rb_define_method(cIntervalCauses, "each", view_each, 0);
    rb_define_method(cIntervalCauses, "to_json", view_to_json, -1);
    rb_define_method(cIntervalCauses, "write_json", view_write_json, 1);
}
