/*
 * interval_runs.c — slices sorted into encoded runs, on a worker thread
 * when one can be started (see the header). One mutex and one condition
 * variable hand a slice over: `busy` is set by the caller with the slice to
 * sort and cleared by the worker when its run is appended, so the caller
 * never refills a slice the worker still reads, and the runs array is
 * written by one thread at a time (the worker, or the caller when there is
 * no worker, or after the join).
 */
#include "interval_runs.h"
#include "interval_sort.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rperf_interval_runs {
    size_t slice_records;
    rperf_interval_t *slices[2];
    rperf_interval_t *scratch; /* the sort's; keys use 16 of its 40 bytes a record */
    int filling;               /* the slice the caller fills */
    rperf_interval_store_t *runs;
    size_t nruns, cap;
    int threaded;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    /* under mutex while threaded */
    rperf_interval_t *job;
    size_t job_records;
    int busy, done, failed;
};

/* Sorts n records of slice into a new run. -1 when memory ran out. */
static int
sort_run(rperf_interval_runs_t *r, rperf_interval_t *slice, size_t n)
{
    if (r->nruns == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        rperf_interval_store_t *p = realloc(r->runs, cap * sizeof(*p));
        if (!p)
            return -1;
        r->runs = p;
        r->cap = cap;
    }
    rperf_interval_store_t *run = &r->runs[r->nruns++];
    rperf_interval_store_init(run);
    uint64_t *keys = (uint64_t *)(void *)r->scratch;
    unsigned index_bits;
    const uint64_t *order = rperf_interval_sort_keys(slice, n, keys, keys + n, &index_bits);
    if (order) {
        uint64_t index_mask = index_bits ? ~0ull >> (64 - index_bits) : 0;
        for (size_t i = 0; i < n; i++)
            if (rperf_interval_store_append(run, &slice[order[i] & index_mask]) < 0)
                return -1;
        return 0;
    }
    const rperf_interval_t *sorted = rperf_interval_sort(slice, r->scratch, n);
    for (size_t i = 0; i < n; i++)
        if (rperf_interval_store_append(run, &sorted[i]) < 0)
            return -1;
    return 0;
}

static void *
worker_main(void *arg)
{
    rperf_interval_runs_t *r = arg;
    pthread_mutex_lock(&r->mutex);
    for (;;) {
        while (!r->busy && !r->done)
            pthread_cond_wait(&r->cond, &r->mutex);
        if (!r->busy)
            break;
        rperf_interval_t *job = r->job;
        size_t n = r->job_records;
        int failed = r->failed;
        pthread_mutex_unlock(&r->mutex);
        int rc = failed ? -1 : sort_run(r, job, n);
        pthread_mutex_lock(&r->mutex);
        if (rc < 0)
            r->failed = 1;
        r->busy = 0;
        pthread_cond_signal(&r->cond);
    }
    pthread_mutex_unlock(&r->mutex);
    return NULL;
}

static void
free_all(rperf_interval_runs_t *r)
{
    for (size_t i = 0; i < r->nruns; i++)
        rperf_interval_store_free(&r->runs[i]);
    free(r->runs);
    free(r->slices[0]);
    free(r->slices[1]);
    free(r->scratch);
    free(r);
}

static int
start_worker(rperf_interval_runs_t *r)
{
    if (pthread_mutex_init(&r->mutex, NULL) != 0)
        return -1;
    if (pthread_cond_init(&r->cond, NULL) != 0) {
        pthread_mutex_destroy(&r->mutex);
        return -1;
    }
    /* Signals stay with the program's own threads (Ruby's handlers,
     * the sampler's timer signal). */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    int rc = pthread_create(&r->thread, NULL, worker_main, r);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->mutex);
        return -1;
    }
    return 0;
}

rperf_interval_runs_t *
rperf_interval_runs_new(size_t slice_records, int threaded)
{
    rperf_interval_runs_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->slice_records = slice_records ? slice_records : 1;
    r->slices[0] = malloc(r->slice_records * sizeof(rperf_interval_t));
    r->scratch = malloc(r->slice_records * sizeof(rperf_interval_t));
    /* The second slice only when a worker sorts beside the caller. */
    r->threaded = threaded && r->slices[0] && r->scratch &&
                  (r->slices[1] = malloc(r->slice_records * sizeof(rperf_interval_t))) && start_worker(r) == 0;
    if (!r->slices[0] || !r->scratch) {
        free_all(r);
        return NULL;
    }
    if (!r->threaded) {
        free(r->slices[1]);
        r->slices[1] = NULL;
    }
    return r;
}

rperf_interval_t *
rperf_interval_runs_slice(rperf_interval_runs_t *r)
{
    return r->slices[r->filling];
}

int
rperf_interval_runs_threaded(const rperf_interval_runs_t *r)
{
    return r->threaded;
}

int
rperf_interval_runs_submit(rperf_interval_runs_t *r, size_t n)
{
    if (!r->threaded) {
        if (!r->failed && n > 0 && sort_run(r, r->slices[0], n) < 0)
            r->failed = 1;
        return r->failed ? -1 : 0;
    }
    pthread_mutex_lock(&r->mutex);
    while (r->busy)
        pthread_cond_wait(&r->cond, &r->mutex);
    int failed = r->failed;
    if (!failed && n > 0) {
        r->job = r->slices[r->filling];
        r->job_records = n;
        r->busy = 1;
        pthread_cond_signal(&r->cond);
        r->filling ^= 1;
    }
    pthread_mutex_unlock(&r->mutex);
    return failed ? -1 : 0;
}

int
rperf_interval_runs_finish(rperf_interval_runs_t *r, rperf_interval_store_t **runs, size_t *nruns)
{
    *runs = NULL;
    *nruns = 0;
    if (!r)
        return 0;
    if (r->threaded) {
        pthread_mutex_lock(&r->mutex);
        r->done = 1;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->mutex);
        pthread_join(r->thread, NULL); /* the worker finishes its slice first */
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->mutex);
    }
    if (r->failed) {
        free_all(r);
        return -1;
    }
    *runs = r->runs;
    *nruns = r->nruns;
    r->runs = NULL;
    r->nruns = 0;
    free_all(r);
    return 0;
}
