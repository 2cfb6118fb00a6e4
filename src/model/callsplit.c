#include "callsplit.h"

#include <stdio.h>
#include <string.h>

#include "latency.h"
#include "printable.h"

uint32_t call_split_callee(const struct profile *p, const uint32_t *stack, size_t depth,
			   const char *traced)
{
	for (size_t d = 0; d + 1 < depth; d++)
		if (strcmp(frames_get(p->frames, stack[d])->name, traced) == 0)
			return stack[d + 1];
	return 0;
}

void call_split_add(struct call_split *c, struct profile *p, const struct sample *s,
		    const char *traced)
{
	if (profile_sample_is_waker(p, s))
		return;
	if (!profile_sample_is_offcpu(p, s)) {
		c->on_samples++;
		return;
	}
	uint32_t stack[512];
	size_t depth = profile_stack_frames(p, s->stack, stack, 512);
	c->off_ns += s->weight;
	if (depth == 0 || depth > 512)
		return;
	/* The leaf is the state frame; the callee is looked for below it. */
	uint32_t state = stack[depth - 1], callee = call_split_callee(p, stack, depth - 1, traced);
	uint32_t k;
	for (k = 0; k < c->nstates && c->off[k].state != state; k++)
		;
	if (k == c->nstates) {
		if (k == CALL_SPLIT_STATES)
			return;
		c->nstates++;
		c->off[k].state = state;
		c->off[k].ns = c->off[k].largest = 0;
		c->off[k].callee = callee;
	}
	c->off[k].ns += s->weight;
	if (s->weight > c->off[k].largest) {
		c->off[k].largest = s->weight;
		c->off[k].callee = callee;
	}
}

void call_split_bound(struct call_split *c, uint64_t sample_ns, uint64_t duration_ns)
{
	if (c->off_ns > duration_ns)
		c->off_ns = duration_ns;
	uint64_t left = duration_ns - c->off_ns;
	uint64_t estimate = (uint64_t)c->on_samples * sample_ns;
	c->on_capped = estimate > left;
	c->on_ns = c->on_capped ? left : estimate;
}

const char *call_split_on_text(const struct call_split *c, char *buf, size_t size)
{
	char b[32];
	snprintf(buf, size, "on-CPU %s%s", c->on_capped ? "<=" : "~",
		 duration_format(c->on_ns, b, sizeof(b)));
	return buf;
}

void call_split_order(const struct call_split *c, uint32_t order[CALL_SPLIT_STATES])
{
	bool used[CALL_SPLIT_STATES] = {false};
	for (uint32_t shown = 0; shown < c->nstates && shown < CALL_SPLIT_STATES; shown++) {
		uint32_t best = CALL_SPLIT_STATES;
		for (uint32_t k = 0; k < c->nstates; k++)
			if (!used[k] && (best == CALL_SPLIT_STATES || c->off[k].ns > c->off[best].ns))
				best = k;
		used[best] = true;
		order[shown] = best;
	}
}

const char *call_split_off_text(const struct call_split *c, const struct frame_table *frames,
				int show, char *buf, size_t size)
{
	char b[32];
	size_t off = 0;
	int n = snprintf(buf, size, "off-CPU %s", duration_format(c->off_ns, b, sizeof(b)));
	off = n > 0 && (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
	uint32_t order[CALL_SPLIT_STATES];
	call_split_order(c, order);
	for (int shown = 0; shown < show && (uint32_t)shown < c->nstates; shown++) {
		uint32_t best = order[shown];
		char st[256], ce[256];
		const char *callee = c->off[best].callee
					     ? frames_get(frames, c->off[best].callee)->name
					     : "(self)";
		n = snprintf(buf + off, size - off, "%s %s %s in %s", shown ? "," : ":",
			     printable_copy(st, sizeof(st), frames_get(frames, c->off[best].state)->name),
			     duration_format(c->off[best].ns, b, sizeof(b)),
			     printable_copy(ce, sizeof(ce), callee));
		if (n < 0 || (size_t)n >= size - off)
			break;
		off += (size_t)n;
	}
	return buf;
}
