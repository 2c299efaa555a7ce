/*
 * grow_array.c — doubling growth of an array (see grow_array.h). It does
 * NOT know what the array holds.
 */
#include "grow_array.h"

#include <stdint.h>
#include <stdlib.h>

int
rperf_grow_array(void **items, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t grown_cap = *cap ? *cap : (first ? first : 1);
    while (grown_cap < need) {
        if (grown_cap > SIZE_MAX / 2 / size)
            return -1;
        grown_cap *= 2;
    }
    void *grown = realloc(*items, grown_cap * size);
    if (!grown)
        return -1;
    *items = grown;
    *cap = grown_cap;
    return 0;
}
