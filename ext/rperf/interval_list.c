/*
 * interval_list.c — Rperf::Contention::Intervals: the encoded timeline of
 * a report (interval_store.h), read from Ruby one tuple at a time (size,
 * at, each) or written as JSON, whole (to_json) or streamed to an IO
 * (write_json). Enumerable and the rest of the Array-like
 * surface are added in lib/rperf/contention.rb.
 */
#include "interval_list.h"
#include "errors.h"

#include <stdlib.h>
#include <string.h>

typedef struct interval_list {
    rperf_interval_store_t store;
} interval_list_t;

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

static VALUE cIntervals;

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

/* Decimal digits of v at the end of buf; returns the first digit. */
static char *
format_int(char *end, int64_t v)
{
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *p = end;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return p;
}

/* The JSON text of the list, a chunk at a time: each full chunk (and the
 * last one) goes to emit(chunk, length, arg). */
static void
write_json(const rperf_interval_store_t *store, void (*emit)(const char *, size_t, VALUE), VALUE arg)
{
    /* Six numbers of at most 20 characters and their punctuation. */
    enum { RECORD_MAX = 6 * 21 + 3, CHUNK = 64 * 1024 };
    char chunk[CHUNK];
    size_t used = 0;
    chunk[used++] = '[';
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, store, 0);
    rperf_interval_t iv;
    for (size_t i = 0; rperf_interval_store_next(&cur, &iv); i++) {
        if (used + RECORD_MAX > CHUNK) {
            emit(chunk, used, arg);
            used = 0;
        }
        const int64_t values[6] = {iv.thread_seq, iv.state, iv.start_ns, iv.end_ns, iv.label_set_id, iv.stack_id};
        if (i)
            chunk[used++] = ',';
        chunk[used++] = '[';
        for (int k = 0; k < 6; k++) {
            char digits[21];
            char *first = format_int(digits + sizeof(digits), values[k]);
            size_t len = (size_t)(digits + sizeof(digits) - first);
            if (k)
                chunk[used++] = ',';
            memcpy(chunk + used, first, len);
            used += len;
        }
        chunk[used++] = ']';
    }
    chunk[used++] = ']';
    emit(chunk, used, arg);
}

static void
append_to_string(const char *chunk, size_t length, VALUE out)
{
    rb_str_cat(out, chunk, (long)length);
}

static void
write_to_io(const char *chunk, size_t length, VALUE io)
{
    rb_funcall(io, rb_intern("write"), 1, rb_str_new(chunk, (long)length));
}

/* to_json(*) → "[[seq,state,start,end,label_set,stack],...]" */
static VALUE
list_to_json(int argc, VALUE *argv, VALUE self)
{
    (void)argc;
    (void)argv;
    const interval_list_t *list = get_list(self);
    VALUE out = rb_str_buf_new((long)(list->store.count * 32 + 2));
    write_json(&list->store, append_to_string, out);
    return out;
}

/* write_json(io) → io: the to_json text written to io (anything with
 * #write) 64 KiB at a time, never held whole. */
static VALUE
list_write_json(VALUE self, VALUE io)
{
    write_json(&get_list(self)->store, write_to_io, io);
    return io;
}

/* encoded_bytesize → the bytes the encoded records take. */
static VALUE
list_encoded_bytesize(VALUE self)
{
    return SIZET2NUM(rperf_interval_store_bytes(&get_list(self)->store));
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
}
