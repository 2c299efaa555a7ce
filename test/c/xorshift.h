/*
 * xorshift.h — a tiny deterministic pseudo-random generator for the
 * extension's plain-C tests: the same seed gives the same inputs on every
 * run and machine, so a failure can be replayed. Not for anything else.
 *
 * Contract: header only; the caller owns the state (any non-zero seed).
 */
#ifndef RPERF_TEST_XORSHIFT_H
#define RPERF_TEST_XORSHIFT_H

#include <stdint.h>

static inline uint64_t
xorshift_next(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
