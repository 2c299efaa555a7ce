/* intern.c — string interning by open addressing (see intern.h). */
#include "intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t
hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

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
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

/* Doubles the slot array (kept at most half full) and re-inserts every id. */
static int
grow_slots(rga_intern_t *t)
{
    size_t n_slots = t->n_slots ? t->n_slots * 2 : 64;
    size_t *slots = calloc(n_slots, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = (size_t)hash_bytes(t->strs[id], t->lens[id]) & (n_slots - 1);
        while (slots[i])
            i = (i + 1) & (n_slots - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    return 0;
}

size_t
rga_intern_bytes(rga_intern_t *t, const char *s, size_t len)
{
    if ((t->n + 1) * 2 > t->n_slots && grow_slots(t) != 0)
        return (size_t)-1;
    size_t i = (size_t)hash_bytes(s, len) & (t->n_slots - 1);
    for (; t->slots[i]; i = (i + 1) & (t->n_slots - 1)) {
        size_t id = t->slots[i] - 1;
        if (t->lens[id] == len && memcmp(t->strs[id], s, len) == 0)
            return id;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **strs = realloc(t->strs, cap * sizeof(*strs));
        if (!strs)
            return (size_t)-1;
        t->strs = strs;
        size_t *lens = realloc(t->lens, cap * sizeof(*lens));
        if (!lens)
            return (size_t)-1;
        t->lens = lens;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return (size_t)-1;
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    t->strs[t->n] = copy;
    t->lens[t->n] = len;
    t->slots[i] = ++t->n;
    return t->n - 1;
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
