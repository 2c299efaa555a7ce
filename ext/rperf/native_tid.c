/*
 * native_tid.c — the per-native-thread cache behind rperf_native_tid().
 *
 * initial-exec TLS: one load from the thread pointer, no __tls_get_addr
 * call in the hook. It does NOT know about Ruby threads (an M:N Ruby thread
 * moves between native threads; callers read it at every RESUMED).
 */
#define _GNU_SOURCE 1
#include "native_tid.h"

#include <sys/syscall.h>
#include <unistd.h>

static __thread pid_t tls_native_tid __attribute__((tls_model("initial-exec")));

pid_t
rperf_native_tid(void)
{
    if (!tls_native_tid)
        tls_native_tid = (pid_t)syscall(SYS_gettid);
    return tls_native_tid;
}

void
rperf_native_tid_reset(void)
{
    tls_native_tid = 0;
}
