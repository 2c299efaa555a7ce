/*
 * gc_hooks.h — the GC event hook (GC_ENTER/EXIT and the phase events) that
 * carves GC time out of the holder's running time.
 *
 * Contract
 * - install/remove: Ruby context, GVL held, main Ractor. rb_add_event_hook
 *   attaches to the calling Ractor only: GC work done by threads of other
 *   Ractors is not separated from their running time.
 * - The callback runs on the GC-ing thread, which holds its Ractor's GVL,
 *   inside GC: it never allocates and never calls Ruby methods.
 */
#ifndef RPERF_GC_HOOKS_H
#define RPERF_GC_HOOKS_H

void rperf_gc_hooks_install(void);
void rperf_gc_hooks_remove(void);

#endif
