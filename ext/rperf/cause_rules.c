/*
 * cause_rules.c — the name rules behind rperf_cause_for_label: a label is
 * split at its last '#' or '.' into owner and method, then matched against
 * exact (owner, method) pairs, then against owners whose every blocking
 * method means one cause (IO and the socket classes, Thread::Queue,
 * Ractor, Process).
 *
 * It does NOT see frames (only their labels) and does NOT decide when a
 * thread is blocked (contention_events.c does).
 */
#include "cause_rules.h"

#include <string.h>

typedef struct method_rule {
    const char *owner;
    const char *method; /* NULL: every method of the owner */
    int cause;
} method_rule_t;

/* Exact pairs first, then whole owners. Thread::Mutex#sleep is what
 * ConditionVariable#wait and Monitor's waits call: it counts as condvar. */
static const method_rule_t rules[] = {
    {"Kernel", "sleep", RPERF_CAUSE_SLEEP},
    {"Thread::Mutex", "lock", RPERF_CAUSE_MUTEX},
    {"Thread::Mutex", "synchronize", RPERF_CAUSE_MUTEX},
    {"Monitor", "enter", RPERF_CAUSE_MUTEX},
    {"Monitor", "mon_enter", RPERF_CAUSE_MUTEX},
    {"Monitor", "synchronize", RPERF_CAUSE_MUTEX},
    {"Monitor", "mon_synchronize", RPERF_CAUSE_MUTEX},
    {"Thread::Mutex", "sleep", RPERF_CAUSE_CONDVAR},
    {"Thread::ConditionVariable", "wait", RPERF_CAUSE_CONDVAR},
    {"Monitor", "wait_for_cond", RPERF_CAUSE_CONDVAR},
    {"MonitorMixin::ConditionVariable", "wait", RPERF_CAUSE_CONDVAR},
    {"Thread", "join", RPERF_CAUSE_JOIN},
    {"Thread", "value", RPERF_CAUSE_JOIN},
    {"Kernel", "system", RPERF_CAUSE_PROCESS},
    {"Kernel", "`", RPERF_CAUSE_PROCESS},
    {"Kernel", "select", RPERF_CAUSE_IO},
    {"Kernel", "gets", RPERF_CAUSE_IO},
    {"Kernel", "readline", RPERF_CAUSE_IO},
    {"Kernel", "readlines", RPERF_CAUSE_IO},
    {"Kernel", "puts", RPERF_CAUSE_IO},
    {"Kernel", "print", RPERF_CAUSE_IO},
    {"Kernel", "printf", RPERF_CAUSE_IO},
    {"Kernel", "putc", RPERF_CAUSE_IO},
    {"Kernel", "p", RPERF_CAUSE_IO},
    {"Kernel", "open", RPERF_CAUSE_IO},
    {"Thread::Queue", NULL, RPERF_CAUSE_QUEUE},
    {"Thread::SizedQueue", NULL, RPERF_CAUSE_QUEUE},
    {"Ractor", NULL, RPERF_CAUSE_RACTOR},
    {"Process", NULL, RPERF_CAUSE_PROCESS},
    {"Process::Status", NULL, RPERF_CAUSE_PROCESS},
    {"IO", NULL, RPERF_CAUSE_IO},
    {"File", NULL, RPERF_CAUSE_IO},
    {"BasicSocket", NULL, RPERF_CAUSE_IO},
    {"Socket", NULL, RPERF_CAUSE_IO},
    {"IPSocket", NULL, RPERF_CAUSE_IO},
    {"TCPSocket", NULL, RPERF_CAUSE_IO},
    {"TCPServer", NULL, RPERF_CAUSE_IO},
    {"UDPSocket", NULL, RPERF_CAUSE_IO},
    {"UNIXSocket", NULL, RPERF_CAUSE_IO},
    {"UNIXServer", NULL, RPERF_CAUSE_IO},
    {"Addrinfo", NULL, RPERF_CAUSE_IO},
    {"OpenSSL::SSL::SSLSocket", NULL, RPERF_CAUSE_IO},
    {"OpenSSL::SSL::SSLServer", NULL, RPERF_CAUSE_IO},
};

static int
equals(const char *s, size_t len, const char *lit)
{
    return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

int
rperf_cause_for_label(const char *label, size_t len)
{
    if (!label || len == 0)
        return RPERF_CAUSE_UNKNOWN;
    size_t sep = len;
    for (size_t i = len; i > 0; i--) {
        if (label[i - 1] == '#' || label[i - 1] == '.') {
            sep = i - 1;
            break;
        }
    }
    if (sep == len || sep == 0 || sep + 1 == len)
        return RPERF_CAUSE_OTHER; /* no owner: a block or a method without a class */
    const char *method = label + sep + 1;
    size_t method_len = len - sep - 1;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (!equals(label, sep, rules[i].owner))
            continue;
        if (!rules[i].method || equals(method, method_len, rules[i].method))
            return rules[i].cause;
    }
    return RPERF_CAUSE_OTHER;
}
