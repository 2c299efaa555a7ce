/*
 * worker_thread.h — one plain pthread started with all signals blocked,
 * with the mutex and condition variable its owner hands work over with.
 *
 * The report's workers beside the calling thread (interval_runs.c,
 * interval_prefetch.c) start one for the length of a stop or a save; a
 * signal meant for the program (Ruby's handlers, the sampler's timer
 * signal) must never land on it. It does NOT define the hand-over: the
 * owner's fields under `mutex` do.
 *
 * Contract
 * - start: initialises mutex and cond, then runs main(arg) on a new
 *   thread. 0, or -1 with nothing left to clean up (no thread, no mutex).
 * - join: waits for main to return (the owner has told it to), then
 *   destroys mutex and cond. Only after a start that returned 0.
 */
#ifndef RPERF_WORKER_THREAD_H
#define RPERF_WORKER_THREAD_H

#include <pthread.h>

typedef struct rperf_worker_thread {
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
} rperf_worker_thread_t;

int rperf_worker_thread_start(rperf_worker_thread_t *w, void *(*main_fn)(void *), void *arg);
void rperf_worker_thread_join(rperf_worker_thread_t *w);

#endif
