/*
 * line_queue.c — the log writer's line queue (line_queue.h): a growing
 * byte buffer with counts, wrapped as Rperf::LineQueue.
 *
 * It does NOT know what a line says, where it goes or when the writer
 * wakes (line_queue.h).
 */
#include "line_queue.h"

#include "grow_array.h"

#include <ruby/encoding.h>
#include <stdlib.h>
#include <string.h>

typedef struct line_queue {
    char *bytes;
    size_t len, cap;
    long lines, max_lines;
    long long accepted, dropped;
    long pid; /* the process whose lines these are, 0: none yet */
    int served;
} line_queue_t;

static VALUE cLineQueue;

static void
queue_free(void *p)
{
    line_queue_t *q = p;
    free(q->bytes);
    ruby_xfree(q);
}

static size_t
queue_size(const void *p)
{
    const line_queue_t *q = p;
    return sizeof(*q) + q->cap;
}

static const rb_data_type_t queue_type = {
    .wrap_struct_name = "Rperf::LineQueue",
    .function = {.dmark = NULL, .dfree = queue_free, .dsize = queue_size},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static line_queue_t *
queue_of(VALUE obj)
{
    return rb_check_typeddata(obj, &queue_type);
}

static VALUE
queue_alloc(VALUE klass)
{
    line_queue_t *q;
    return TypedData_Make_Struct(klass, line_queue_t, &queue_type, q);
}

static VALUE
queue_initialize(VALUE self, VALUE max_lines)
{
    line_queue_t *q = queue_of(self);
    long max = NUM2LONG(max_lines);
    if (max < 1)
        rb_raise(rb_eArgError, "max_lines: %ld is invalid; expected an Integer >= 1", max);
    q->max_lines = max;
    return self;
}

/* A line of another process's queue: the parent's, not ours to write. */
static void
adopt(line_queue_t *q, long pid)
{
    if (q->pid == pid)
        return;
    q->pid = pid;
    q->len = 0;
    q->lines = 0;
    q->served = 0;
}

void
rperf_line_queue_check(VALUE obj)
{
    if (queue_of(obj)->max_lines < 1)
        rb_raise(rb_eArgError, "the line queue is not initialized");
}

VALUE
rperf_line_queue_append(VALUE obj, long pid, const rperf_line_part_t *parts, int n)
{
    line_queue_t *q = DATA_PTR(obj);
    size_t need = 1;
    for (int i = 0; i < n; i++)
        need += parts[i].len;
    adopt(q, pid);
    if (q->lines >= q->max_lines) {
        q->dropped++;
        return Qnil;
    }
    if (rperf_grow_array((void **)&q->bytes, &q->cap, q->len + need, 1, 4096) < 0)
        rb_memerror();
    for (int i = 0; i < n; i++) {
        memcpy(q->bytes + q->len, parts[i].bytes, parts[i].len);
        q->len += parts[i].len;
    }
    q->bytes[q->len++] = '\n';
    q->lines++;
    q->accepted++;
    return q->served ? LONG2NUM(q->lines) : Qfalse;
}

/* Raises nothing: its frame holds an addressed local, and a raise
 * (longjmp) out of it would leave that local's guard bytes marked under
 * ASan (line_queue.h). */
static VALUE __attribute__((noinline)) push_string(VALUE self, long pid, VALUE line)
{
    rperf_line_part_t part = {RSTRING_PTR(line), (size_t)RSTRING_LEN(line)};
    return rperf_line_queue_append(self, pid, &part, 1);
}

static VALUE
queue_push(VALUE self, VALUE line, VALUE pid)
{
    Check_Type(line, T_STRING);
    long p = NUM2LONG(pid);
    rperf_line_queue_check(self);
    return push_string(self, p, line);
}

static VALUE
queue_take(VALUE self)
{
    line_queue_t *q = queue_of(self);
    if (!q->lines)
        return Qnil;
    /* The String is made before the queue empties: if making it raises,
     * the lines stay queued. */
    VALUE text = rb_utf8_str_new(q->bytes, (long)q->len);
    VALUE out = rb_assoc_new(text, LONG2NUM(q->lines));
    q->len = 0;
    q->lines = 0;
    /* A burst's buffer is not kept for the quiet that follows. */
    if (q->cap > 1 << 20) {
        free(q->bytes);
        q->bytes = NULL;
        q->cap = 0;
    }
    return out;
}

static VALUE
queue_serve(VALUE self, VALUE pid)
{
    line_queue_t *q = queue_of(self);
    adopt(q, NUM2LONG(pid));
    q->served = 1;
    return Qtrue;
}

static VALUE
queue_retire(VALUE self)
{
    line_queue_t *q = queue_of(self);
    if (q->lines)
        return Qfalse;
    q->served = 0;
    return Qtrue;
}

static VALUE
queue_lines(VALUE self)
{
    return LONG2NUM(queue_of(self)->lines);
}

static VALUE
queue_accepted(VALUE self)
{
    return LL2NUM(queue_of(self)->accepted);
}

static VALUE
queue_dropped(VALUE self)
{
    return LL2NUM(queue_of(self)->dropped);
}

void
rperf_line_queue_define(VALUE mRperf)
{
    cLineQueue = rb_define_class_under(mRperf, "LineQueue", rb_cObject);
    rb_define_alloc_func(cLineQueue, queue_alloc);
    rb_define_method(cLineQueue, "initialize", queue_initialize, 1);
    rb_define_method(cLineQueue, "push", queue_push, 2);
    rb_define_method(cLineQueue, "take", queue_take, 0);
    rb_define_method(cLineQueue, "serve", queue_serve, 1);
    rb_define_method(cLineQueue, "retire", queue_retire, 0);
    rb_define_method(cLineQueue, "size", queue_lines, 0);
    rb_define_method(cLineQueue, "accepted", queue_accepted, 0);
    rb_define_method(cLineQueue, "dropped", queue_dropped, 0);
}
