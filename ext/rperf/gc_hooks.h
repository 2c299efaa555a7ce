/*
 * gc_hooks.h — the GC event hook (GC_ENTER/EXIT and the phase events) that
 * carves GC time out of the holder's running time.
 *
 * Contract
 * - install/remove: Ruby context, GVL held, main Ractor. The hook sees
 *   GC that threads of the main Ractor run, nothing else: rb_add_event_hook
 *   attaches to the calling Ractor's hook list, and in Ruby 3.3 and 3.4 it
 *   also sets the VM-wide event flags from that list alone. A hook added
 *   from another Ractor would switch off every TracePoint of the main
 *   Ractor (line events, coverage, debuggers) for the rest of the run, so
 *   the profiler never adds one there (docs/contention.md, "Limits").
 * - The callback runs on the GC-ing thread, which holds its Ractor's GVL,
 *   inside GC: it never allocates and never calls Ruby methods.
 */
#ifndef RPERF_GC_HOOKS_H
#define RPERF_GC_HOOKS_H

void rperf_gc_hooks_install(void);
/* The callback runs only on threads holding the main Ractor's GVL, so once
 * the caller (holding it) removes the hook, no callback is running. */
void rperf_gc_hooks_remove(void);

#endif
