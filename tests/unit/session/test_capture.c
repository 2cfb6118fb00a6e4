/* capture: a capture plan built by hand (two addresses, each with its own
 * fetch program and captures, and a predicate) to the program a function
 * probe's attachment carries and the captures named in the profile: the
 * program is the plan's own, with the layout the naming then gives
 * the probe, so the kernel's records of it are taken and those of the
 * program before it dropped (values_add_record); a spec capturing nothing
 * gives no program and names nothing. */
#include <criterion/criterion.h>
#include <string.h>

#include "capture.h"
#include "profile.h"
#include "sonde_abi.h"
#include "values.h"

static struct capture_enumerator modes[] = {{0, "MODE_READ"}, {2, "MODE_WRITE"}};

/* Address 0 captures len; address 1 len and mode (an enum); predicate
 * "len > 4096". Each program is told apart by its op count, values and
 * vaddr. */
static struct sonde_fetch_prog progs[2];

static void plan_build(struct capture_plan *plan, struct fetch_build b[2])
{
	memset(b, 0, 2 * sizeof(*b));
	for (int i = 0; i < 2; i++) {
		progs[i] = (struct sonde_fetch_prog){.gen = 77, .nops = 3 + (uint32_t)i,
						     .nvalues = 1 + (uint32_t)i,
						     .layout = 999, .vaddr = 0x1130 + 0x10 * (uint64_t)i};
		progs[i].ops[0].code = 5;
		progs[i].ops[0].imm = 42 + i;
		b[i].prog = &progs[i];
		b[i].desc[0] = (struct capture_desc){.name = "len", .type = "unsigned int",
						     .kind = CAPTURE_UNSIGNED, .size = 4};
		b[i].ndesc = 1;
	}
	b[1].desc[1] = (struct capture_desc){.name = "mode", .type = "enum mode",
					     .kind = CAPTURE_ENUM, .size = 4, .enums = modes,
					     .nenums = 2};
	b[1].ndesc = 2;
	*plan = (struct capture_plan){.builds = b, .n = 2};
	plan->spec.pred_text = "len > 4096";
}

/* A kernel record of probe `probe` with layout `layout`: len=5000, mode=2. */
static int record(struct profile *p, uint32_t probe, uint32_t layout)
{
	struct sonde_values r = {.probe = probe, .nvalues = 2, .layout = layout};
	r.value[0] = 5000;
	r.value[1] = 2;
	return values_add_record(p, &r, profile_thread_intern(p, 10, 10, "t"));
}

/* Target i's program is the plan's build i (the engine copies it), with
 * the probe's next layout (1 for a fresh probe); past the last target,
 * none. */
Test(capture, program_is_the_plans)
{
	struct capture_plan plan;
	struct fetch_build b[2];
	plan_build(&plan, b);
	struct profile *p = profile_new();
	uint32_t probe = profile_probe_add(p, "handle", "/bin/x", 0x1130);
	for (int i = 0; i < 2; i++) {
		struct engine_fetch out;
		memset(&out, 0xab, sizeof(out));
		cr_assert(capture_program(&plan, i, p, probe, &out));
		cr_expect_eq(out.layout, 1);
		cr_expect_eq(out.prog, &progs[i], "target %d's program is another", i);
		cr_expect_eq(progs[i].layout, 999, "the plan's program is left as it was");
	}
	struct engine_fetch out = {.prog = NULL, .layout = 7};
	cr_expect_not(capture_program(&plan, 2, p, probe, &out));
	cr_expect_eq(out.layout, 7, "untouched");
	profile_free(p);
}

/* Naming target 1's captures: two captures of the probe (the enum with its
 * enumerators), the probe's slots in that order, the predicate's text, and
 * the layout the program carried; its records are taken with their values. */
Test(capture, names_match_the_program)
{
	struct capture_plan plan;
	struct fetch_build b[2];
	plan_build(&plan, b);
	struct profile *p = profile_new();
	profile_probe_add(p, "other", "/bin/x", 0x10);
	uint32_t probe = profile_probe_add(p, "handle", "/bin/x", 0x1130);
	struct engine_fetch prog;
	cr_assert(capture_program(&plan, 1, p, probe, &prog));
	capture_name(&plan, 1, p, probe);
	const struct probe_info *pi = &p->probes[probe];
	cr_assert_eq(p->ncaptures, 2);
	cr_assert_eq(pi->ncapture_slots, 2);
	const struct probe_capture *len = &p->captures[pi->capture_slot[0]];
	const struct probe_capture *mode = &p->captures[pi->capture_slot[1]];
	cr_expect_str_eq(len->name, "len");
	cr_expect_str_eq(len->type, "unsigned int");
	cr_expect_eq(len->kind, CAPTURE_UNSIGNED);
	cr_expect_eq(len->probe, probe);
	cr_expect_str_eq(mode->name, "mode");
	cr_expect_eq(mode->kind, CAPTURE_ENUM);
	cr_assert_eq(mode->nenums, 2);
	cr_expect_eq(mode->enums[1].value, 2);
	cr_expect_str_eq(mode->enums[1].name, "MODE_WRITE");
	cr_assert_not_null(pi->predicate);
	cr_expect_str_eq(pi->predicate, "len > 4096");
	cr_expect_eq(pi->capture_layout, prog.layout);
	cr_assert_eq(record(p, probe, prog.layout), 0);
	cr_assert_eq(p->nhits, 1);
	cr_assert_eq(p->hits[0].n, 2);
	cr_expect_eq(p->hit_values[p->hits[0].first].num, 5000);
	cr_expect_str_eq(p->hit_values[p->hits[0].first + 1].text, "MODE_WRITE");
	profile_free(p);
}

/* Traced again: the next program carries layout 2 and the naming agrees;
 * the captures are the same ones (not added twice); a record of the first
 * program is dropped, one of the second taken. */
Test(capture, a_second_program_drops_the_firsts_records)
{
	struct capture_plan plan;
	struct fetch_build b[2];
	plan_build(&plan, b);
	struct profile *p = profile_new();
	uint32_t probe = profile_probe_add(p, "handle", "/bin/x", 0x1130);
	struct engine_fetch first, second;
	cr_assert(capture_program(&plan, 1, p, probe, &first));
	capture_name(&plan, 1, p, probe);
	cr_assert(capture_program(&plan, 1, p, probe, &second));
	capture_name(&plan, 1, p, probe);
	cr_expect_eq(first.layout, 1);
	cr_expect_eq(second.layout, 2);
	cr_expect_eq(p->probes[probe].capture_layout, 2);
	cr_expect_eq(p->ncaptures, 2);
	cr_expect_eq(record(p, probe, first.layout), -2);
	cr_expect_eq(record(p, probe, second.layout), 0);
	cr_expect_eq(p->nhits, 1);
	profile_free(p);
}

/* A program written before its probe is in the profile (a probe id about
 * to be added) carries the layout the probe gets once added and named. */
Test(capture, program_before_the_probe_is_added)
{
	struct capture_plan plan;
	struct fetch_build b[2];
	plan_build(&plan, b);
	struct profile *p = profile_new();
	struct engine_fetch prog;
	cr_assert(capture_program(&plan, 0, p, 0, &prog));
	uint32_t probe = profile_probe_add(p, "handle", "/bin/x", 0x1130);
	cr_assert_eq(probe, 0);
	capture_name(&plan, 0, p, probe);
	cr_expect_eq(p->probes[probe].capture_layout, prog.layout);
	cr_expect_eq(p->probes[probe].ncapture_slots, 1);
	cr_expect_eq(record(p, probe, prog.layout), 0);
	profile_free(p);
}

/* A spec that captures nothing (no builds): no program and nothing named. */
Test(capture, nothing_captured)
{
	struct capture_plan plan = {0};
	struct profile *p = profile_new();
	uint32_t probe = profile_probe_add(p, "handle", "/bin/x", 0x1130);
	struct engine_fetch prog;
	cr_expect_not(capture_program(&plan, 0, p, probe, &prog));
	capture_name(&plan, 0, p, probe);
	cr_expect_eq(p->ncaptures, 0);
	cr_expect_eq(p->probes[probe].capture_layout, 0);
	cr_expect_null(p->probes[probe].predicate);
	profile_free(p);
}
