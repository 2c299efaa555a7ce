/*
 * interval_list.c — Rperf::Contention::Intervals: the encoded timeline of
 * a report (sorted runs, interval_store.h and interval_sort.h), read from
 * Ruby one tuple at a time (size, at, each) or written as JSON, whole
 * (to_json) or streamed to an IO (write_json). Enumerable and the rest of
 * the Array-like surface are added in lib/rperf/contention.rb. Where the
 * text goes is interval_sink.c's.
 */
#include "interval_list.h"
#include "interval_sink.h"
#include "interval_prefetch.h"
#include "interval_json.h"
#include "interval_sort.h"
#include "errors.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <ruby/io.h>
#include <ruby/thread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct interval_list {
    rperf_interval_store_t *runs; /* sorted runs (interval_sort.h), owned */
    size_t nruns;
    size_t count; /* records in all runs */
    /* The one list `at` reads: the run itself when there is at most one,
     * else the runs' merge into `merged`, made on the first `at` (a merge
     * at stop was a quarter of a large stop, and save and each stream the
     * runs' merge instead). Set once, under merge_lock: the frozen list is
     * shared between Ractors, whose threads run in parallel. The runs are
     * kept after the merge: a reader in another Ractor may be streaming
     * them. */
    _Atomic(const rperf_interval_store_t *) indexed;
    rperf_interval_store_t merged;
    pthread_mutex_t merge_lock;
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
    for (size_t i = 0; i < list->nruns; i++)
        rperf_interval_store_free(&list->runs[i]);
    free(list->runs);
    rperf_interval_store_free(&list->merged);
    pthread_mutex_destroy(&list->merge_lock);
    ruby_xfree(list);
}

static size_t
list_memsize(const void *ptr)
{
    const interval_list_t *list = ptr;
    size_t bytes = sizeof(*list) + rperf_interval_store_bytes(&list->merged);
    for (size_t i = 0; i < list->nruns; i++)
        bytes += sizeof(list->runs[i]) + rperf_interval_store_bytes(&list->runs[i]);
    return bytes;
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

static interval_list_t *
get_list(VALUE self)
{
    return rb_check_typeddata(self, &list_type);
}

static VALUE
make_empty(VALUE unused)
{
    (void)unused;
    interval_list_t *list;
    VALUE obj = TypedData_Make_Struct(cIntervals, interval_list_t, &list_type, list);
    pthread_mutex_init(&list->merge_lock, NULL);
    return obj;
}

static void
free_runs(rperf_interval_store_t *runs, size_t nruns)
{
    for (size_t i = 0; i < nruns; i++)
        rperf_interval_store_free(&runs[i]);
    free(runs);
}

VALUE
rperf_interval_list_adopt_runs(rperf_interval_store_t *runs, size_t nruns)
{
    int state = 0;
    VALUE obj = rb_protect(make_empty, Qnil, &state);
    if (state) {
        free_runs(runs, nruns);
        rb_jump_tag(state);
    }
    interval_list_t *list = DATA_PTR(obj);
    list->runs = runs;
    list->nruns = nruns;
    for (size_t i = 0; i < nruns; i++) {
        rperf_interval_store_shrink(&runs[i]);
        list->count += runs[i].count;
    }
    if (nruns <= 1)
        atomic_store(&list->indexed, nruns ? &runs[0] : &list->merged);
    return rb_obj_freeze(obj);
}

VALUE
rperf_interval_list_adopt(rperf_interval_store_t *store)
{
    rperf_interval_store_t *runs = malloc(sizeof(*runs));
    if (!runs) {
        rperf_interval_store_free(store);
        rb_raise(rperf_eResourceError, "rperf: cannot allocate the timeline");
    }
    runs[0] = *store;
    rperf_interval_store_init(store);
    return rperf_interval_list_adopt_runs(runs, 1);
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

/* The list in one store for reading at an index: merged on first need. */
static const rperf_interval_store_t *
indexed_store(interval_list_t *list)
{
    const rperf_interval_store_t *store = atomic_load(&list->indexed);
    if (store)
        return store;
    /* Without the GVL would let this Ractor's other threads run, but a
     * merge of a million records takes milliseconds: not worth the
     * hand-offs. Another Ractor's thread waits on the lock with its own
     * GVL, which the merge never needs. */
    pthread_mutex_lock(&list->merge_lock);
    store = atomic_load(&list->indexed);
    int failed = 0;
    if (!store) {
        if (rperf_interval_merge_runs(list->runs, list->nruns, &list->merged) < 0) {
            rperf_interval_store_free(&list->merged);
            failed = 1;
        } else {
            rperf_interval_store_shrink(&list->merged);
            store = &list->merged;
            atomic_store(&list->indexed, store);
        }
    }
    pthread_mutex_unlock(&list->merge_lock);
    if (failed)
        rb_raise(rperf_eResourceError, "rperf: cannot allocate the timeline");
    return store;
}

/* The list's records in order, a batch at a time: from the one store when
 * there is one, else through the runs' merge (held until reader_close,
 * which must follow even when Ruby code in between raises: rb_ensure). */
typedef struct list_reader {
    rperf_interval_store_cursor_t cur;
    rperf_interval_merge_t *merge;
} list_reader_t;

static void
reader_open(list_reader_t *r, interval_list_t *list)
{
    memset(r, 0, sizeof(*r));
    const rperf_interval_store_t *store = atomic_load(&list->indexed);
    if (store) {
        rperf_interval_store_cursor_init(&r->cur, store, 0);
        return;
    }
    r->merge = rperf_interval_merge_new(list->runs, list->nruns);
    if (!r->merge)
        rb_raise(rperf_eResourceError, "rperf: cannot allocate the timeline's merge");
}

static size_t
reader_read(list_reader_t *r, rperf_interval_t *out, size_t max)
{
    return r->merge ? rperf_interval_merge_read(r->merge, out, max)
                    : rperf_interval_store_read(&r->cur, out, NULL, max);
}

static VALUE
reader_close(VALUE arg)
{
    list_reader_t *r = (list_reader_t *)arg;
    rperf_interval_merge_free(r->merge);
    r->merge = NULL;
    return Qnil;
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

static interval_list_t *
view_list(VALUE self)
{
    return get_list(get_view(self)->intervals);
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
    return SIZET2NUM(get_list(self)->count);
}

/* at(index) → the tuple, or nil out of range; negative counts from the end. */
static VALUE
list_at(VALUE self, VALUE vindex)
{
    interval_list_t *list = get_list(self);
    long index = NUM2LONG(vindex);
    if (index < 0)
        index += (long)list->count;
    if (index < 0 || (size_t)index >= list->count)
        return Qnil;
    rperf_interval_t iv;
    if (rperf_interval_store_get(indexed_store(list), (size_t)index, &iv) < 0)
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

/* A walk over every record of a list in order, handing each (those of the
 * causes' rows only, with causes) to Ruby as a tuple; `stop_at` counts the
 * rows down to the one wanted (view_at), SIZE_MAX for all. */
typedef struct walk {
    list_reader_t reader;
    int causes;
    size_t stop_at;
    VALUE found; /* the row stop_at named, or nil */
} walk_t;

static VALUE
walk_body(VALUE arg)
{
    walk_t *w = (walk_t *)arg;
    enum { BATCH = 64 };
    rperf_interval_t batch[BATCH];
    for (size_t got; (got = reader_read(&w->reader, batch, BATCH)) > 0;) {
        for (size_t i = 0; i < got; i++) {
            if (w->causes && !rperf_interval_json_has_cause(&batch[i]))
                continue;
            if (w->stop_at != SIZE_MAX) {
                if (w->stop_at-- == 0) {
                    w->found = cause_tuple(&batch[i]);
                    return Qnil;
                }
                continue;
            }
            rb_yield(w->causes ? cause_tuple(&batch[i]) : tuple(&batch[i]));
        }
    }
    return Qnil;
}

static VALUE
walk(interval_list_t *list, int causes, size_t stop_at)
{
    walk_t w = {.causes = causes, .stop_at = stop_at, .found = Qnil};
    reader_open(&w.reader, list);
    rb_ensure(walk_body, (VALUE)&w, reader_close, (VALUE)&w.reader);
    return w.found;
}

/* each { |tuple| } — a new Array per call; self without a block → Enumerator. */
static VALUE
list_each(VALUE self)
{
    RETURN_SIZED_ENUMERATOR(self, 0, 0, list_enum_size);
    walk(get_list(self), 0, SIZE_MAX);
    return self;
}


/* One pass over a list writing the JSON text of its rows and, with
 * `spill` (a descriptor >= 0), of its causes' rows to that file. A large
 * list's records are merged and decoded on a worker thread while this one
 * formats and writes the batch before (interval_prefetch.h). The chunks,
 * the worker and the reader are released by json_pass_close, also when a
 * write raises. */
typedef struct json_pass {
    list_reader_t reader;
    rperf_interval_prefetch_t *prefetch;
    char *chunks; /* RPERF_INTERVAL_JSON_CHUNK each: the rows', the causes' */
    rperf_interval_json_rows_t rows;
    rperf_interval_sink_t *out;
    int spill;
} json_pass_t;

/* Records read ahead a batch at a time: a hand-over between the threads
 * costs a wake-up, so a batch is large (2 x 640 KiB); a list shorter than
 * a few batches is read on this thread. */
enum { PREFETCH_BATCH = 16384, PREFETCH_MIN_RECORDS = 4 * PREFETCH_BATCH };

static size_t
read_list(void *source, rperf_interval_t *out, size_t max)
{
    return reader_read(source, out, max);
}

static VALUE
json_pass_body(VALUE arg)
{
    json_pass_t *p = (json_pass_t *)arg;
    rperf_interval_json_out_t rows, causes;
    rperf_interval_json_begin(&rows, p->rows, p->chunks, p->out->emit, p->out->arg);
    if (p->spill >= 0)
        rperf_interval_json_begin(&causes, RPERF_INTERVAL_JSON_CAUSES, p->chunks + RPERF_INTERVAL_JSON_CHUNK,
                                  rperf_interval_write_to_fd, &p->spill);
    const rperf_interval_t *batch;
    for (size_t got; (got = rperf_interval_prefetch_next(p->prefetch, &batch)) > 0;) {
        if (p->spill >= 0)
            rperf_interval_json_put_pair(&rows, &causes, batch, got);
        else
            rperf_interval_json_put(&rows, batch, got);
    }
    rperf_interval_json_end(&rows);
    if (p->spill >= 0)
        rperf_interval_json_end(&causes);
    return Qnil;
}

static VALUE
json_pass_close(VALUE arg)
{
    json_pass_t *p = (json_pass_t *)arg;
    rperf_interval_prefetch_free(p->prefetch); /* joins the worker, which reads the reader */
    p->prefetch = NULL;
    reader_close((VALUE)&p->reader);
    free(p->chunks);
    p->chunks = NULL;
    return Qnil;
}

static void
json_pass(interval_list_t *list, rperf_interval_json_rows_t rows, rperf_interval_sink_t *out, int spill)
{
    json_pass_t p = {.rows = rows, .out = out, .spill = spill};
    reader_open(&p.reader, list); /* raises while nothing is held */
    p.chunks = malloc((spill >= 0 ? 2 : 1) * (size_t)RPERF_INTERVAL_JSON_CHUNK);
    int threaded = list->count >= PREFETCH_MIN_RECORDS;
    p.prefetch = p.chunks
                     ? rperf_interval_prefetch_new(read_list, &p.reader, threaded ? PREFETCH_BATCH : 128, threaded)
                     : NULL;
    if (!p.prefetch) {
        json_pass_close((VALUE)&p);
        rb_raise(rperf_eResourceError, "rperf: cannot allocate the timeline's text buffer");
    }
    rb_ensure(json_pass_body, (VALUE)&p, json_pass_close, (VALUE)&p);
}

static VALUE
json_text(interval_list_t *list, rperf_interval_json_rows_t rows, size_t count)
{
    rperf_interval_sink_t out;
    rperf_interval_sink_to_string(&out, count * 32 + 2);
    json_pass(list, rows, &out, -1);
    return out.string;
}

/* Streams the JSON text to io a chunk at a time, never held whole. Raises
 * SystemCallError when the descriptor refuses the bytes (disk full). */
static VALUE
stream_json(interval_list_t *list, rperf_interval_json_rows_t rows, VALUE io)
{
    rperf_interval_sink_t out;
    rperf_interval_sink_to_io(&out, io);
    json_pass(list, rows, &out, -1);
    RB_GC_GUARD(out.io.buffer);
    return io;
}

/* to_json(*) → "[[seq,state,start,end,label_set,stack],...]" */
static VALUE
list_to_json(int argc, VALUE *argv, VALUE self)
{
    (void)argc;
    (void)argv;
    interval_list_t *list = get_list(self);
    return json_text(list, RPERF_INTERVAL_JSON_INTERVALS, list->count);
}

/* write_json(io) → io: the to_json text, streamed (stream_json). */
static VALUE
list_write_json(VALUE self, VALUE io)
{
    return stream_json(get_list(self), RPERF_INTERVAL_JSON_INTERVALS, io);
}


typedef struct pair_write {
    interval_list_t *list;
    rperf_interval_sink_t out;
    VALUE between;
    int spill;
} pair_write_t;

static VALUE
pair_write_body(VALUE arg)
{
    pair_write_t *w = (pair_write_t *)arg;
    json_pass(w->list, RPERF_INTERVAL_JSON_INTERVALS, &w->out, w->spill);
    w->out.emit(RSTRING_PTR(w->between), (size_t)RSTRING_LEN(w->between), w->out.arg);
    off_t length = lseek(w->spill, 0, SEEK_CUR);
    if (length < 0)
        rb_sys_fail("rperf: the timeline's causes");
    rperf_interval_spill_copy(w->spill, (size_t)length, &w->out);
    return Qnil;
}

static VALUE
pair_write_close(VALUE arg)
{
    close(((pair_write_t *)arg)->spill);
    return Qnil;
}

/* write_json_with_causes(io, between, causes) → io: the to_json text, the
 * String between, and causes' JSON text, streamed. When causes is this
 * list's IntervalCauses both come from one read of the records: the
 * causes' text goes to a temporary file as the timeline's goes to io, and
 * is copied after `between`; without a temporary file the records are read
 * twice. Any other causes is written by its own write_json(io). */
static VALUE
list_write_json_with_causes(VALUE self, VALUE io, VALUE between, VALUE causes)
{
    interval_list_t *list = get_list(self);
    StringValue(between);
    int own = rb_typeddata_is_kind_of(causes, &view_type) && get_view(causes)->intervals == self;
    pair_write_t w = {.list = list, .between = between};
    rperf_interval_sink_to_io(&w.out, io);
    w.spill = own ? rperf_interval_spill_open(io) : -1;
    if (w.spill < 0) {
        json_pass(list, RPERF_INTERVAL_JSON_INTERVALS, &w.out, -1);
        w.out.emit(RSTRING_PTR(between), (size_t)RSTRING_LEN(between), w.out.arg);
        if (own)
            json_pass(list, RPERF_INTERVAL_JSON_CAUSES, &w.out, -1);
        else
            rb_funcall(causes, rb_intern("write_json"), 1, io);
    } else {
        rb_ensure(pair_write_body, (VALUE)&w, pair_write_close, (VALUE)&w);
    }
    RB_GC_GUARD(w.out.io.buffer);
    RB_GC_GUARD(between);
    return io;
}

/* encoded_bytesize → the bytes the encoded records take. */
static VALUE
list_encoded_bytesize(VALUE self)
{
    interval_list_t *list = get_list(self);
    size_t bytes = 0;
    for (size_t i = 0; i < list->nruns; i++)
        bytes += rperf_interval_store_bytes(&list->runs[i]);
    return SIZET2NUM(bytes);
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
    walk(view_list(self), 1, SIZE_MAX);
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
    return walk(view_list(self), 1, (size_t)index);
}

static VALUE
view_to_json(int argc, VALUE *argv, VALUE self)
{
    (void)argc;
    (void)argv;
    return json_text(view_list(self), RPERF_INTERVAL_JSON_CAUSES, get_view(self)->count);
}

static VALUE
view_write_json(VALUE self, VALUE io)
{
    return stream_json(view_list(self), RPERF_INTERVAL_JSON_CAUSES, io);
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
    rb_define_method(cIntervals, "write_json_with_causes", list_write_json_with_causes, 3);
    rb_define_method(cIntervals, "encoded_bytesize", list_encoded_bytesize, 0);

    cIntervalCauses = rb_define_class_under(mContention, "IntervalCauses", rb_cObject);
    rb_undef_alloc_func(cIntervalCauses);
    rb_define_method(cIntervalCauses, "size", view_size, 0);
    rb_define_method(cIntervalCauses, "at", view_at, 1);
    rb_define_method(cIntervalCauses, "each", view_each, 0);
    rb_define_method(cIntervalCauses, "to_json", view_to_json, -1);
    rb_define_method(cIntervalCauses, "write_json", view_write_json, 1);
}
