/*
 * frame_table.c — VALUE -> dense id interning through a hash index, and a
 * lazily resolved [path, label] cache.
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
    ft->chunks = calloc(ft->chunk_count, sizeof(VALUE *));
    if (!ft->chunks || ft->chunk_count == 0 || rperf_hash_index_reserve(&ft->index, 1024) < 0)
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
    rperf_hash_index_free(&ft->index);
    memset(ft, 0, sizeof(*ft));
    ft->resolved = Qnil;
}

static int
same_frame(const void *table, const void *key, uint32_t id)
{
    return key_at(table, id) == *(const VALUE *)key;
}

uint32_t
rperf_frame_table_insert(rperf_frame_table_t *ft, VALUE frame)
{
    uint32_t h = rperf_value_hash(frame);
    size_t slot;
    long found = rperf_hash_index_upsert(&ft->index, h, same_frame, ft, &frame, &slot);
    if (found >= 0)
        return (uint32_t)found;
    uint32_t id = ft->count;
    if (found < -1 || id >= ft->max_frames)
        return RPERF_FRAME_ID_NONE;
    VALUE **chunk = &ft->chunks[id / RPERF_FRAME_CHUNK];
    if (!*chunk && !(*chunk = malloc(sizeof(VALUE) * RPERF_FRAME_CHUNK)))
        return RPERF_FRAME_ID_NONE;
    (*chunk)[id % RPERF_FRAME_CHUNK] = frame;
    rperf_hash_index_put(&ft->index, slot, h, id);
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
