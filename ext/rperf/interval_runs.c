/*
 * interval_runs.c — slices sorted into encoded runs, on a worker thread
 * when one can be started (see the header). One mutex and one condition
 * variable hand a slice over: `busy` is set by the caller with the slice it
 * sorted and cleared by the worker when its run is appended, so the caller
 * never refills a slice the worker still reads, and the runs array is
 * written by one thread at a time (the worker, or the caller when there is
 * no worker, or after the join).
 */
#include "interval_runs.h"
#include "grow_array.h"
#include "interval_sort.h"
#include "worker_thread.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A slice's sorted order: the records in key order (`order` and `mask`:
 * indexes into `records`), or already moved into order (`sorted`). */
typedef struct sorted_slice {
    const rperf_interval_t *records;
    const uint64_t *order;
    uint64_t mask;
    const rperf_interval_t *sorted;
    size_t n;
} sorted_slice_t;

struct rperf_interval_runs {
    size_t slice_records;
    rperf_interval_t *slices[2];
    rperf_interval_t *scratch[2]; /* each slice's sort's; keys use 16 of its 40 bytes a record */
    int filling;                  /* the slice the caller fills */
    rperf_interval_store_t *runs;
    size_t nruns, cap;
    int threaded;
    rperf_worker_thread_t worker;
    /* under mutex while threaded */
    sorted_slice_t job;
    int busy, done, failed;
};

/* Sorts the slice (on the caller's thread: the sort and the encoding are
 * the two halves of the work that weigh about the same). */
static sorted_slice_t
sort_slice(rperf_interval_t *slice, rperf_interval_t *scratch, size_t n)
{
    sorted_slice_t s = {.records = slice, .n = n};
    uint64_t *keys = (uint64_t *)(void *)scratch;
    unsigned index_bits;
    s.order = rperf_interval_sort_keys(slice, n, keys, keys + n, &index_bits);
    if (s.order)
        s.mask = index_bits ? ~0ull >> (64 - index_bits) : 0;
    else
        s.sorted = rperf_interval_sort(slice, scratch, n);
    return s;
}

/* Encodes a sorted slice into a new run. -1 when memory ran out. */
static int
encode_run(rperf_interval_runs_t *r, const sorted_slice_t *s)
{
    if (rperf_grow_array((void **)&r->runs, &r->cap, r->nruns + 1, sizeof(*r->runs), 8) < 0)
        return -1;
    rperf_interval_store_t *run = &r->runs[r->nruns++];
    rperf_interval_store_init(run);
    if (s->order) {
        for (size_t i = 0; i < s->n; i++)
            if (rperf_interval_store_append(run, &s->records[s->order[i] & s->mask]) < 0)
                return -1;
        return 0;
    }
    for (size_t i = 0; i < s->n; i++)
        if (rperf_interval_store_append(run, &s->sorted[i]) < 0)
            return -1;
    return 0;
}

static void *
worker_main(void *arg)
{
    rperf_interval_runs_t *r = arg;
    pthread_mutex_lock(&r->worker.mutex);
    for (;;) {
        while (!r->busy && !r->done)
            pthread_cond_wait(&r->worker.cond, &r->worker.mutex);
        if (!r->busy)
            break;
        sorted_slice_t job = r->job;
        int failed = r->failed;
        pthread_mutex_unlock(&r->worker.mutex);
        int rc = failed ? -1 : encode_run(r, &job);
        pthread_mutex_lock(&r->worker.mutex);
        if (rc < 0)
            r->failed = 1;
        r->busy = 0;
        pthread_cond_signal(&r->worker.cond);
    }
    pthread_mutex_unlock(&r->worker.mutex);
    return NULL;
}

static void
free_all(rperf_interval_runs_t *r)
{
    for (size_t i = 0; i < r->nruns; i++)
        rperf_interval_store_free(&r->runs[i]);
    free(r->runs);
    for (int i = 0; i < 2; i++) {
        free(r->slices[i]);
        free(r->scratch[i]);
    }
    free(r);
}


rperf_interval_runs_t *
rperf_interval_runs_new(size_t slice_records, int threaded)
{
    rperf_interval_runs_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->slice_records = slice_records ? slice_records : 1;
    size_t bytes = r->slice_records * sizeof(rperf_interval_t);
    r->slices[0] = malloc(bytes);
    r->scratch[0] = malloc(bytes);
    if (!r->slices[0] || !r->scratch[0]) {
        free_all(r);
        return NULL;
    }
    /* The second slice and scratch only when a worker encodes beside the
     * caller. */
    if (threaded) {
        r->slices[1] = malloc(bytes);
        r->scratch[1] = malloc(bytes);
        r->threaded = r->slices[1] && r->scratch[1] && rperf_worker_thread_start(&r->worker, worker_main, r) == 0;
    }
    if (!r->threaded) {
        free(r->slices[1]);
        free(r->scratch[1]);
        r->slices[1] = r->scratch[1] = NULL;
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
        if (!r->failed && n > 0) {
            sorted_slice_t s = sort_slice(r->slices[0], r->scratch[0], n);
            if (encode_run(r, &s) < 0)
                r->failed = 1;
        }
        return r->failed ? -1 : 0;
    }
    /* Sorted before the hand-over: the worker may still be encoding the
     * other slice meanwhile. */
    sorted_slice_t s = {0};
    if (n > 0)
        s = sort_slice(r->slices[r->filling], r->scratch[r->filling], n);
    pthread_mutex_lock(&r->worker.mutex);
    while (r->busy)
        pthread_cond_wait(&r->worker.cond, &r->worker.mutex);
    int failed = r->failed;
    if (!failed && n > 0) {
        r->job = s;
        r->busy = 1;
        pthread_cond_signal(&r->worker.cond);
        r->filling ^= 1;
    }
    pthread_mutex_unlock(&r->worker.mutex);
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
        pthread_mutex_lock(&r->worker.mutex);
        r->done = 1;
        pthread_cond_signal(&r->worker.cond);
        pthread_mutex_unlock(&r->worker.mutex);
        rperf_worker_thread_join(&r->worker); /* the worker finishes its slice first */
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
