/*
 * frame_table.c — VALUE -> dense id interning with an open-addressing table
 * (linear probing, load <= 1/2) and a lazily resolved [path, label] cache.
 *
 * Frame VALUEs are pinned by rb_gc_mark in rperf_frame_table_mark, so their
 * addresses stay valid hash keys under compaction. It does NOT decide which
 * frames are kept: the drainer calls insert for every frame it sees.
 */
#include "frame_table.h"
#include "report_format.h"
#include "utf8_text.h"
#include "value_hash.h"

#include <ruby/debug.h>
#include <stdlib.h>
#include <string.h>

static const char *const synthetic_paths[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_PATHS;
static const char *const synthetic_labels[RPERF_SYNTHETIC_FRAMES] = RPERF_SYNTHETIC_FRAME_LABELS;

static inline VALUE
key_at(const rperf_frame_table_t *ft, uint32_t id)
{
    return ft->chunks[id / RPERF_FRAME_CHUNK][id % RPERF_FRAME_CHUNK];
}

int
rperf_frame_table_init(rperf_frame_table_t *ft, uint32_t max_frames)
{
    memset(ft, 0, sizeof(*ft));
    ft->resolved = Qnil;
    ft->max_frames = max_frames;
    ft->chunk_count = (max_frames + RPERF_FRAME_CHUNK - 1) / RPERF_FRAME_CHUNK;
    ft->slot_capacity = 2048;
    ft->chunks = calloc(ft->chunk_count, sizeof(VALUE *));
    ft->slots = calloc(ft->slot_capacity, sizeof(uint32_t));
    if (!ft->chunks || !ft->slots || ft->chunk_count == 0)
        goto fail;
    ft->chunks[0] = malloc(sizeof(VALUE) * RPERF_FRAME_CHUNK);
    if (!ft->chunks[0])
        goto fail;
    for (uint32_t i = 0; i < RPERF_SYNTHETIC_FRAMES; i++)
        ft->chunks[0][i] = Qnil;
    ft->count = RPERF_SYNTHETIC_FRAMES;
    return 0;
fail:
    rperf_frame_table_free(ft);
    return -1;
}

void
rperf_frame_table_free(rperf_frame_table_t *ft)
{
    if (ft->chunks) {
        for (uint32_t i = 0; i < ft->chunk_count; i++)
            free(ft->chunks[i]);
    }
    free(ft->chunks);
    free(ft->slots);
    memset(ft, 0, sizeof(*ft));
    ft->resolved = Qnil;
}

static int
grow_slots(rperf_frame_table_t *ft)
{
    uint32_t capacity = ft->slot_capacity * 2;
    uint32_t *slots = calloc(capacity, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t id = RPERF_SYNTHETIC_FRAMES; id < ft->count; id++) {
        uint32_t i = rperf_value_hash(key_at(ft, id)) & (capacity - 1);
        while (slots[i])
            i = (i + 1) & (capacity - 1);
        slots[i] = id + 1;
    }
    free(ft->slots);
    ft->slots = slots;
    ft->slot_capacity = capacity;
    return 0;
}

uint32_t
rperf_frame_table_insert(rperf_frame_table_t *ft, VALUE frame)
{
    uint32_t mask = ft->slot_capacity - 1;
    uint32_t i = rperf_value_hash(frame) & mask;
    for (;;) {
        uint32_t entry = ft->slots[i];
        if (!entry)
            break;
        if (key_at(ft, entry - 1) == frame)
            return entry - 1;
        i = (i + 1) & mask;
    }
    uint32_t id = ft->count;
    if (id >= ft->max_frames)
        return RPERF_FRAME_ID_NONE;
    /* Keep one empty slot per probe sequence: refuse rather than fill up. */
    if ((uint64_t)(id + 1) * 2 > ft->slot_capacity && grow_slots(ft) < 0)
        return RPERF_FRAME_ID_NONE;
    if (ft->slot_capacity - 1 != mask) {
        mask = ft->slot_capacity - 1;
        i = rperf_value_hash(frame) & mask;
        while (ft->slots[i])
            i = (i + 1) & mask;
    }
    VALUE **chunk = &ft->chunks[id / RPERF_FRAME_CHUNK];
    if (!*chunk && !(*chunk = malloc(sizeof(VALUE) * RPERF_FRAME_CHUNK)))
        return RPERF_FRAME_ID_NONE;
    (*chunk)[id % RPERF_FRAME_CHUNK] = frame;
    ft->slots[i] = id + 1;
    __atomic_store_n(&ft->count, id + 1, __ATOMIC_RELEASE);
    return id;
}

static VALUE
resolve_frame(VALUE frame)
{
    VALUE path = rb_profile_frame_path(frame);
    VALUE label = rb_profile_frame_full_label(frame);
    /* C methods have no file of their own. Paths and method names may hold
     * any bytes (a file system path, define_method with a binary name). */
    path = NIL_P(path) ? rb_str_new_cstr("<cfunc>") : rperf_utf8_text(path);
    label = NIL_P(label) ? rb_str_new_cstr("<unknown>") : rperf_utf8_text(label);
    return rb_ary_freeze(rb_ary_new_from_args(2, path, label));
}

VALUE
rperf_frame_table_resolve(rperf_frame_table_t *ft)
{
    if (NIL_P(ft->resolved)) {
        ft->resolved = rb_ary_new_capa(ft->count);
        for (int i = 0; i < RPERF_SYNTHETIC_FRAMES; i++) {
            VALUE pair = rb_ary_new_from_args(2, rb_str_new_cstr(synthetic_paths[i]),
                                              rb_str_new_cstr(synthetic_labels[i]));
            rb_ary_push(ft->resolved, rb_ary_freeze(pair));
        }
    }
    for (long id = RARRAY_LEN(ft->resolved); id < (long)ft->count; id++) {
        rb_ary_push(ft->resolved, resolve_frame(key_at(ft, (uint32_t)id)));
    }
    return ft->resolved;
}

void
rperf_frame_table_mark(const rperf_frame_table_t *ft)
{
    if (!ft->chunks)
        return;
    uint32_t count = __atomic_load_n(&ft->count, __ATOMIC_ACQUIRE);
    for (uint32_t id = RPERF_SYNTHETIC_FRAMES; id < count; id++)
        rb_gc_mark(key_at(ft, id));
    rb_gc_mark(ft->resolved);
}
