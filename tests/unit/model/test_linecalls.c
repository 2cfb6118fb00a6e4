/* linecalls: a line probe's hits among the calls of the function probes,
 * on a profile built by hand where every number is known: the kernel's
 * counts of each (line, function) pair as set, in the order met; and of a
 * function's closed calls over its threshold (strictly), those whose
 * `points` have the line's own bit. */
#include <criterion/criterion.h>

#include "linecalls.h"
#include "profile.h"

/* handle and other are function probes; line (bit 2) and line0 (bit 0)
 * line probes; handle's threshold 1000 ns, other's none. */
struct fixture {
	struct profile *p;
	uint32_t handle, other, line, line0;
	uint64_t threshold[8];
	uint32_t asked[16];
	size_t nasked;
};

static uint64_t slow_of(void *arg, uint32_t probe)
{
	struct fixture *f = arg;
	cr_assert_lt(f->nasked, 16);
	f->asked[f->nasked++] = probe;
	return f->threshold[probe];
}

static void span(struct profile *p, uint64_t id, uint32_t probe, uint64_t ns, bool open,
		 uint64_t points)
{
	struct span s = {.id = id, .probe = probe, .duration_ns = ns, .start_ns = id * 100000,
			 .depth = 1, .open = open, .points = points};
	cr_assert_geq(profile_span_add(p, &s), 0);
}

static void build(struct fixture *f)
{
	*f = (struct fixture){.p = profile_new()};
	struct profile *p = f->p;
	f->handle = profile_probe_add(p, "handle", "/bin/x", 0x10);
	f->other = profile_probe_add(p, "other", "/bin/x", 0x20);
	f->line = profile_probe_add(p, "x.c:12", "/bin/x", 0x30);
	f->line0 = profile_probe_add(p, "x.c:40", "/bin/x", 0x40);
	p->probes[f->line].point = 2;
	p->probes[f->line0].point = 0;
	f->threshold[f->handle] = 1000;
	/* met in this order: other before handle */
	profile_point_calls_set(p, f->line, f->other, 50, 50);
	profile_point_calls_set(p, f->line, f->handle, 100, 3);
	profile_point_calls_set(p, f->line, f->handle, 100, 8); /* the kernel's later count */
	profile_point_calls_set(p, f->line0, f->handle, 7, 1);
	profile_point_calls_set(p, f->line, 99, 5, 5); /* a probe the profile has not */
	/* handle's calls: fast with the line; slow with it (and bit 1, no
	 * probe's); slow with line0's bit only; slow but still open; exactly
	 * the threshold (not over); slow with the line again */
	span(p, 1, f->handle, 10, false, 1u << 2);
	span(p, 2, f->handle, 2000, false, 1u << 2 | 1u << 1);
	span(p, 3, f->handle, 3000, false, 1u << 0);
	span(p, 4, f->handle, 5000, true, 1u << 2);
	span(p, 5, f->handle, 1000, false, 1u << 2);
	span(p, 7, f->handle, 4000, false, 1u << 2);
	/* other's slow-looking call: no threshold, so no slow calls */
	span(p, 6, f->other, 9999, false, 1u << 2);
}

/* Line `line`: one row per function probe it met, in the order met, with
 * the kernel's latest counts; handle's slow calls are 2, 3 and 7 (not the
 * open one, not the one at the threshold), of which 2 and 7 have bit 2;
 * other has no threshold, so no slow calls; the pair of a probe the
 * profile lacks gives no row. The threshold is asked per row with arg. */
Test(linecalls, rows_of_a_line)
{
	struct fixture f;
	build(&f);
	struct line_in_calls out[4];
	cr_assert_eq(f.p->nprobes, 4);
	size_t n = line_calls_of(f.p, f.line, slow_of, &f, out);
	cr_assert_eq(n, 2);
	cr_expect_eq(out[0].probe, f.other);
	cr_expect_eq(out[0].calls, 50);
	cr_expect_eq(out[0].hit, 50);
	cr_expect_eq(out[0].slow_ns, 0);
	cr_expect_eq(out[0].slow, 0);
	cr_expect_eq(out[0].slow_hit, 0);
	cr_expect_eq(out[1].probe, f.handle);
	cr_expect_eq(out[1].calls, 100);
	cr_expect_eq(out[1].hit, 8);
	cr_expect_eq(out[1].slow_ns, 1000);
	cr_expect_eq(out[1].slow, 3);
	cr_expect_eq(out[1].slow_hit, 2);
	cr_assert_eq(f.nasked, 2);
	cr_expect_eq(f.asked[0], f.other);
	cr_expect_eq(f.asked[1], f.handle);
	profile_free(f.p);
}

/* Another line reads its own bit: line0 (bit 0) over the same slow calls
 * of handle is hit in call 3 only. */
Test(linecalls, each_line_its_own_bit)
{
	struct fixture f;
	build(&f);
	struct line_in_calls out[4];
	size_t n = line_calls_of(f.p, f.line0, slow_of, &f, out);
	cr_assert_eq(n, 1);
	cr_expect_eq(out[0].probe, f.handle);
	cr_expect_eq(out[0].calls, 7);
	cr_expect_eq(out[0].hit, 1);
	cr_expect_eq(out[0].slow, 3);
	cr_expect_eq(out[0].slow_hit, 1);
	/* a lower threshold takes in call 1 (10 ns > 5), not a line0 hit */
	f.threshold[f.handle] = 5;
	n = line_calls_of(f.p, f.line0, slow_of, &f, out);
	cr_assert_eq(n, 1);
	cr_expect_eq(out[0].slow, 5);
	cr_expect_eq(out[0].slow_hit, 1);
	profile_free(f.p);
}

/* A probe no pair names (a function probe taken as the line) has no rows. */
Test(linecalls, no_pairs_no_rows)
{
	struct fixture f;
	build(&f);
	struct line_in_calls out[4];
	cr_expect_eq(line_calls_of(f.p, f.handle, slow_of, &f, out), 0);
	cr_expect_eq(f.nasked, 0);
	profile_free(f.p);
}

/* Shares in percent, 0 of nothing. */
Test(linecalls, share)
{
	cr_expect_float_eq(line_calls_share(8, 100), 8.0, 1e-12);
	cr_expect_float_eq(line_calls_share(97, 100), 97.0, 1e-12);
	cr_expect_float_eq(line_calls_share(1, 3), 100.0 / 3, 1e-12);
	cr_expect_float_eq(line_calls_share(3, 3), 100.0, 1e-12);
	cr_expect_eq(line_calls_share(5, 0), 0.0);
}
