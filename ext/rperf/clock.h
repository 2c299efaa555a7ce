/*
 * clock.h — the one clock the contention core uses.
 *
 * Every hook reads CLOCK_MONOTONIC exactly once through rperf_now_ns(); on
 * Linux that is a vDSO call (no syscall), and the clock is consistent across
 * CPUs, so timestamps taken by hooks running on different native threads can
 * be compared and subtracted. Wall-clock time (CLOCK_REALTIME) is read only
 * at report boundaries for meta.start_time_ns. This header does NOT provide
 * thread CPU clocks; those belong to the sampler.
 */
#ifndef RPERF_CLOCK_H
#define RPERF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
rperf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

static inline int64_t
rperf_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

#endif
