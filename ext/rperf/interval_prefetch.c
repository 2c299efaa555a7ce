/*
 * interval_prefetch.c — records read ahead on a worker thread (see the
 * header). One mutex and one condition variable: `ready[i]` is set by the
 * worker when batch i holds `count[i]` records and cleared by the caller
 * when it is done with it, so neither ever touches a batch the other owns.
 */
#include "interval_prefetch.h"
#include "worker_thread.h"

#include <stdlib.h>

struct rperf_interval_prefetch {
    rperf_interval_read_fn *read;
    void *source;
    size_t batch_records;
    rperf_interval_t *batches[2];
    int threaded;
    int using; /* the caller's batch, -1 before the first */
    int ended; /* the caller saw the end */
    rperf_worker_thread_t worker;
    /* under mutex while threaded */
    size_t count[2];
    int ready[2];
    int stop;
};

static void *
worker_main(void *arg)
{
    rperf_interval_prefetch_t *p = arg;
    int filling = 0;
    pthread_mutex_lock(&p->worker.mutex);
    for (;;) {
        while (p->ready[filling] && !p->stop)
            pthread_cond_wait(&p->worker.cond, &p->worker.mutex);
        if (p->stop)
            break;
        pthread_mutex_unlock(&p->worker.mutex);
        size_t n = p->read(p->source, p->batches[filling], p->batch_records);
        pthread_mutex_lock(&p->worker.mutex);
        p->count[filling] = n;
        p->ready[filling] = 1;
        pthread_cond_signal(&p->worker.cond);
        if (n == 0)
            break; /* the end, delivered as an empty batch */
        filling ^= 1;
    }
    pthread_mutex_unlock(&p->worker.mutex);
    return NULL;
}


rperf_interval_prefetch_t *
rperf_interval_prefetch_new(rperf_interval_read_fn *read, void *source, size_t batch_records, int threaded)
{
    rperf_interval_prefetch_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->read = read;
    p->source = source;
    p->batch_records = batch_records ? batch_records : 1;
    p->using = -1;
    size_t bytes = p->batch_records * sizeof(rperf_interval_t);
    p->batches[0] = malloc(bytes);
    if (!p->batches[0]) {
        free(p);
        return NULL;
    }
    if (threaded) {
        p->batches[1] = malloc(bytes);
        p->threaded = p->batches[1] && rperf_worker_thread_start(&p->worker, worker_main, p) == 0;
    }
    if (!p->threaded) {
        free(p->batches[1]);
        p->batches[1] = NULL;
    }
    return p;
}

int
rperf_interval_prefetch_threaded(const rperf_interval_prefetch_t *p)
{
    return p->threaded;
}

size_t
rperf_interval_prefetch_next(rperf_interval_prefetch_t *p, const rperf_interval_t **records)
{
    *records = p->batches[0];
    if (p->ended)
        return 0;
    if (!p->threaded) {
        size_t n = p->read(p->source, p->batches[0], p->batch_records);
        p->ended = n == 0;
        return n;
    }
    int next = p->using < 0 ? 0 : p->using ^ 1;
    pthread_mutex_lock(&p->worker.mutex);
    if (p->using >= 0) {
        p->ready[p->using] = 0; /* the worker may refill it */
        pthread_cond_signal(&p->worker.cond);
    }
    while (!p->ready[next])
        pthread_cond_wait(&p->worker.cond, &p->worker.mutex);
    size_t n = p->count[next];
    pthread_mutex_unlock(&p->worker.mutex);
    p->using = next;
    p->ended = n == 0;
    *records = p->batches[next];
    return n;
}

void
rperf_interval_prefetch_free(rperf_interval_prefetch_t *p)
{
    if (!p)
        return;
    if (p->threaded) {
        pthread_mutex_lock(&p->worker.mutex);
        p->stop = 1;
        pthread_cond_signal(&p->worker.cond);
        pthread_mutex_unlock(&p->worker.mutex);
        rperf_worker_thread_join(&p->worker);
    }
    free(p->batches[0]);
    free(p->batches[1]);
    free(p);
}
