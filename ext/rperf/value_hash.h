/*
 * value_hash.h — the hash of a VALUE's bits (a 64-bit mix) for the tables
 * keyed by pinned frame VALUEs (frame_table.c, cause_table.c).
 *
 * Header only, no state. It does NOT make a VALUE a stable key: the tables
 * pin their keys (rb_gc_mark) so compaction never moves them.
 */
#ifndef RPERF_VALUE_HASH_H
#define RPERF_VALUE_HASH_H

#include <ruby.h>
#include <stdint.h>

static inline uint32_t
rperf_value_hash(VALUE v)
{
    uint64_t x = (uint64_t)v;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

#endif
