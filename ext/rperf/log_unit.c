/*
 * log_unit.c — a contention log unit counted in C (log_unit.h): its reads
 * kept in a Rperf::UnitReads, its windows and the line's numbers computed
 * from them as Rperf::Log::Measurement does (from_arrays, since_runnable)
 * and written as ContentionLog#unit_line writes them; a request's whole
 * way (begin, end, after-reply hook) where it needs no Ruby.
 *
 * It does NOT make the line's start (the log's prefix cache does), does
 * NOT admit label sets, and hands every unusual unit to the log's Ruby
 * (lib/rperf/contention_log.rb).
 */
#include "log_unit.h"

#include <math.h>
#include <stddef.h>
#include <ruby/encoding.h>
#include <string.h>
#include <unistd.h>

#include "line_queue.h"
#include "log_numbers.h"

enum { READ_BEGIN = 0, READ_END, READ_AFTER, READ_PRIOR, READS };
enum { UNIT_BEGUN = 1, UNIT_ENDED, UNIT_LOST };

/* unit, cfg, thread and labels are set only by _c_request_begin (else
 * Qfalse): the Ruby Unit these reads count, its log's request config (an
 * Array, REQ_* below), and the Unit's @thread and @labels, which never
 * change. */
typedef struct unit_reads {
    unsigned char have[READS]; /* a read is only read where it is had */
    int state;
    VALUE unit, cfg, thread, labels;
    int64_t read[READS][COUNTER_COUNT];
} unit_reads_t;

/* The request config ContentionLog#initialize makes (@c_request), by index. */
enum {
    REQ_LOG = 0,
    REQ_PENDING,
    REQ_LAST_ENDS,
    REQ_KNOWN_LABELS,
    REQ_WRITER,
    REQ_QUEUE,
    REQ_ENDS,
    REQ_KEYS,
    REQ_MS,
    REQ_METRICS,
    REQ_BATCH,
    REQ_UNIT_CLASS,
    REQ_KIND,
    REQ_SIZE
};

/* A window or a unit's numbers: wall, then the states in report order. */
typedef struct unit_numbers {
    int64_t wall;
    int64_t state[RPERF_STATE_COUNT];
    int64_t cause[RPERF_CAUSE_COUNT];
} unit_numbers_t;

static const rperf_log_unit_ops_t *unit_ops;
static VALUE cUnitReads;
static ID id_fast_label_id, id_fast_label_ids, id_round, id_fdiv;

static size_t
reads_size(const void *p)
{
    return p ? sizeof(unit_reads_t) : 0;
}

/* Every request makes a unit's reads, so their blocks come from plain
 * malloc through a small free list, not from Ruby's allocator: that one
 * counts each block toward the limits that start collections (major ones
 * included) and asks malloc for its size on both ends. A block freed by a
 * GC sweep waits in the list for the next unit. The list is shared by
 * every Ractor: a spin flag guards it, held for a pointer swap only. */
enum { READS_POOL_MAX = 256 };
static struct {
    unit_reads_t *head; /* the next free block is stored in its first bytes */
    int count;
    char busy;
} reads_pool;

static void
pool_lock(void)
{
    while (__atomic_test_and_set(&reads_pool.busy, __ATOMIC_ACQUIRE))
        ;
}

static void
pool_unlock(void)
{
    __atomic_clear(&reads_pool.busy, __ATOMIC_RELEASE);
}

static void
reads_free(void *p)
{
    if (!p)
        return;
    pool_lock();
    int kept = reads_pool.count < READS_POOL_MAX;
    if (kept) {
        memcpy(p, &reads_pool.head, sizeof(reads_pool.head));
        reads_pool.head = p;
        reads_pool.count++;
    }
    pool_unlock();
    if (!kept)
        free(p);
}

/* A block with no reads (its header zeroed; reads' bytes are only read
 * where `have` says so): from the free list, else from malloc; NULL when
 * malloc fails. Allocates no Ruby object, so no GC runs inside it. */
static unit_reads_t *
reads_block(void)
{
    pool_lock();
    unit_reads_t *u = reads_pool.head;
    if (u) {
        memcpy(&reads_pool.head, u, sizeof(reads_pool.head));
        reads_pool.count--;
    }
    pool_unlock();
    if (!u)
        u = malloc(sizeof(*u));
    if (u)
        memset(u, 0, offsetof(unit_reads_t, read));
    return u;
}

static void
reads_mark(void *p)
{
    unit_reads_t *u = p;
    if (!u)
        return;
    rb_gc_mark(u->unit);
    rb_gc_mark(u->cfg);
    rb_gc_mark(u->thread);
    rb_gc_mark(u->labels);
}

static const rb_data_type_t reads_type = {
    .wrap_struct_name = "Rperf::UnitReads",
    .function = {.dmark = reads_mark, .dfree = reads_free, .dsize = reads_size},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

static unit_reads_t *
reads_of(VALUE obj)
{
    return rb_check_typeddata(obj, &reads_type);
}

static int
is_reads(VALUE obj)
{
    return RB_TYPE_P(obj, T_DATA) && RTYPEDDATA_P(obj) && RTYPEDDATA_TYPE(obj) == &reads_type;
}

/* The read a next unit starts from: the after-reply read, else the end. */
static const int64_t *
last_read(const unit_reads_t *u)
{
    if (u->have[READ_AFTER])
        return u->read[READ_AFTER];
    return u->have[READ_END] ? u->read[READ_END] : NULL;
}

/* prior into u's PRIOR read when it is one: a UnitReads or an Array of
 * Integers as thread_counters makes (Ruby's before_window takes no other). */
static void
take_prior(unit_reads_t *u, VALUE prior)
{
    if (is_reads(prior)) {
        const int64_t *last = last_read(RTYPEDDATA_DATA(prior));
        if (last) {
            memcpy(u->read[READ_PRIOR], last, sizeof(u->read[READ_PRIOR]));
            u->have[READ_PRIOR] = 1;
        }
        return;
    }
    if (!RB_TYPE_P(prior, T_ARRAY) || RARRAY_LEN(prior) < COUNTER_COUNT)
        return;
    for (long i = 0; i < COUNTER_COUNT; i++) {
        VALUE v = RARRAY_AREF(prior, i);
        if (!FIXNUM_P(v))
            return;
        u->read[READ_PRIOR][i] = FIX2LONG(v);
    }
    u->have[READ_PRIOR] = 1;
}

/* A begun unit's reads, or nil with nothing done; the caller checked
 * label_free() (the begin step checks it again, where it counts). */
static VALUE
begin_reads(VALUE self, VALUE labels, VALUE prior)
{
    /* A set seen before is in Rperf.fast_label_id's identity cache: read
     * here, it costs no Ruby call (the method fills it on a miss). */
    VALUE cache = rb_attr_get(self, id_fast_label_ids);
    VALUE id = RB_TYPE_P(cache, T_HASH) ? rb_hash_lookup2(cache, labels, Qundef) : Qundef;
    if (id == Qundef)
        id = rb_funcall(self, id_fast_label_id, 1, labels);
    if (!FIXNUM_P(id))
        return Qnil;
    /* Allocated before the read: allocating may run the GC hook on this
     * thread and move its totals past the read's clock. The object first,
     * its block then: a GC the object's allocation runs may refill the list. */
    VALUE obj = TypedData_Wrap_Struct(cUnitReads, &reads_type, NULL);
    unit_reads_t *u = reads_block();
    if (!u)
        rb_memerror();
    RTYPEDDATA_DATA(obj) = u; /* zeroed: unit, cfg, thread and labels are Qfalse */
    take_prior(u, prior);
    if (!unit_ops->begin((int)FIX2LONG(id), u->read[READ_BEGIN]))
        return Qnil;
    u->have[READ_BEGIN] = 1;
    u->state = UNIT_BEGUN;
    return obj;
}

/* _c_unit_begin: a begun unit's reads, or nil with nothing done. */
static VALUE
unit_begin(VALUE self, VALUE labels, VALUE prior)
{
    return unit_ops->label_free() ? begin_reads(self, labels, prior) : Qnil;
}

/* A begun unit's end read (the profiler's end step); 0 when it was not
 * running, or when the profile went away (then it is lost). */
static int
end_reads(unit_reads_t *u)
{
    if (u->state != UNIT_BEGUN)
        return 0;
    if (!unit_ops->end(u->read[READ_END])) {
        u->state = UNIT_LOST;
        return 0;
    }
    u->have[READ_END] = 1;
    u->state = UNIT_ENDED;
    return 1;
}

static VALUE
unit_end(VALUE self, VALUE obj)
{
    (void)self;
    return end_reads(reads_of(obj)) ? Qtrue : Qfalse;
}

/* An ended unit's after-reply read; 0 when not ended, already read, or
 * the profile went away. */
static int
after_reads(unit_reads_t *u)
{
    if (u->state != UNIT_ENDED || u->have[READ_AFTER])
        return 0;
    if (!unit_ops->read(u->read[READ_AFTER]))
        return 0;
    u->have[READ_AFTER] = 1;
    return 1;
}

static VALUE
unit_after(VALUE self, VALUE obj)
{
    (void)self;
    return after_reads(reads_of(obj)) ? Qtrue : Qfalse;
}

static VALUE
unit_read(VALUE self, VALUE obj, VALUE which)
{
    (void)self;
    unit_reads_t *u = reads_of(obj);
    int w = NUM2INT(which);
    const int64_t *r;
    if (w == READS)
        r = last_read(u);
    else if (w >= 0 && w < READS)
        r = u->have[w] ? u->read[w] : NULL;
    else
        rb_raise(rb_eArgError, "no read %d", w);
    if (!r)
        return Qnil;
    VALUE ary = rb_ary_new_capa(COUNTER_COUNT);
    for (long i = 0; i < COUNTER_COUNT; i++)
        rb_ary_push(ary, LL2NUM(r[i]));
    return ary;
}

static int64_t
clamp0(int64_t v)
{
    return v < 0 ? 0 : v;
}

/* after - before as Measurement.from_arrays: wall as is, states clamped,
 * causes only when it blocked, each only when it grew. */
static void
between(const int64_t *b, const int64_t *a, unit_numbers_t *m)
{
    m->wall = a[COUNTER_CLOCK] - b[COUNTER_CLOCK];
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        m->state[i] = clamp0(a[COUNTER_TOTALS + i] - b[COUNTER_TOTALS + i]);
    int blocked = a[COUNTER_TOTALS + RPERF_STATE_BLOCKED] - b[COUNTER_TOTALS + RPERF_STATE_BLOCKED] > 0;
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++)
        m->cause[c] = blocked ? clamp0(a[COUNTER_CAUSES + c] - b[COUNTER_CAUSES + c]) : 0;
}

/* The before window as ContentionLog#before_window: since the thread last
 * became runnable when that was after the prior read, else since the
 * prior read; 0 when neither is known. */
static int
before_window(const unit_reads_t *u, unit_numbers_t *m)
{
    const int64_t *start = u->read[READ_BEGIN];
    int64_t at = start[COUNTER_RUNNABLE];
    if (at > 0 && (!u->have[READ_PRIOR] || at >= u->read[READ_PRIOR][COUNTER_CLOCK])) {
        memset(m, 0, sizeof(*m));
        m->wall = start[COUNTER_CLOCK] - at;
        for (int i = 0; i < RPERF_STATE_COUNT; i++)
            m->state[i] = clamp0(start[COUNTER_TOTALS + i] - start[COUNTER_RUNNABLE_TOTALS + i]);
        return 1;
    }
    if (!u->have[READ_PRIOR])
        return 0;
    between(u->read[READ_PRIOR], start, m);
    return 1;
}

/* The numbers' text, made on the stack and appended to the line at once:
 * the keys are at most KEYS_MAX bytes (checked), the numbers at most
 * RPERF_LOG_NUMBER_MAX each. */
enum { KEYS_MAX = 1024, NUMBERS_MAX = 40 };
typedef struct text {
    char data[KEYS_MAX + NUMBERS_MAX * (RPERF_LOG_NUMBER_MAX + 4)];
    size_t len;
} text_t;

/* Keys Arrays a line has read, their bytes packed: a line then reads a few
 * hundred bytes in a row, not 27 to 30 Strings spread over the heap (in a
 * server, misses of the cache: docs/performance.md). Only a frozen Array
 * of frozen Strings is packed (it cannot change), and it is kept alive for
 * good, so its address names it. A log's keys are one of four constants:
 * past KEY_PACKS Arrays, keys are read from their Strings. An entry is
 * published once and never changes, so any Ractor reads it unlocked. */
enum { KEY_PACKS = 8, KEYS_COUNT_MAX = 32 };
typedef struct key_pack {
    VALUE keys;
    uint16_t off[KEYS_COUNT_MAX], len[KEYS_COUNT_MAX];
    char bytes[KEYS_MAX];
} key_pack_t;
static key_pack_t *key_packs[KEY_PACKS];

static const key_pack_t *
key_pack_find(VALUE keys)
{
    for (int i = 0; i < KEY_PACKS; i++) {
        const key_pack_t *p = __atomic_load_n(&key_packs[i], __ATOMIC_ACQUIRE);
        if (!p)
            return NULL;
        if (p->keys == keys)
            return p;
    }
    return NULL;
}

/* keys checked (Strings, at most KEYS_MAX bytes in all): packed when it
 * can be. Raises only NoMemoryError, before a pack is made; a pack malloc
 * cannot make is not made. */
static void
key_pack_add(VALUE keys)
{
    long n = RARRAY_LEN(keys);
    if (n > KEYS_COUNT_MAX || !OBJ_FROZEN(keys) || __atomic_load_n(&key_packs[KEY_PACKS - 1], __ATOMIC_ACQUIRE))
        return;
    for (long i = 0; i < n; i++)
        if (!OBJ_FROZEN(RARRAY_AREF(keys, i)))
            return;
    /* Kept alive and in place before it is packed: a pack must never name
     * an address another Array could take. */
    rb_gc_register_mark_object(keys);
    key_pack_t *p = malloc(sizeof(*p));
    if (!p)
        return;
    p->keys = keys;
    size_t at = 0;
    for (long i = 0; i < n; i++) {
        VALUE key = RARRAY_AREF(keys, i);
        p->off[i] = (uint16_t)at;
        p->len[i] = (uint16_t)RSTRING_LEN(key);
        memcpy(p->bytes + at, RSTRING_PTR(key), (size_t)RSTRING_LEN(key));
        at += (size_t)RSTRING_LEN(key);
    }
    for (int i = 0; i < KEY_PACKS; i++) {
        key_pack_t *none = NULL;
        if (__atomic_compare_exchange_n(&key_packs[i], &none, p, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return;
    }
    free(p);
}

static void
put_key(text_t *t, VALUE keys, const key_pack_t *pack, long k)
{
    const char *bytes;
    size_t len;
    if (pack) {
        bytes = pack->bytes + pack->off[k];
        len = pack->len[k];
    } else {
        VALUE key = RARRAY_AREF(keys, k);
        bytes = RSTRING_PTR(key);
        len = (size_t)RSTRING_LEN(key);
    }
    memcpy(t->data + t->len, bytes, len);
    t->len += len;
}

static void
append_key_value(text_t *t, VALUE keys, const key_pack_t *pack, long k, int64_t v, int ms)
{
    put_key(t, keys, pack, k);
    t->len += rperf_log_number(v, ms, t->data + t->len);
}

/* The states as the line writes them: GC as one value for ms, two for ns. */
static int
state_values(const unit_numbers_t *m, int ms, int64_t v[RPERF_STATE_COUNT + 1])
{
    v[0] = m->wall;
    for (int i = 0; i < RPERF_STATE_GC_MARK; i++)
        v[1 + i] = m->state[i];
    if (ms) {
        v[1 + RPERF_STATE_GC_MARK] = m->state[RPERF_STATE_GC_MARK] + m->state[RPERF_STATE_GC_SWEEP];
        return RPERF_STATE_COUNT;
    }
    v[1 + RPERF_STATE_GC_MARK] = m->state[RPERF_STATE_GC_MARK];
    v[1 + RPERF_STATE_GC_SWEEP] = m->state[RPERF_STATE_GC_SWEEP];
    return RPERF_STATE_COUNT + 1;
}

/* gvl_wait_share as Log::Format.format_float(wait.fdiv(total).round(3)):
 * Ruby's own Float#round, so the rounding is its rounding. */
static void
append_share(text_t *t, VALUE keys, const key_pack_t *pack, long key, int64_t wait, int64_t total)
{
    double share = 0.0;
    if (total > 0) {
        const int64_t exact = (int64_t)1 << 53;
        share = wait < exact && total < exact ? (double)wait / (double)total
                                              : NUM2DBL(rb_funcall(LL2NUM(wait), id_fdiv, 1, LL2NUM(total)));
    }
    /* No wait (most lines) rounds to 0 without asking Ruby. */
    double v = share == 0.0 ? 0.0 : NUM2DBL(rb_funcall(DBL2NUM(share), id_round, 1, INT2FIX(3)));
    int64_t k = isfinite(v) ? (int64_t)round(v * 1000) : 0;
    put_key(t, keys, pack, key);
    char *buf = t->data + t->len;
    size_t n = rperf_log_number(k / 1000, 0, buf);
    int frac = (int)(k % 1000);
    if (frac) {
        buf[n++] = '.';
        buf[n++] = (char)('0' + frac / 100);
        if (frac % 100) {
            buf[n++] = (char)('0' + frac / 10 % 10);
            if (frac % 10)
                buf[n++] = (char)('0' + frac % 10);
        }
    }
    t->len += n;
}

/* The arguments _c_unit_append and _c_unit_line share, checked before
 * anything is appended; the unit's reads. */
static unit_reads_t *
check_numbers(VALUE obj, VALUE keys, int ms)
{
    unit_reads_t *u = reads_of(obj);
    Check_Type(keys, T_ARRAY);
    long want = 4 + RPERF_CAUSE_COUNT + (ms ? 1 : 2) + 2 + 2 * (ms ? 5 : 6);
    if (RARRAY_LEN(keys) != want)
        rb_raise(rb_eArgError, "%ld keys, expected %ld", RARRAY_LEN(keys), want);
    if (!key_pack_find(keys)) {
        long bytes = 0;
        for (long i = 0; i < want; i++) {
            Check_Type(RARRAY_AREF(keys, i), T_STRING);
            bytes += RSTRING_LEN(RARRAY_AREF(keys, i));
        }
        if (bytes > KEYS_MAX)
            rb_raise(rb_eArgError, "keys of %ld bytes, at most %d", bytes, (int)KEYS_MAX);
        key_pack_add(keys);
    }
    if (u->state != UNIT_ENDED)
        rb_raise(rb_eArgError, "the unit has not ended");
    return u;
}

/* The numbers with their keys into *t (from empty). */
static void
numbers_text(const unit_reads_t *u, text_t *t, VALUE keys, int ms)
{
    t->len = 0;
    const key_pack_t *pack = key_pack_find(keys);
    int gc_keys = ms ? 1 : 2, window_keys = ms ? 5 : 6;
    unit_numbers_t m;
    between(u->read[READ_BEGIN], u->read[READ_END], &m);
    int64_t v[RPERF_STATE_COUNT + 1];
    state_values(&m, ms, v);
    long k = 0;
    for (int i = 0; i < 4; i++)
        append_key_value(t, keys, pack, k++, v[i], ms);
    for (int c = 0; c < RPERF_CAUSE_COUNT; c++, k++)
        if (m.cause[c] > 0)
            append_key_value(t, keys, pack, k, m.cause[c], ms);
    for (int i = 4; i < 4 + gc_keys; i++)
        append_key_value(t, keys, pack, k++, v[i], ms);
    int64_t total = 0;
    for (int i = 0; i < RPERF_STATE_COUNT; i++)
        total += m.state[i];
    append_share(t, keys, pack, k++, m.state[RPERF_STATE_GVL_WAIT], total);
    put_key(t, keys, pack, k++);
    t->data[t->len++] = '1';

    unit_numbers_t w;
    if (before_window(u, &w)) {
        int n = state_values(&w, ms, v);
        for (int i = 0; i < n; i++)
            append_key_value(t, keys, pack, k + i, v[i], ms);
    }
    k += window_keys;
    if (u->have[READ_AFTER]) {
        between(u->read[READ_END], u->read[READ_AFTER], &w);
        int n = state_values(&w, ms, v);
        for (int i = 0; i < n; i++)
            append_key_value(t, keys, pack, k + i, v[i], ms);
    }
}

/* The functions below that hold text on their stack raise only what Ruby
 * may raise anywhere (NoMemoryError, another thread's Thread#raise): their
 * callers check every argument first. Under ASan a raise (Ruby's longjmp)
 * leaves the guard bytes of the arrays it unwinds marked, and later calls
 * trip on them. noinline keeps the arrays out of the frames that raise. */
static VALUE __attribute__((noinline)) append_numbers(const unit_reads_t *u, VALUE out, VALUE keys, int ms)
{
    text_t t;
    numbers_text(u, &t, keys, ms);
    rb_str_cat(out, t.data, (long)t.len);
    return out;
}

static VALUE
unit_append(VALUE self, VALUE obj, VALUE out, VALUE keys, VALUE vms)
{
    (void)self;
    int ms = RTEST(vms);
    Check_Type(out, T_STRING);
    rb_check_frozen(out);
    return append_numbers(check_numbers(obj, keys, ms), out, keys, ms);
}

/* The arguments of a line (_c_unit_line, _c_unit_push) checked: the
 * unit's reads. */
static const unit_reads_t *
check_line(VALUE obj, VALUE prefix, VALUE status, VALUE ends, VALUE keys, int ms)
{
    Check_Type(prefix, T_STRING);
    Check_Type(ends, T_ARRAY);
    if (RARRAY_LEN(ends) != 2)
        rb_raise(rb_eArgError, "ends: [status key, closing text]");
    Check_Type(RARRAY_AREF(ends, 0), T_STRING);
    Check_Type(RARRAY_AREF(ends, 1), T_STRING);
    if (!NIL_P(status) && !RB_INTEGER_TYPE_P(status))
        rb_raise(rb_eTypeError, "status is not an Integer");
    return check_numbers(obj, keys, ms);
}

/* A line of a unit with no field but its status, in parts: prefix,
 * ends[0] and the status when status is an Integer, the numbers, ends[1].
 * The parts point into the arguments and into the text the caller keeps. */
typedef struct unit_line_text {
    rperf_line_part_t part[5];
    int n;
    char status[RPERF_LOG_NUMBER_MAX];
    VALUE big_status; /* a Bignum status as text, else Qnil */
    text_t numbers;
} unit_line_text_t;

static void
line_parts(const unit_reads_t *u, VALUE prefix, VALUE status, VALUE ends, VALUE keys, int ms, unit_line_text_t *out)
{
    /* A Fixnum status is written here, a Bignum by Ruby. Not by snprintf:
     * Ruby's headers make it Ruby's own formatter, a slow way to one integer. */
    out->big_status = Qnil;
    long status_len = 0;
    if (FIXNUM_P(status))
        status_len = (long)rperf_log_integer(FIX2LONG(status), out->status);
    else if (!NIL_P(status))
        out->big_status = rb_big2str(status, 10);
    numbers_text(u, &out->numbers, keys, ms);
    out->n = 0;
#define PART(p, l) (out->part[out->n++] = (rperf_line_part_t){(p), (size_t)(l)})
    PART(RSTRING_PTR(prefix), RSTRING_LEN(prefix));
    if (!NIL_P(status)) {
        PART(RSTRING_PTR(RARRAY_AREF(ends, 0)), RSTRING_LEN(RARRAY_AREF(ends, 0)));
        if (NIL_P(out->big_status))
            PART(out->status, status_len);
        else
            PART(RSTRING_PTR(out->big_status), RSTRING_LEN(out->big_status));
    }
    PART(out->numbers.data, out->numbers.len);
    PART(RSTRING_PTR(RARRAY_AREF(ends, 1)), RSTRING_LEN(RARRAY_AREF(ends, 1)));
#undef PART
}

static VALUE __attribute__((noinline))
make_line(const unit_reads_t *u, VALUE prefix, VALUE status, VALUE ends, VALUE keys, int ms)
{
    unit_line_text_t lt;
    line_parts(u, prefix, status, ends, keys, ms, &lt);
    size_t len = 0;
    for (int i = 0; i < lt.n; i++)
        len += lt.part[i].len;
    VALUE out = rb_str_buf_new((long)len);
    rb_enc_copy(out, prefix);
    for (int i = 0; i < lt.n; i++)
        rb_str_cat(out, lt.part[i].bytes, (long)lt.part[i].len);
    RB_GC_GUARD(lt.big_status);
    return out;
}

static VALUE __attribute__((noinline))
push_line(const unit_reads_t *u, VALUE queue, long pid, VALUE prefix, VALUE status, VALUE ends, VALUE keys, int ms)
{
    unit_line_text_t lt;
    line_parts(u, prefix, status, ends, keys, ms, &lt);
    VALUE r = rperf_line_queue_append(queue, pid, lt.part, lt.n);
    RB_GC_GUARD(lt.big_status);
    return r;
}

/* The whole line of a unit with no field but its status: one String made
 * here, in prefix's encoding, as ContentionLog#unit_line makes it. */
static VALUE
unit_line(VALUE self, VALUE obj, VALUE prefix, VALUE status, VALUE ends, VALUE keys, VALUE vms)
{
    (void)self;
    int ms = RTEST(vms);
    return make_line(check_line(obj, prefix, status, ends, keys, ms), prefix, status, ends, keys, ms);
}

/* The same line appended to a Rperf::LineQueue (line_queue.h) without
 * making a String: what rperf_line_queue_append returns. */
static VALUE
unit_push(VALUE self, VALUE obj, VALUE queue, VALUE pid, VALUE prefix, VALUE status, VALUE ends, VALUE keys,
          VALUE vms)
{
    (void)self;
    int ms = RTEST(vms);
    long p = NUM2LONG(pid);
    rperf_line_queue_check(queue);
    return push_line(check_line(obj, prefix, status, ends, keys, ms), queue, p, prefix, status, ends, keys, ms);
}

/* A request's unit begun, ended and completed in C: the steps of
 * ContentionLog#begin_request_unit, #end_request_unit and #complete_after
 * for the common case, which hand anything else to those methods. */

static ID id_set_last_end, id_queued, id_record, id_complete_after, id_emit_ended, id_c_failed;
static ID iv_log, iv_kind, iv_labels, iv_thread, iv_reads, iv_capped, iv_hooks, iv_want_before, iv_reads_ended,
    iv_after_read, iv_status, iv_error, iv_extra, iv_prefix_pid, iv_prefix_cache;

/* This process's id, read once per process (a system call each time
 * otherwise); a fork child reads its own. */
static long log_pid;

void
rperf_log_unit_after_fork_child(void)
{
    log_pid = 0;
    /* A thread of the parent may have held the list at the fork. */
    __atomic_clear(&reads_pool.busy, __ATOMIC_RELAXED);
}

static long
current_pid(void)
{
    if (!log_pid)
        log_pid = (long)getpid();
    return log_pid;
}

static VALUE
cfg_at(VALUE cfg, long i)
{
    return RARRAY_AREF(cfg, i);
}

static void
check_cfg(VALUE cfg)
{
    Check_Type(cfg, T_ARRAY);
    if (RARRAY_LEN(cfg) != REQ_SIZE)
        rb_raise(rb_eArgError, "a request config of %ld entries, expected %d", RARRAY_LEN(cfg), (int)REQ_SIZE);
}

/* The thread's previous unit as a prior, or Qundef when Ruby must take
 * the unit: a line still waits for its after-reply hook (a Unit, or the
 * Ruby path's [:pending, unit]). */
static VALUE
request_prior(VALUE last, VALUE unit_class)
{
    if (RTEST(rb_obj_is_kind_of(last, unit_class)))
        return Qundef;
    if (RB_TYPE_P(last, T_ARRAY) && RARRAY_LEN(last) > 0 && SYMBOL_P(RARRAY_AREF(last, 0)))
        return Qundef;
    return last;
}

/* _c_request_begin(cfg, labels, hooks) -> a counting Unit, or nil with
 * nothing done. */
static VALUE
request_begin(VALUE self, VALUE cfg, VALUE labels, VALUE hooks)
{
    check_cfg(cfg);
    VALUE klass = cfg_at(cfg, REQ_UNIT_CLASS);
    VALUE thread = rb_thread_current();
    VALUE prior = request_prior(rb_hash_lookup2(cfg_at(cfg, REQ_LAST_ENDS), thread, Qnil), klass);
    if (prior == Qundef)
        return Qnil;
    VALUE admitted = rb_hash_lookup2(cfg_at(cfg, REQ_KNOWN_LABELS), labels, Qundef);
    if (!RB_TYPE_P(admitted, T_HASH) || RHASH_EMPTY_P(admitted) || !OBJ_FROZEN(admitted))
        return Qnil;
    if (!unit_ops->label_free())
        return Qnil;
    /* The Unit whole before the begin read: allocating may run the GC
     * hook on this thread, and nothing may raise once the unit began. */
    VALUE unit = rb_obj_alloc(klass);
    rb_ivar_set(unit, iv_log, cfg_at(cfg, REQ_LOG));
    rb_ivar_set(unit, iv_kind, cfg_at(cfg, REQ_KIND));
    rb_ivar_set(unit, iv_labels, admitted);
    rb_ivar_set(unit, iv_thread, thread);
    rb_ivar_set(unit, iv_hooks, hooks);
    rb_ivar_set(unit, iv_want_before, Qtrue);
    rb_ivar_set(unit, iv_reads, Qnil);
    VALUE obj = begin_reads(self, admitted, prior);
    if (NIL_P(obj))
        return Qnil;
    unit_reads_t *u = RTYPEDDATA_DATA(obj);
    RB_OBJ_WRITE(obj, &u->unit, unit);
    RB_OBJ_WRITE(obj, &u->cfg, cfg);
    RB_OBJ_WRITE(obj, &u->thread, thread);
    RB_OBJ_WRITE(obj, &u->labels, admitted);
    rb_ivar_set(unit, iv_reads, obj);
    return unit;
}

/* The calling thread's last end in the log's table (ContentionLog's
 * @last_ends, compare_by_identity): a known thread's in one call that runs
 * no Ruby code, a new thread's by ContentionLog#last_end=, which drops
 * dead threads' entries first. */
static void
set_last_end(VALUE cfg, VALUE thread, VALUE value)
{
    VALUE table = cfg_at(cfg, REQ_LAST_ENDS);
    st_index_t known = RHASH_SIZE(table);
    rb_hash_aset(table, thread, value);
    if (RHASH_SIZE(table) == known)
        return; /* a known thread's entry replaced: one hash step */
    rb_hash_delete(table, thread);
    rb_funcall(cfg_at(cfg, REQ_LOG), id_set_last_end, 1, value);
}

/* The line's start when the log has it cached for this process (as
 * ContentionLog#line_prefix keeps it), else Qnil. */
static VALUE
cached_prefix(VALUE log, VALUE kind, VALUE labels, long pid_now)
{
    VALUE pid = rb_ivar_get(log, iv_prefix_pid);
    if (!FIXNUM_P(pid) || FIX2LONG(pid) != pid_now)
        return Qnil;
    VALUE cache = rb_ivar_get(log, iv_prefix_cache);
    if (!RB_TYPE_P(cache, T_HASH))
        return Qnil;
    VALUE by_labels = rb_hash_lookup2(cache, kind, Qnil);
    if (!RB_TYPE_P(by_labels, T_HASH))
        return Qnil;
    VALUE prefix = rb_hash_lookup2(by_labels, labels, Qnil);
    return RB_TYPE_P(prefix, T_STRING) ? prefix : Qnil;
}

typedef struct request_done {
    VALUE obj;
    unit_reads_t *u;
    int from_hook;
    int slow; /* set when Ruby must write the line */
} request_done_t;

/* The line written here when ContentionLog#c_line? would hold and the
 * log queues lines: the after-reply read, the thread's last read, the
 * line pushed, the writer told when it must act, the metrics counted. */
static VALUE
request_done_fast(VALUE arg)
{
    request_done_t *d = (request_done_t *)arg;
    unit_reads_t *u = d->u;
    VALUE unit = u->unit, cfg = u->cfg;
    VALUE writer = cfg_at(cfg, REQ_WRITER), status = rb_ivar_get(unit, iv_status),
          extra = rb_ivar_get(unit, iv_extra);
    VALUE prefix = Qnil;
    long pid = current_pid();
    if (NIL_P(writer) || RTEST(rb_ivar_get(unit, iv_capped)) || !NIL_P(rb_ivar_get(unit, iv_error)) ||
        !(NIL_P(extra) || (RB_TYPE_P(extra, T_HASH) && RHASH_EMPTY_P(extra))) ||
        !(NIL_P(status) || RB_INTEGER_TYPE_P(status)) ||
        NIL_P(prefix = cached_prefix(cfg_at(cfg, REQ_LOG), cfg_at(cfg, REQ_KIND), u->labels, pid))) {
        d->slow = 1;
        return Qnil;
    }
    if (d->from_hook && NIL_P(rb_hash_delete(cfg_at(cfg, REQ_PENDING), unit)))
        return Qnil; /* written already */
    VALUE thread = rb_thread_current();
    int own = thread == u->thread;
    if (d->from_hook && own && after_reads(u))
        rb_ivar_set(unit, iv_after_read, Qtrue);
    if (own)
        set_last_end(cfg, thread, d->obj);
    VALUE queue = cfg_at(cfg, REQ_QUEUE), ends = cfg_at(cfg, REQ_ENDS), keys = cfg_at(cfg, REQ_KEYS);
    int ms = RTEST(cfg_at(cfg, REQ_MS));
    rperf_line_queue_check(queue);
    VALUE r = push_line(check_line(d->obj, prefix, status, ends, keys, ms), queue, pid, prefix, status, ends, keys,
                        ms);
    if (!FIXNUM_P(r) || r == cfg_at(cfg, REQ_BATCH))
        rb_funcall(writer, id_queued, 1, r);
    VALUE metrics = cfg_at(cfg, REQ_METRICS);
    if (!NIL_P(metrics))
        rb_funcall(metrics, id_record, 1, unit);
    return Qnil;
}

/* A request unit's line: here when it can be, else by the log's Ruby
 * (#complete_after from the hook, #emit_ended at the end). Raises only
 * what the log's Ruby would not rescue (not a StandardError). */
static void
request_done(VALUE obj, unit_reads_t *u, int from_hook)
{
    VALUE log = cfg_at(u->cfg, REQ_LOG);
    request_done_t d = {obj, u, from_hook, 0};
    int state = 0;
    rb_protect(request_done_fast, (VALUE)&d, &state);
    if (state) {
        VALUE err = rb_errinfo();
        if (!rb_obj_is_kind_of(err, rb_eStandardError))
            rb_jump_tag(state);
        rb_set_errinfo(Qnil);
        rb_funcall(log, id_c_failed, 1, err);
        return;
    }
    if (d.slow)
        rb_funcall(log, from_hook ? id_complete_after : id_emit_ended, 1, u->unit);
}

/* _c_request_end(unit) -> true when ended here (the line written, or left
 * to the after-reply hooks); false with nothing done for a unit
 * _c_request_begin did not begin or that is not running. */
static VALUE
request_end(VALUE self, VALUE unit)
{
    (void)self;
    if (rb_special_const_p(unit))
        return Qfalse;
    VALUE obj = rb_ivar_get(unit, iv_reads);
    if (!is_reads(obj))
        return Qfalse;
    unit_reads_t *u = RTYPEDDATA_DATA(obj);
    if (u->unit != unit || !end_reads(u))
        return Qfalse;
    rb_ivar_set(unit, iv_reads_ended, Qtrue);
    VALUE hooks = rb_ivar_get(unit, iv_hooks);
    if (RB_TYPE_P(hooks, T_ARRAY)) {
        VALUE cfg = u->cfg;
        rb_hash_aset(cfg_at(cfg, REQ_PENDING), unit, Qtrue);
        set_last_end(cfg, rb_thread_current(), unit);
        rb_ary_push(hooks, obj);
    } else {
        request_done(obj, u, 0);
    }
    return Qtrue;
}

/* UnitReads#call(*): the after-reply hook of a request unit (the server
 * runs it once the response is written). */
static VALUE
reads_call(int argc, VALUE *argv, VALUE obj)
{
    (void)argc;
    (void)argv;
    unit_reads_t *u = reads_of(obj);
    if (RTEST(u->cfg))
        request_done(obj, u, 1);
    return Qnil;
}

void
rperf_log_unit_define(VALUE mRperf, const rperf_log_unit_ops_t *ops)
{
    unit_ops = ops;
    id_fast_label_id = rb_intern("fast_label_id");
    id_fast_label_ids = rb_intern("@fast_label_ids");
    id_round = rb_intern("round");
    id_fdiv = rb_intern("fdiv");
    cUnitReads = rb_define_class_under(mRperf, "UnitReads", rb_cObject);
    rb_undef_alloc_func(cUnitReads);
    rb_define_module_function(mRperf, "_c_unit_begin", unit_begin, 2);
    rb_define_module_function(mRperf, "_c_unit_end", unit_end, 1);
    rb_define_module_function(mRperf, "_c_unit_after", unit_after, 1);
    rb_define_module_function(mRperf, "_c_unit_append", unit_append, 4);
    rb_define_module_function(mRperf, "_c_unit_line", unit_line, 6);
    rb_define_module_function(mRperf, "_c_unit_push", unit_push, 8);
    rb_define_module_function(mRperf, "_c_unit_read", unit_read, 2);
    rb_define_module_function(mRperf, "_c_request_begin", request_begin, 3);
    rb_define_module_function(mRperf, "_c_request_end", request_end, 1);
    rb_define_method(cUnitReads, "call", reads_call, -1);
    id_set_last_end = rb_intern("last_end=");
    id_queued = rb_intern("queued");
    id_record = rb_intern("record");
    id_complete_after = rb_intern("complete_after");
    id_emit_ended = rb_intern("emit_ended");
    id_c_failed = rb_intern("c_failed");
    iv_log = rb_intern("@log");
    iv_kind = rb_intern("@kind");
    iv_labels = rb_intern("@labels");
    iv_thread = rb_intern("@thread");
    iv_reads = rb_intern("@reads");
    iv_capped = rb_intern("@capped");
    iv_hooks = rb_intern("@after_hooks");
    iv_want_before = rb_intern("@want_before");
    iv_reads_ended = rb_intern("@reads_ended");
    iv_after_read = rb_intern("@after_read");
    iv_status = rb_intern("@status");
    iv_error = rb_intern("@error");
    iv_extra = rb_intern("@extra");
    iv_prefix_pid = rb_intern("@prefix_pid");
    iv_prefix_cache = rb_intern("@prefix_cache");
}
