/* Unit tests for recordids: a record names probes by the kernel's slot; the
 * caller gets it under its own probe ids, the record itself when nothing
 * changes, a copy otherwise, nothing for a slot no probe is in. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "recordids.h"
#include "sonde_abi.h"

/* Slot 3 holds the caller's probe 7, slot 5 its probe 5; the rest are free. */
static uint32_t table[SONDE_MAX_PROBES];
static unsigned char *buf;
static size_t cap;

static void setup(void)
{
	for (int i = 0; i < SONDE_MAX_PROBES; i++)
		table[i] = NO_PROBE;
	table[3] = 7;
	table[5] = 5;
	buf = NULL;
	cap = 0;
}

static void teardown(void)
{
	free(buf);
}

TestSuite(recordids, .init = setup, .fini = teardown);

static const void *ids(const void *rec, size_t size)
{
	return record_with_ids(table, rec, size, &buf, &cap);
}

Test(recordids, a_span_of_its_own_id_is_the_record_itself)
{
	struct sonde_span s = {.hdr.kind = SONDE_REC_SPAN, .probe = 5, .span_id = 42};
	cr_assert_eq(ids(&s, sizeof(s)), &s);
}

Test(recordids, a_span_is_renamed_in_a_copy)
{
	struct sonde_span s = {.hdr.kind = SONDE_REC_SPAN, .probe = 3, .span_id = 42,
			       .duration_ns = 1000};
	const struct sonde_span *r = ids(&s, sizeof(s));
	cr_assert_not_null(r);
	cr_assert_neq(r, &s);
	cr_expect_eq(r->probe, 7);
	cr_expect_eq(r->span_id, 42);
	cr_expect_eq(r->duration_ns, 1000);
	cr_expect_eq(s.probe, 3, "the kernel's record is left as it was");
}

Test(recordids, a_span_or_values_of_a_free_slot_is_dropped)
{
	struct sonde_span s = {.hdr.kind = SONDE_REC_SPAN, .probe = 9};
	cr_expect_null(ids(&s, sizeof(s)));
	struct sonde_values v = {.hdr.kind = SONDE_REC_VALUES, .probe = 9};
	cr_expect_null(ids(&v, sizeof(v)));
	/* A slot beyond the table names no probe either. */
	s.probe = SONDE_MAX_PROBES + 1;
	cr_expect_null(ids(&s, sizeof(s)));
}

Test(recordids, values_are_renamed)
{
	struct sonde_values v = {.hdr.kind = SONDE_REC_VALUES, .probe = 3, .nvalues = 2,
				 .value = {11, 22}};
	const struct sonde_values *r = ids(&v, sizeof(v));
	cr_assert_not_null(r);
	cr_expect_eq(r->probe, 7);
	cr_expect_eq(r->value[1], 22);
	v.probe = 5;
	cr_expect_eq(ids(&v, sizeof(v)), &v);
}

Test(recordids, a_sample_renames_the_calls_in_flight)
{
	size_t size = SONDE_SAMPLE_BYTES(2);
	struct sonde_sample *s = calloc(1, sizeof(*s));
	s->hdr.kind = SONDE_REC_SAMPLE;
	s->nspans = 3;
	s->span_probes[0] = 5;
	s->span_probes[1] = 3;
	s->span_probes[2] = 200; /* a free slot: no probe */
	s->span_ids[1] = 99;
	s->ips[1] = 0x1234;
	const struct sonde_sample *r = ids(s, size);
	cr_assert_not_null(r);
	cr_assert_neq(r, s);
	cr_expect_eq(r->span_probes[0], 5);
	cr_expect_eq(r->span_probes[1], 7);
	cr_expect_eq(r->span_probes[2], NO_PROBE);
	cr_expect_eq(r->span_ids[1], 99);
	cr_expect_eq(r->ips[1], 0x1234);
	/* Only the calls it carries count: with one, nothing changes. */
	s->nspans = 1;
	cr_expect_eq(ids(s, size), s);
	/* A thread's stacks are samples too. */
	s->hdr.kind = SONDE_REC_THREAD_STACK;
	s->nspans = 2;
	r = ids(s, size);
	cr_assert_neq(r, s);
	cr_expect_eq(r->span_probes[1], 7);
	free(s);
}

Test(recordids, a_thread_record_renames_its_calls)
{
	struct sonde_thread_sample t = {.hdr.kind = SONDE_REC_THREAD, .nspans = 2,
					.span_probes = {3, SONDE_MAX_PROBES}};
	const struct sonde_thread_sample *r = ids(&t, sizeof(t));
	cr_assert_not_null(r);
	cr_expect_eq(r->span_probes[0], 7);
	cr_expect_eq(r->span_probes[1], NO_PROBE);
	t.span_probes[1] = 5;
	t.span_probes[0] = 5;
	cr_expect_eq(ids(&t, sizeof(t)), &t);
}

Test(recordids, other_kinds_and_short_records_pass_as_they_are)
{
	struct sonde_hdr exitrec = {.kind = SONDE_REC_EXIT, .pid = 12};
	cr_expect_eq(ids(&exitrec, sizeof(exitrec)), &exitrec);
	/* Too short to be the span it says: not read as one. */
	struct sonde_span s = {.hdr.kind = SONDE_REC_SPAN, .probe = 9};
	cr_expect_eq(ids(&s, sizeof(s) - 1), &s);
}
