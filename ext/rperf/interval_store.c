/*
 * interval_store.c — encoded, append-only interval list with key frames
 * (see the header). Growth doubles through realloc, which for large
 * blocks moves pages instead of copying them, so a growing timeline never
 * holds two copies of itself.
 */
#include "interval_store.h"
#include "grow_array.h"

#include <stdlib.h>
#include <string.h>

void
rperf_interval_store_init(rperf_interval_store_t *store)
{
    memset(store, 0, sizeof(*store));
}

/* Room for one more record and, when it starts a key frame, the frame. */
static int
make_room(rperf_interval_store_t *store)
{
    if (rperf_grow_array((void **)&store->bytes, &store->capacity, store->used + RPERF_INTERVAL_CODEC_MAX_BYTES, 1,
                         4096) < 0)
        return -1;
    if (store->count % RPERF_INTERVAL_STORE_STRIDE == 0) {
        if (rperf_grow_array((void **)&store->keys, &store->keys_capacity, store->nkeys + 1, sizeof(*store->keys),
                             16) < 0)
            return -1;
        store->keys[store->nkeys++] = (rperf_interval_store_key_t){store->used, store->state};
    }
    return 0;
}

int
rperf_interval_store_append(rperf_interval_store_t *store, const rperf_interval_t *rec)
{
    if (make_room(store) < 0)
        return -1;
    store->used += rperf_interval_encode(&store->state, rec, store->bytes + store->used);
    store->count++;
    return 0;
}

int
rperf_interval_store_append_encoded(rperf_interval_store_t *store, const uint8_t *bytes, size_t length,
                                    const rperf_interval_t *rec)
{
    if (length > RPERF_INTERVAL_CODEC_MAX_BYTES || make_room(store) < 0)
        return -1;
    memcpy(store->bytes + store->used, bytes, length);
    store->used += length;
    store->count++;
    store->state = (rperf_interval_codec_state_t){rec->end_ns, rec->thread_seq, rec->label_set_id, rec->stack_id};
    return 0;
}

static void
shrink_to(void **p, size_t *capacity, size_t need, size_t item)
{
    if (!*p || need == *capacity)
        return;
    if (need == 0) {
        free(*p);
        *p = NULL;
        *capacity = 0;
        return;
    }
    void *q = realloc(*p, need * item);
    if (q) {
        *p = q;
        *capacity = need;
    }
}

void
rperf_interval_store_shrink(rperf_interval_store_t *store)
{
    /* Appending after a shrink grows again; the margin a record needs is
     * taken back then. */
    shrink_to((void **)&store->bytes, &store->capacity, store->used, 1);
    shrink_to((void **)&store->keys, &store->keys_capacity, store->nkeys, sizeof(*store->keys));
}

void
rperf_interval_store_free(rperf_interval_store_t *store)
{
    free(store->bytes);
    free(store->keys);
    rperf_interval_store_init(store);
}

size_t
rperf_interval_store_bytes(const rperf_interval_store_t *store)
{
    return store->capacity + store->keys_capacity * sizeof(*store->keys);
}

void
rperf_interval_store_cursor_init(rperf_interval_store_cursor_t *cur, const rperf_interval_store_t *store,
                                 size_t index)
{
    memset(cur, 0, sizeof(*cur));
    cur->store = store;
    if (index >= store->count) {
        cur->index = store->count;
        cur->offset = store->used;
        return;
    }
    const rperf_interval_store_key_t *key = &store->keys[index / RPERF_INTERVAL_STORE_STRIDE];
    cur->offset = key->offset;
    cur->state = key->state;
    cur->index = index / RPERF_INTERVAL_STORE_STRIDE * RPERF_INTERVAL_STORE_STRIDE;
    rperf_interval_t skipped;
    while (cur->index < index)
        rperf_interval_store_next(cur, &skipped);
}

int
rperf_interval_store_next(rperf_interval_store_cursor_t *cur, rperf_interval_t *out)
{
    const rperf_interval_store_t *store = cur->store;
    if (cur->index >= store->count)
        return 0;
    size_t used = rperf_interval_decode(&cur->state, store->bytes + cur->offset, store->used - cur->offset, out);
    if (!used)
        return 0; /* cannot happen: the store wrote whole records */
    cur->offset += used;
    cur->index++;
    return 1;
}

size_t
rperf_interval_store_read(rperf_interval_store_cursor_t *cur, rperf_interval_t *out, uint8_t *lengths, size_t max)
{
    const rperf_interval_store_t *store = cur->store;
    size_t left = store->count - cur->index, used;
    size_t n = rperf_interval_decode_many(&cur->state, store->bytes + cur->offset, store->used - cur->offset, out,
                                          lengths, max < left ? max : left, &used);
    cur->offset += used;
    cur->index += n;
    return n;
}

int
rperf_interval_store_get(const rperf_interval_store_t *store, size_t index, rperf_interval_t *out)
{
    if (index >= store->count)
        return -1;
    rperf_interval_store_cursor_t cur;
    rperf_interval_store_cursor_init(&cur, store, index);
    return rperf_interval_store_next(&cur, out) ? 0 : -1;
}
