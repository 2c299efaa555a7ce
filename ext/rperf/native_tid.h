/*
 * native_tid.h — the calling native thread's kernel id (gettid), cached per
 * native thread so that the RESUMED hook can record it at every event
 * without a system call.
 *
 * Contract
 * - rperf_native_tid: any thread, any context (hooks, signal-free code);
 *   one thread-local read after the first call on a native thread.
 * - rperf_native_tid_reset: fork child (atfork handler) only: the surviving
 *   thread has a new id. It does NOT reset other threads (none survive).
 */
#ifndef RPERF_NATIVE_TID_H
#define RPERF_NATIVE_TID_H

#include <sys/types.h>

pid_t rperf_native_tid(void);
void rperf_native_tid_reset(void);

#endif
