/*
 * gvl_hooks.h — installs the internal thread-event hook (READY, RESUMED,
 * SUSPENDED, EXITED) that feeds contention_events.c.
 *
 * Contract
 * - install/remove: Ruby context, GVL held, never from a hook. remove
 *   returns after every running callback has finished (the VM's hook list
 *   is guarded by a reader/writer lock), so state may be freed afterwards.
 * - after_fork_child: the child keeps the hook registered for good (it must
 *   not take the VM's hook lock, which another thread of the parent may
 *   have held at fork); installs reuse it and removes leave it in place,
 *   where it returns at once while no profile records.
 * - The callback never allocates, never calls Ruby, never blocks; see the
 *   comment at each event in gvl_hooks.c for GVL ownership.
 */
#ifndef RPERF_GVL_HOOKS_H
#define RPERF_GVL_HOOKS_H

int rperf_gvl_hooks_install(void);
void rperf_gvl_hooks_remove(void);
void rperf_gvl_hooks_after_fork_child(void);

#endif
