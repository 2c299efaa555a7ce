/*
 * gc_hooks.h — the GC event hook (GC_ENTER/EXIT and the phase events) that
 * carves GC time out of the holder's running time.
 *
 * Contract
 * - install/remove: Ruby context, GVL held, main Ractor. rb_add_event_hook
 *   attaches to the calling Ractor only, so other Ractors get their own
 *   hook through rperf_gc_hooks_install_current_ractor.
 * - install_current_ractor: Ruby context on a thread of a non-main Ractor,
 *   its GVL held, outside any hook (it allocates the hook). Once per Ractor
 *   for the life of the Ractor: a hook of another Ractor cannot be removed
 *   from the main one, so it stays and does nothing while no profile
 *   records; a Ractor-local flag keeps later profiles from adding a second.
 * - The callback runs on the GC-ing thread, which holds its Ractor's GVL,
 *   inside GC: it never allocates and never calls Ruby methods.
 */
#ifndef RPERF_GC_HOOKS_H
#define RPERF_GC_HOOKS_H

void rperf_gc_hooks_install(void);
/* Also waits until no callback (of any Ractor) is still running; call it
 * after recording stopped and before anything the callbacks use is freed. */
void rperf_gc_hooks_remove(void);
void rperf_gc_hooks_install_current_ractor(void);
/* Fork child (atfork handler): forgets callbacks the parent's other threads
 * had in progress. */
void rperf_gc_hooks_after_fork_child(void);

#endif
