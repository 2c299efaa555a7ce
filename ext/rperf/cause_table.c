/*
 * cause_table.c — open addressing over a fixed array of frame VALUEs
 * (linear probing, insertion by compare-and-swap of an empty key), the
 * slot index being the id; causes are resolved into a parallel byte array.
 *
 * It does NOT grow (a full table drops the frame: its time is "unknown")
 * and does NOT keep labels (the report builder asks for them when it
 * writes blocked_methods).
 */
#include "cause_table.h"
#include "cause_rules.h"
#include "utf8_text.h"
#include "value_hash.h"

#include <ruby/debug.h>
#include <stdlib.h>
#include <string.h>

static struct {
    VALUE *keys;     /* 0: empty; written once by CAS */
    uint8_t *causes; /* 0: not resolved yet, else cause + 1 */
    uint64_t dropped;
    uint32_t inserted; /* atomic: keys claimed */
    uint32_t resolved; /* atomic: causes resolved; equal to inserted when none waits */
} table;

int
rperf_cause_table_open(void)
{
    rperf_cause_table_close();
    table.keys = calloc(RPERF_CAUSE_TABLE_SLOTS, sizeof(VALUE));
    table.causes = calloc(RPERF_CAUSE_TABLE_SLOTS, 1);
    table.dropped = 0;
    table.inserted = table.resolved = 0;
    if (!table.keys || !table.causes) {
        rperf_cause_table_close();
        return -1;
    }
    return 0;
}

void
rperf_cause_table_close(void)
{
    VALUE *keys = table.keys;
    /* Unpublished first: a GC mark never reads freed keys. */
    __atomic_store_n(&table.keys, NULL, __ATOMIC_RELEASE);
    free(keys);
    free(table.causes);
    table.causes = NULL;
}

void
rperf_cause_table_mark(void)
{
    VALUE *keys = __atomic_load_n(&table.keys, __ATOMIC_ACQUIRE);
    if (!keys)
        return;
    for (uint32_t i = 0; i < RPERF_CAUSE_TABLE_SLOTS; i++) {
        VALUE k = __atomic_load_n(&keys[i], __ATOMIC_ACQUIRE);
        if (k)
            rb_gc_mark(k);
    }
}

/* A C method (no path) or a built-in one ("<internal:thread_sync>"): the
 * only leaves a thread can wait in. A Ruby leaf means a hand-over at an
 * interrupt check. Reads the frame only (rb_profile_frame_path does not
 * allocate). */
static int
waitable_leaf(VALUE frame)
{
    VALUE path = rb_profile_frame_path(frame);
    if (NIL_P(path))
        return 1;
    if (!RB_TYPE_P(path, T_STRING))
        return 0;
    static const char internal[] = "<internal:";
    long len = RSTRING_LEN(path);
    return len >= (long)sizeof(internal) - 1 && memcmp(RSTRING_PTR(path), internal, sizeof(internal) - 1) == 0;
}

VALUE
rperf_cause_table_leaf(VALUE thread)
{
    VALUE frame = 0;
    if (rb_profile_thread_frames(thread, 0, 1, &frame, NULL) < 1)
        return 0;
    return frame;
}

uint32_t
rperf_cause_table_intern(VALUE frame)
{
    VALUE *keys = table.keys;
    if (!keys || !frame || !waitable_leaf(frame))
        return 0;
    uint32_t mask = RPERF_CAUSE_TABLE_SLOTS - 1;
    uint32_t i = rperf_value_hash(frame) & mask;
    for (int probe = 0; probe < RPERF_CAUSE_TABLE_PROBES; probe++, i = (i + 1) & mask) {
        VALUE k = __atomic_load_n(&keys[i], __ATOMIC_ACQUIRE);
        if (k == frame)
            return i + 1;
        if (k)
            continue;
        VALUE expected = 0;
        if (__atomic_compare_exchange_n(&keys[i], &expected, frame, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_fetch_add(&table.inserted, 1, __ATOMIC_RELEASE);
            return i + 1;
        }
        if (expected == frame)
            return i + 1; /* another Ractor's thread inserted it just now */
    }
    rperf_cause_table_note_dropped();
    return 0;
}

static VALUE
key_of(uint32_t id)
{
    if (!table.keys || id < 1 || id > RPERF_CAUSE_TABLE_SLOTS)
        return 0;
    return __atomic_load_n(&table.keys[id - 1], __ATOMIC_ACQUIRE);
}

int
rperf_cause_table_cause_if_resolved(uint32_t id)
{
    if (id == 0)
        return RPERF_CAUSE_UNKNOWN;
    if (!table.causes || id > RPERF_CAUSE_TABLE_SLOTS)
        return -1;
    int c = __atomic_load_n(&table.causes[id - 1], __ATOMIC_ACQUIRE);
    return c ? c - 1 : -1;
}

VALUE
rperf_cause_table_label(uint32_t id)
{
    VALUE frame = key_of(id);
    if (!frame)
        return rb_utf8_str_new_cstr("(unknown)");
    VALUE label = rb_profile_frame_full_label(frame);
    if (!RB_TYPE_P(label, T_STRING))
        return rb_utf8_str_new_cstr("(unknown)");
    return rperf_utf8_text(label);
}

int
rperf_cause_table_cause(uint32_t id)
{
    int c = rperf_cause_table_cause_if_resolved(id);
    if (c >= 0)
        return c;
    VALUE frame = key_of(id);
    if (!frame)
        return RPERF_CAUSE_UNKNOWN;
    VALUE label = rb_profile_frame_full_label(frame);
    c = RB_TYPE_P(label, T_STRING) ? rperf_cause_for_label(RSTRING_PTR(label), (size_t)RSTRING_LEN(label))
                                   : RPERF_CAUSE_OTHER;
    /* Two resolvers (two Ractors) find the same cause; one counts it. */
    uint8_t expected = 0;
    if (__atomic_compare_exchange_n(&table.causes[id - 1], &expected, (uint8_t)(c + 1), 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        __atomic_fetch_add(&table.resolved, 1, __ATOMIC_RELEASE);
    return c;
}

void
rperf_cause_table_resolve_all(void)
{
    if (!table.keys ||
        __atomic_load_n(&table.resolved, __ATOMIC_ACQUIRE) == __atomic_load_n(&table.inserted, __ATOMIC_ACQUIRE))
        return;
    for (uint32_t id = 1; id <= RPERF_CAUSE_TABLE_SLOTS; id++) {
        if (key_of(id) && rperf_cause_table_cause_if_resolved(id) < 0)
            rperf_cause_table_cause(id);
    }
}

uint64_t
rperf_cause_table_dropped(int reset)
{
    if (reset)
        return __atomic_exchange_n(&table.dropped, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&table.dropped, __ATOMIC_RELAXED);
}

void
rperf_cause_table_note_dropped(void)
{
    __atomic_fetch_add(&table.dropped, 1, __ATOMIC_RELAXED);
}
