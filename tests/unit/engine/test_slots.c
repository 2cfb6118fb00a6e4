/* Unit tests for slots' probe refs: the {slot, generation} a caller's probe
 * table keeps names that attachment only, never a later one in its slot. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "enginestate.h"
#include "slots.h"

static struct engine *fresh_engine(void)
{
	struct engine *e = calloc(1, sizeof(*e));
	cr_assert_not_null(e);
	for (int s = 0; s < SONDE_MAX_PROBES; s++)
		e->slots[s].probe = NO_PROBE;
	return e;
}

/* What spans.c and points.c do to a slot they give a fresh probe. */
static void take(struct engine *e, uint32_t slot, uint32_t probe)
{
	next_generation(e, slot);
	e->slots[slot].probe = probe;
}

Test(slots, a_probe_without_a_slot_has_no_ref)
{
	struct engine *e = fresh_engine();
	struct engine_probe_ref r = ref_of(e, 7);
	cr_expect(!engine_ref_attached(r));
	cr_expect_eq(slot_of_ref(e, r), -1);
	free(e);
}

Test(slots, a_zeroed_ref_names_no_attachment_even_in_slot_0)
{
	struct engine *e = fresh_engine();
	take(e, 0, 3);
	struct engine_probe_ref zero = {0};
	cr_expect_eq(slot_of_ref(e, zero), -1, "a table's unset entry must not reach slot 0");
	cr_expect_eq(slot_of_ref(e, ref_of(e, 3)), 0);
	free(e);
}

Test(slots, a_ref_outlives_its_attachment_harmlessly)
{
	struct engine *e = fresh_engine();
	take(e, 2, 7);
	struct engine_probe_ref old = ref_of(e, 7);
	cr_assert(engine_ref_attached(old));
	cr_expect_eq(old.slot, 2);
	cr_expect_eq(slot_of_ref(e, old), 2);
	e->slots[2].probe = NO_PROBE; /* detached */
	cr_expect_eq(slot_of_ref(e, old), -1);
	take(e, 2, 9); /* the slot goes to another probe */
	cr_expect_eq(slot_of_ref(e, old), -1, "a stale ref must not reach the new probe's slot");
	struct engine_probe_ref now = ref_of(e, 9);
	cr_expect_eq(now.slot, 2);
	cr_expect_neq(now.gen, old.gen);
	cr_expect_eq(slot_of_ref(e, now), 2);
	free(e);
}

Test(slots, the_same_probe_attached_again_gets_a_new_ref)
{
	struct engine *e = fresh_engine();
	take(e, 5, 1);
	struct engine_probe_ref first = ref_of(e, 1);
	e->slots[5].probe = NO_PROBE;
	take(e, 5, 1); /* untraced, then traced again in the same slot */
	cr_expect_eq(slot_of_ref(e, first), -1);
	cr_expect_eq(slot_of_ref(e, ref_of(e, 1)), 5);
	free(e);
}

Test(slots, the_generation_never_wraps_to_0)
{
	struct engine *e = fresh_engine();
	e->slots[4].gen = UINT32_MAX;
	take(e, 4, 6);
	cr_expect_eq(e->slots[4].gen, 1);
	cr_expect_eq(slot_of_ref(e, ref_of(e, 6)), 4);
	free(e);
}

Test(slots, a_ref_past_the_slots_names_nothing)
{
	struct engine *e = fresh_engine();
	struct engine_probe_ref far = {.slot = SONDE_MAX_PROBES, .gen = 1};
	cr_expect_eq(slot_of_ref(e, far), -1);
	free(e);
}
