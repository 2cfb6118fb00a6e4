#include "threadslots.h"

#include "enginestate.h"

/* Thread tid's slot in the mapped `threads`, or NULL when it has none. */
static struct sonde_thread_state *thread_slot(struct engine *e, uint32_t tid)
{
	if (!tid || !e->thread_slots)
		return NULL;
	uint32_t ka = SONDE_THREAD_SLOT_A(tid), kb = SONDE_THREAD_SLOT_B(tid);
	struct sonde_thread_state *a = ka < e->nthread_slots ? &e->thread_slots[ka] : NULL;
	if (a && __atomic_load_n(&a->tid, __ATOMIC_ACQUIRE) == tid)
		return a;
	struct sonde_thread_state *b = kb < e->nthread_slots ? &e->thread_slots[kb] : NULL;
	return b && __atomic_load_n(&b->tid, __ATOMIC_ACQUIRE) == tid ? b : NULL;
}

void engine_for_each_open_span(struct engine *e, engine_open_span_fn fn, void *arg)
{
	for (uint32_t k = 0; e->thread_slots && k < e->nthread_slots; k++) {
		if (!__atomic_load_n(&e->thread_slots[k].tid, __ATOMIC_ACQUIRE))
			continue; /* a free slot: one line read, not the state */
		struct sonde_thread_state st = e->thread_slots[k];
		uint32_t key = (uint32_t)st.tid;
		if (!key)
			continue; /* given back while it was copied */
		uint32_t n = st.depth < SONDE_SPAN_DEPTH ? st.depth : SONDE_SPAN_DEPTH;
		/* Calls no sample or record named have no id yet: give them ids
		 * from a range the kernel's counter never reaches. */
		for (uint32_t i = 0; i < n; i++)
			if (!st.frames[i].span_id)
				st.frames[i].span_id = (1ull << 62) + ++e->open_span_ids;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t slot = st.frames[i].probe;
			uint32_t probe = slot < SONDE_MAX_PROBES ? e->slots[slot].probe : NO_PROBE;
			if (probe == NO_PROBE || st.frames[i].gen != e->slots[slot].gen)
				continue; /* a call of a probe since detached */
			uint64_t own = st.own_ns >= st.frames[i].own_at_entry
					       ? st.own_ns - st.frames[i].own_at_entry
					       : 0;
			struct engine_open_span o = {.tid = key,
						     .probe = probe,
						     .depth = i + 1,
						     .span_id = st.frames[i].span_id,
						     .parent_id = i ? st.frames[i - 1].span_id : 0,
						     .start_ns = st.frames[i].start_ns,
						     .own_ns = own};
			fn(arg, &o);
		}
	}
}

uint64_t engine_thread_own_ns(struct engine *e, uint32_t tid)
{
	struct sonde_thread_state *st = thread_slot(e, tid);
	return st ? __atomic_load_n(&st->own_ns, __ATOMIC_RELAXED) : 0;
}

void engine_forget_thread(struct engine *e, uint32_t tid)
{
	/* As the BPF side gives a slot back: emptied, then free. */
	struct sonde_thread_state *st = thread_slot(e, tid);
	if (!st)
		return;
	__atomic_store_n(&st->depth, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st->own_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&st->tid, 0, __ATOMIC_RELEASE);
}
