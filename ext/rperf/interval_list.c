/*
 * interval_list.c — Rperf::Contention::Intervals: the packed timeline of a
 * report, read from Ruby one tuple at a time (size, at, each) or written
 * whole as JSON (to_json). Enumerable and the rest of the Array-like
 * surface are added in lib/rperf/contention.rb.
 */
#include "interval_list.h"

#include <stdlib.h>
#include <string.h>

typedef struct interval_list {
    rperf_interval_t *records;
    size_t count;
} interval_list_t;

static void
list_free(void *ptr)
{
    interval_list_t *list = ptr;
    free(list->records);
    ruby_xfree(list);
}

static size_t
list_memsize(const void *ptr)
{
    const interval_list_t *list = ptr;
    return sizeof(*list) + list->count * sizeof(rperf_interval_t);
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
rperf_interval_list_new(rperf_interval_t *records, size_t count)
{
    int state = 0;
    VALUE obj = rb_protect(make_empty, Qnil, &state);
    if (state) {
        free(records);
        rb_jump_tag(state);
    }
    interval_list_t *list = DATA_PTR(obj);
    list->records = records;
    list->count = count;
    return rb_obj_freeze(obj);
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
    return SIZET2NUM(get_list(self)->count);
}

/* at(index) → the tuple, or nil out of range; negative counts from the end. */
static VALUE
list_at(VALUE self, VALUE vindex)
{
    const interval_list_t *list = get_list(self);
    long index = NUM2LONG(vindex);
    if (index < 0)
        index += (long)list->count;
    if (index < 0 || (size_t)index >= list->count)
        return Qnil;
    return tuple(&list->records[index]);
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
    const interval_list_t *list = get_list(self);
    for (size_t i = 0; i < list->count; i++)
        rb_yield(tuple(&list->records[i]));
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

/* to_json(*) → "[[seq,state,start,end,label_set,stack],...]" */
static VALUE
list_to_json(int argc, VALUE *argv, VALUE self)
{
    (void)argc;
    (void)argv;
    const interval_list_t *list = get_list(self);
    /* Six numbers of at most 20 characters and their punctuation. */
    enum { RECORD_MAX = 6 * 21 + 3, CHUNK = 64 * 1024 };
    VALUE out = rb_str_buf_new((long)(list->count * 40 + 2));
    char chunk[CHUNK];
    size_t used = 0;
    chunk[used++] = '[';
    for (size_t i = 0; i < list->count; i++) {
        if (used + RECORD_MAX > CHUNK) {
            rb_str_cat(out, chunk, (long)used);
            used = 0;
        }
        const rperf_interval_t *iv = &list->records[i];
        const int64_t values[6] = {iv->thread_seq, iv->state,        iv->start_ns,
                                   iv->end_ns,     iv->label_set_id, iv->stack_id};
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
    rb_str_cat(out, chunk, (long)used);
    return out;
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
}
