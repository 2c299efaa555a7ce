/*
 * grow_array.h — the one way an array grows in the extension and the
 * analysis library: its capacity doubles (from `first`) until `need`
 * elements fit, with one realloc.
 *
 * It does NOT shrink, zero new elements or count them: the caller keeps
 * its count. It never calls Ruby; it allocates, so no hook calls it.
 *
 * Contract
 * - rperf_grow_array(&items, &cap, need, size, first): returns 0 when
 *   `need` elements of `size` bytes fit (cap updated), or -1 when memory
 *   runs out or the size overflows; then items and cap are unchanged.
 * - items may be NULL with cap 0 (the first growth allocates).
 */
#ifndef RPERF_GROW_ARRAY_H
#define RPERF_GROW_ARRAY_H

#include <stddef.h>

int rperf_grow_array(void **items, size_t *cap, size_t need, size_t size, size_t first);

#endif
