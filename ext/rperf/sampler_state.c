/*
 * sampler_state.c — the sampler's state (sampler_state.h states its rules).
 *
 * It does NOT change it: sampler.c and sampler_hooks.c do.
 */
#include "sampler_state.h"

rperf_sampler_state_t rperf_sampler_g = {.drain_mutex = PTHREAD_MUTEX_INITIALIZER};
atomic_int rperf_sampler_signal_armed;
