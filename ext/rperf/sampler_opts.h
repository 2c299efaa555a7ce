/*
 * sampler_opts.h — the sampler's options and modes: what rperf.c asks of
 * sampler.h, and what sampler_state.h keeps.
 *
 * It does NOT hold state or declare functions.
 */
#ifndef RPERF_SAMPLER_OPTS_H
#define RPERF_SAMPLER_OPTS_H

#include "report_format.h" /* enum rperf_profile_mode */

enum rperf_sampler_mode { RPERF_MODE_CPU = RPERF_PROFILE_CPU, RPERF_MODE_WALL = RPERF_PROFILE_WALL };

typedef struct rperf_sampler_opts {
    int frequency;   /* Hz, RPERF_FREQUENCY_MIN..MAX (rperf_limits.h) */
    int mode;        /* enum rperf_sampler_mode */
    int aggregate;   /* 1: aggregate; 0: also keep raw samples */
    int signal;      /* >0 RT signal number, 0 = condvar worker (no signals), -1 = default */
    int deferred;    /* 1: start paused (profile refcount 0) */
    int max_threads; /* slot pool capacity (seq range); 0 = RPERF_MAX_THREADS_DEFAULT */
} rperf_sampler_opts_t;

#endif
