/*
 * ractor_registry.h — which Ractor is calling: each Ractor's slot in the
 * Ractor table (ractor_table.h), remembered in Ractor-local storage, and
 * the postponed job that registers a Ractor from one of its own threads.
 *
 * Setting Ractor-local storage allocates, so a hook that meets an unknown
 * Ractor only triggers the job (rperf_ractor_request_registration); the
 * job runs at the next safepoint of that Ractor, registers it, gives its
 * threads their Ractor and installs the Ractor's GC hook (gc_hooks.h).
 * This file does NOT own the table (ractor_table.c) and does NOT charge
 * time (contention.c).
 *
 * Contract
 * - init: once, at Init (creates the key and pre-registers the job).
 * - lookup_current: any thread holding its Ractor's GVL, hooks included;
 *   never allocates. NULL when the Ractor is not registered in the current
 *   profile (a token of an earlier profile decodes to NULL).
 * - register_current: Ruby context, outside hooks (allocates); the calling
 *   Ractor's slot, added if needed; NULL when no profile is active (or a
 *   fork child's is stale) or the table is full.
 * - request_registration: hooks; never allocates, never blocks.
 */
#ifndef RPERF_RACTOR_REGISTRY_H
#define RPERF_RACTOR_REGISTRY_H

#include "ractor_table.h"

void rperf_ractor_registry_init(void);
rperf_ractor_slot_t *rperf_ractor_lookup_current(void);
rperf_ractor_slot_t *rperf_ractor_register_current(void);
void rperf_ractor_request_registration(void);

#endif
