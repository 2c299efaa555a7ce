/*
 * worker_thread.c — a pthread started with every signal blocked (see the
 * header). The mask is set around pthread_create because a new thread
 * inherits its creator's.
 */
#include "worker_thread.h"

#include <signal.h>

int
rperf_worker_thread_start(rperf_worker_thread_t *w, void *(*main_fn)(void *), void *arg)
{
    if (pthread_mutex_init(&w->mutex, NULL) != 0)
        return -1;
    if (pthread_cond_init(&w->cond, NULL) != 0) {
        pthread_mutex_destroy(&w->mutex);
        return -1;
    }
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    int rc = pthread_create(&w->thread, NULL, main_fn, arg);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mutex);
        return -1;
    }
    return 0;
}

void
rperf_worker_thread_join(rperf_worker_thread_t *w)
{
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
}
