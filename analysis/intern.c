/* intern.c — string interning through a hash index (see intern.h). */
#include "intern.h"
#include "grow_array.h"

#include <stdlib.h>
#include <string.h>

void
rga_intern_init(rga_intern_t *t)
{
    memset(t, 0, sizeof(*t));
}

void
rga_intern_free(rga_intern_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->lens);
    rperf_hash_index_free(&t->index);
    memset(t, 0, sizeof(*t));
}

typedef struct bytes {
    const char *s;
    size_t len;
} bytes_t;

static int
same_bytes(const void *table, const void *key, uint32_t id)
{
    const rga_intern_t *t = table;
    const bytes_t *k = key;
    return t->lens[id] == k->len && memcmp(t->strs[id], k->s, k->len) == 0;
}

size_t
rga_intern_bytes(rga_intern_t *t, const char *s, size_t len)
{
    bytes_t k = {s, len};
    uint32_t h = rperf_hash_bytes(s, len);
    size_t slot;
    long id = rperf_hash_index_upsert(&t->index, h, same_bytes, t, &k, &slot);
    if (id >= 0)
        return (size_t)id;
    if (id < -1 || rperf_grow_array((void **)&t->strs, &t->cap, t->n + 1, sizeof(*t->strs), 64) < 0 ||
        rperf_grow_array((void **)&t->lens, &t->lens_cap, t->n + 1, sizeof(*t->lens), 64) < 0)
        return (size_t)-1;
    char *copy = malloc(len + 1);
    if (!copy)
        return (size_t)-1;
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    t->strs[t->n] = copy;
    t->lens[t->n] = len;
    rperf_hash_index_put(&t->index, slot, h, (uint32_t)t->n);
    return t->n++;
}

size_t
rga_intern(rga_intern_t *t, const char *s)
{
    return s ? rga_intern_bytes(t, s, strlen(s)) : rga_intern_bytes(t, "", 0);
}

const char *
rga_intern_str(const rga_intern_t *t, size_t id)
{
    return t->strs[id];
}
