/* Unit tests for the collector (model/collector): records as the kernel
 * sends them, built by hand, turned into the profile's samples and calls.
 * The user stacks are addresses of this test's own functions in this
 * process, so the symbolizer names them from the test binary itself; what
 * each record added is what collector_handle says it added. Bad records
 * are counted and add nothing. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "profile.h"
#include "sonde_abi.h"
#include "symbols.h"
#include "values.h"

/* Two functions with bodies long enough that an address a few bytes in,
 * and one less than it (a return address's call site), is inside them. */
__attribute__((noinline)) int collector_test_leaf(volatile int *x)
{
	for (int i = 0; i < 8; i++)
		*x += i * *x;
	return *x;
}

__attribute__((noinline)) int collector_test_caller(volatile int *x)
{
	int r = collector_test_leaf(x);
	for (int i = 0; i < 8; i++)
		r += i * *x;
	return r;
}

struct rig {
	struct profile *p;
	struct symbolizer *syms;
	struct collector *c;
};

static void rig_open(struct rig *r)
{
	r->p = profile_new();
	r->syms = symbols_new();
	r->c = collector_new(r->p, r->syms);
	collector_set_event(r->c, 0, "cpu-clock", 1);
	cr_assert_eq(symbols_note_process(r->syms, getpid()), 0);
}

static void rig_close(struct rig *r)
{
	collector_free(r->c);
	symbols_free(r->syms);
	profile_free(r->p);
}

static void header(struct sonde_hdr *h, uint32_t kind, uint64_t time_ns, uint32_t tid)
{
	h->kind = kind;
	h->cpu = 1;
	h->time_ns = time_ns;
	h->pid = (uint32_t)getpid();
	h->tid = tid;
	memcpy(h->comm, "collect", 8);
}

/* An on-CPU sample of this process: the leaf in collector_test_leaf, called
 * from collector_test_caller; in the calls `spans` (outermost first). */
static size_t sample_record(struct sonde_sample *s, uint64_t time_ns, const uint64_t *spans,
			    uint32_t nspans)
{
	memset(s, 0, sizeof(*s));
	header(&s->hdr, SONDE_REC_SAMPLE, time_ns, (uint32_t)getpid());
	s->unwind = SONDE_UNWIND_FP;
	s->syscall = -1;
	s->nuser = 2;
	s->ips[0] = (uint64_t)(uintptr_t)collector_test_leaf + 4;
	s->ips[1] = (uint64_t)(uintptr_t)collector_test_caller + 9;
	s->nspans = s->span_depth = nspans;
	for (uint32_t i = 0; i < nspans; i++) {
		s->span_ids[i] = spans[i];
		s->span_probes[i] = 0;
	}
	return SONDE_SAMPLE_BYTES(2);
}

static const char *frame_name(const struct profile *p, uint32_t id)
{
	const struct frame *f = frames_get(p->frames, id);
	cr_assert_not_null(f);
	return f->name;
}

Test(collector, a_sample_is_added_with_its_stack_thread_and_calls)
{
	struct rig r;
	rig_open(&r);
	struct sonde_sample s;
	uint64_t spans[2] = {7, 9};
	size_t size = sample_record(&s, 1000, spans, 2);
	struct collector_added a;
	collector_handle(r.c, &s, size, &a);
	cr_assert_eq(a.first_sample, 0);
	cr_assert_eq(a.nsamples, 1);
	cr_assert_eq(a.nspans, 0);
	cr_assert_eq(r.p->nsamples, 1);
	const struct sample *got = &r.p->samples[0];
	cr_assert_eq(got->time_ns, 1000);
	cr_assert_eq(got->weight, 1);
	cr_assert_eq(got->cpu, 1);
	const struct thread_info *t = &r.p->threads[got->thread];
	cr_assert_eq(t->pid, (uint32_t)getpid());
	cr_assert_eq(t->tid, (uint32_t)getpid());
	cr_assert_str_eq(t->comm, "collect");
	uint32_t f[8];
	size_t n = profile_stack_frames(r.p, got->stack, f, 8);
	cr_assert_eq(n, 2, "two frames, got %zu", n);
	cr_assert_str_eq(frame_name(r.p, f[0]), "collector_test_caller");
	cr_assert_str_eq(frame_name(r.p, f[1]), "collector_test_leaf");
	cr_assert_eq(got->nlinks, 2);
	cr_assert_eq(r.p->span_links[got->links].span_id, 7);
	cr_assert_eq(r.p->span_links[got->links + 1].span_id, 9);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_assert_eq(st.samples, 1);
	cr_assert_eq(st.bad_records, 0);
	/* A second one adds at the next index, the stack interned once. */
	collector_handle(r.c, &s, size, &a);
	cr_assert_eq(a.first_sample, 1);
	cr_assert_eq(a.nsamples, 1);
	cr_assert_eq(r.p->samples[1].stack, got->stack);
	rig_close(&r);
}

Test(collector, a_call_is_added_with_its_times)
{
	struct rig r;
	rig_open(&r);
	profile_probe_add(r.p, "work", "/bin/work", 0x1000);
	struct sonde_span sp = {0};
	header(&sp.hdr, SONDE_REC_SPAN, 5000, 42);
	sp.probe = 0;
	sp.depth = 1;
	sp.span_id = 77;
	sp.start_ns = 2000;
	sp.duration_ns = 2900;
	sp.raw_duration_ns = 3000;
	struct collector_added a;
	collector_handle(r.c, &sp, sizeof(sp), &a);
	cr_assert_eq(a.nsamples, 0);
	cr_assert_eq(a.first_span, 0);
	cr_assert_eq(a.nspans, 1);
	const struct span *got = &r.p->spans[0];
	cr_assert_eq(got->id, 77);
	cr_assert_eq(got->start_ns, 2000);
	cr_assert_eq(got->duration_ns, 2900);
	cr_assert_eq(got->raw_duration_ns, 3000);
	cr_assert_eq(got->probe, 0);
	cr_assert_eq(r.p->threads[got->thread].tid, 42);
	/* The same call again is refused (an id is one call), and a probe the
	 * profile does not have is a bad record: neither adds anything. */
	collector_handle(r.c, &sp, sizeof(sp), &a);
	cr_assert_eq(a.nspans, 0);
	sp.span_id = 78;
	sp.probe = 5;
	collector_handle(r.c, &sp, sizeof(sp), &a);
	cr_assert_eq(a.nspans, 0);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_assert_eq(st.spans, 1);
	cr_assert_eq(st.bad_records, 2);
	rig_close(&r);
}

Test(collector, bad_records_are_counted_and_add_nothing)
{
	struct rig r;
	rig_open(&r);
	struct sonde_sample s;
	size_t size = sample_record(&s, 1000, NULL, 0);
	struct collector_added a;
	collector_handle(r.c, &s, 4, &a); /* shorter than a header */
	cr_assert_eq(a.nsamples, 0);
	collector_handle(r.c, &s, size - 8, &a); /* its last frame cut off */
	cr_assert_eq(a.nsamples, 0);
	s.nuser = SONDE_MAX_STACK + 1; /* more frames than a stack holds */
	collector_handle(r.c, &s, sizeof(s), &a);
	cr_assert_eq(a.nsamples, 0);
	struct sonde_hdr h;
	header(&h, 0x7fff, 1000, 1); /* a kind no one sends */
	collector_handle(r.c, &h, sizeof(h), &a);
	cr_assert_eq(a.nsamples + a.nspans, 0);
	struct sonde_span sp = {0};
	header(&sp.hdr, SONDE_REC_SPAN, 5000, 42);
	collector_handle(r.c, &sp, sizeof(sp) - 1, NULL); /* short, and no `added` asked */
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_assert_eq(st.bad_records, 5);
	cr_assert_eq(r.p->nsamples, 0);
	cr_assert_eq(r.p->nspans, 0);
	rig_close(&r);
}

Test(collector, after_the_end_nothing_counts_and_an_interval_is_cut_there)
{
	struct rig r;
	rig_open(&r);
	collector_set_end(r.c, 10000);
	struct sonde_sample s;
	size_t size = sample_record(&s, 10001, NULL, 0);
	struct collector_added a;
	collector_handle(r.c, &s, size, &a);
	cr_assert_eq(a.nsamples, 0, "a sample after the end is left out");
	/* An off-CPU interval: left the CPU at 6000 for 7000 ns, past the end
	 * at 10000: it weighs the 4000 ns up to the end. */
	size = sample_record(&s, 6000, NULL, 0);
	s.off_state = SONDE_OFF_SLEEPING;
	s.off_ns = 7000;
	collector_handle(r.c, &s, size, &a);
	cr_assert_eq(a.nsamples, 1);
	cr_assert_eq(r.p->samples[a.first_sample].weight, 4000);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_assert_eq(st.after_end, 1);
	cr_assert_eq(st.offcpu_intervals, 1);
	rig_close(&r);
}

Test(collector, a_call_still_open_at_the_end_counts_until_the_end_less_sondes_cost)
{
	struct rig r;
	rig_open(&r);
	profile_probe_add(r.p, "work", "/bin/work", 0x1000);
	struct collector_open_span o = {.tid = 42, .probe = 0, .depth = 1, .span_id = 5,
					.start_ns = 1000, .own_ns = 300};
	collector_add_open_span(r.c, &o, 9000);
	cr_assert_eq(r.p->nspans, 1);
	const struct span *sp = &r.p->spans[0];
	cr_assert(sp->open);
	cr_assert_eq(sp->raw_duration_ns, 8000);
	cr_assert_eq(sp->duration_ns, 7700);
	cr_assert_eq(r.p->threads[sp->thread].tid, 42);
	/* One that ended meanwhile (its record came) is not added again, nor
	 * one of a probe the profile does not have. */
	collector_add_open_span(r.c, &o, 9000);
	o.span_id = 6;
	o.probe = 3;
	collector_add_open_span(r.c, &o, 9000);
	cr_assert_eq(r.p->nspans, 1);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_assert_eq(st.open_spans, 1);
	rig_close(&r);
}

/* A values record becomes one hit of its probe, a value per capture, with
 * the status the kernel gave; a record of an earlier program of the probe
 * (another layout) or of no probe adds nothing. */
Test(collector, values_become_a_hit_of_their_probe)
{
	struct rig r;
	rig_open(&r);
	profile_probe_add(r.p, "handle", "/bin/x", 0x1000);
	uint32_t caps[2] = {
		values_capture_intern(r.p, &(struct probe_capture){.name = "len", .type = "int",
								   .kind = CAPTURE_SIGNED}),
		values_capture_intern(r.p, &(struct probe_capture){.name = "fd", .type = "int",
								   .kind = CAPTURE_SIGNED}),
	};
	uint32_t layout = values_set_probe(r.p, 0, caps, 2, NULL);
	struct sonde_values v;
	memset(&v, 0, sizeof(v));
	header(&v.hdr, SONDE_REC_VALUES, 7000, 43);
	v.probe = 0;
	v.nvalues = 2;
	v.span_id = 91;
	v.layout = layout;
	v.value[0] = (uint64_t)-5; /* signed: sign-extended as kept */
	v.status[1] = SONDE_VAL_OPTIMIZED_OUT;
	collector_handle(r.c, &v, sizeof(v), NULL);
	cr_assert_eq(r.p->nhits, 1);
	const struct probe_hit *h = &r.p->hits[0];
	cr_expect_eq(h->probe, 0);
	cr_expect_eq(h->span_id, 91);
	cr_expect_eq(h->time_ns, 7000);
	cr_expect_eq(r.p->threads[h->thread].tid, 43);
	cr_assert_eq(h->n, 2);
	const struct hit_value *hv = &r.p->hit_values[h->first];
	cr_expect_eq(hv[0].status, CAPTURE_OK);
	cr_expect_eq((int64_t)hv[0].num, -5);
	cr_expect_eq(hv[1].status, CAPTURE_OPTIMIZED_OUT);
	/* An earlier program's record, and one of a probe the profile lacks. */
	v.layout = layout + 1;
	collector_handle(r.c, &v, sizeof(v), NULL);
	v.layout = layout;
	v.probe = 9;
	collector_handle(r.c, &v, sizeof(v), NULL);
	cr_expect_eq(r.p->nhits, 1, "neither adds a hit");
	rig_close(&r);
}

/* Task records add no sample or call: they are counted, and a fork's or an
 * exec's process is read at once (here: this process, which the symbolizer
 * then still names). */
Test(collector, task_records_are_counted)
{
	struct rig r;
	rig_open(&r);
	struct sonde_task_event t = {0};
	header(&t.hdr, SONDE_REC_FORK, 100, (uint32_t)getpid());
	t.child_pid = t.child_tgid = (uint32_t)getpid();
	struct collector_added a;
	collector_handle(r.c, &t, sizeof(t), &a);
	cr_expect_eq(a.nsamples + a.nspans, 0);
	header(&t.hdr, SONDE_REC_EXEC, 200, (uint32_t)getpid());
	collector_handle(r.c, &t, sizeof(t), NULL);
	header(&t.hdr, SONDE_REC_EXIT, 300, (uint32_t)getpid());
	collector_handle(r.c, &t, sizeof(t), NULL);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_expect_eq(st.forks, 1);
	cr_expect_eq(st.execs, 1);
	cr_expect_eq(st.exits, 1);
	cr_expect_eq(st.bad_records, 0);
	/* A sample after them is still symbolized from this process's maps. */
	struct sonde_sample s;
	size_t n = sample_record(&s, 400, NULL, 0);
	collector_handle(r.c, &s, n, NULL);
	cr_assert_eq(r.p->nsamples, 1);
	uint32_t frames[8];
	size_t depth = profile_stack_frames(r.p, r.p->samples[0].stack, frames, 8);
	cr_assert_geq(depth, 2);
	cr_expect_str_eq(frame_name(r.p, frames[depth - 1]), "collector_test_leaf");
	rig_close(&r);
}

/* A record of the stacks thread `tid` of this process left the CPU with at
 * time_ns (SONDE_REC_THREAD_STACK): nuser 1, the leaf alone; 2, with its
 * caller. */
static size_t thread_stack_record(struct sonde_sample *s, uint64_t time_ns, uint32_t tid,
				  uint32_t nuser)
{
	size_t size = sample_record(s, time_ns, NULL, 0);
	s->hdr.kind = SONDE_REC_THREAD_STACK;
	s->hdr.tid = tid;
	s->nuser = nuser;
	return nuser == 2 ? size : SONDE_SAMPLE_BYTES(nuser);
}

/* A thread-state row of thread `tid` at pass time `time_ns`. */
static void thread_row(struct sonde_thread_sample *t, uint64_t time_ns, uint32_t tid,
		       uint8_t state, uint64_t stack_ns)
{
	memset(t, 0, sizeof(*t));
	header(&t->hdr, SONDE_REC_THREAD, time_ns, tid);
	t->pass = 1;
	t->state = state;
	t->state_since_ns = time_ns - 400;
	t->syscall = -1;
	t->stack_ns = stack_ns;
}

/* A THREAD record becomes one thread sample, field for field: its state
 * and since when, its system call and since when, its flags, its thread,
 * and the outermost of its calls in flight (span_ids[0], not the inner
 * one); it adds no sample or call. A call of a probe the profile lacks is
 * no call; a record shorter than a row is bad and adds nothing. */
Test(collector, a_thread_record_becomes_a_thread_sample)
{
	struct rig r;
	rig_open(&r);
	profile_probe_add(r.p, "outer", "/bin/x", 0x1000);
	profile_probe_add(r.p, "inner", "/bin/x", 0x2000);
	struct sonde_thread_sample t;
	thread_row(&t, 10000, 77, SONDE_OFF_SLEEPING, 0);
	t.syscall = 7; /* poll */
	t.syscall_since_ns = 9700;
	t.flags = SONDE_TSTATE_SEEDED;
	t.nspans = t.span_depth = 2;
	t.span_ids[0] = 31;
	t.span_ids[1] = 32;
	t.span_start_ns[0] = 2000;
	t.span_start_ns[1] = 8000;
	t.span_probes[0] = 0;
	t.span_probes[1] = 1;
	struct collector_added a;
	collector_handle(r.c, &t, sizeof(t), &a);
	cr_expect_eq(a.nsamples + a.nspans, 0);
	cr_assert_eq(r.p->nthread_samples, 1);
	const struct thread_sample *ts = &r.p->thread_samples[0];
	cr_expect_eq(ts->time_ns, 10000);
	cr_expect_eq(ts->state, TSTATE_SLEEPING);
	cr_expect_eq(ts->state_since_ns, 9600);
	cr_expect_eq(ts->syscall, 7);
	cr_expect_eq(ts->syscall_since_ns, 9700);
	cr_expect_eq(ts->flags, TSTATE_FLAG_SEEDED);
	cr_expect_eq(r.p->threads[ts->thread].tid, 77);
	cr_expect_str_eq(r.p->threads[ts->thread].comm, "collect");
	cr_expect_eq(ts->span_id, 31);
	cr_expect_eq(ts->span_start_ns, 2000);
	cr_expect_eq(ts->probe, 0);
	cr_expect_eq(ts->stack, 0, "no stacks were sent");
	cr_expect_not(ts->stack_on_cpu);
	/* in a call of probe 5, which the profile lacks: no call */
	thread_row(&t, 11000, 78, SONDE_OFF_RUNNABLE, 0);
	t.nspans = t.span_depth = 1;
	t.span_ids[0] = 40;
	t.span_probes[0] = 5;
	collector_handle(r.c, &t, sizeof(t), NULL);
	cr_assert_eq(r.p->nthread_samples, 2);
	cr_expect_eq(r.p->thread_samples[1].span_id, 0);
	cr_expect_eq(r.p->thread_samples[1].state, TSTATE_RUNNABLE);
	/* cut short: bad, nothing added */
	collector_handle(r.c, &t, sizeof(t) - 1, NULL);
	cr_expect_eq(r.p->nthread_samples, 2);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_expect_eq(st.thread_samples, 2);
	cr_expect_eq(st.bad_records, 1);
	rig_close(&r);
}

/* A row names the stacks its thread left the CPU with when the pass sent
 * them (THREAD_STACK at the row's stack_ns, adding no sample); a row whose
 * stacks' record never came has none and is counted; a running thread's
 * newer on-CPU sample is its stack instead (while last stacks are kept),
 * a sleeping one's never is. */
Test(collector, a_thread_row_names_its_last_stacks)
{
	struct rig r;
	rig_open(&r);
	collector_keep_last_stacks(r.c, true);
	struct sonde_sample s;
	struct collector_added a;
	size_t size = thread_stack_record(&s, 5000, 77, 1);
	collector_handle(r.c, &s, size, &a);
	cr_expect_eq(a.nsamples, 0, "a thread's stacks are no sample");
	cr_expect_eq(r.p->nsamples, 0);
	struct sonde_thread_sample t;
	thread_row(&t, 10000, 77, SONDE_OFF_SLEEPING, 5000);
	collector_handle(r.c, &t, sizeof(t), NULL);
	cr_assert_eq(r.p->nthread_samples, 1);
	const struct thread_sample *ts = &r.p->thread_samples[0];
	cr_assert_neq(ts->stack, 0);
	cr_expect_eq(ts->stack_ns, 5000);
	cr_expect_not(ts->stack_on_cpu);
	uint32_t f[8];
	size_t n = profile_stack_frames(r.p, ts->stack, f, 8);
	cr_assert_eq(n, 1, "the leaf alone, got %zu frames", n);
	cr_expect_str_eq(frame_name(r.p, f[0]), "collector_test_leaf");
	uint32_t left = ts->stack;

	/* stacks sent at 6000 that never arrived: none, counted */
	thread_row(&t, 11000, 77, SONDE_OFF_SLEEPING, 6000);
	collector_handle(r.c, &t, sizeof(t), NULL);
	cr_expect_eq(r.p->thread_samples[1].stack, 0);

	/* an on-CPU sample of thread 77 at 8000, newer than its left stacks */
	size = sample_record(&s, 8000, NULL, 0);
	s.hdr.tid = 77;
	collector_handle(r.c, &s, size, &a);
	cr_assert_eq(a.nsamples, 1);
	uint32_t oncpu = r.p->samples[a.first_sample].stack;
	cr_assert_neq(oncpu, left);
	thread_row(&t, 12000, 77, SONDE_OFF_NONE, 5000); /* running */
	collector_handle(r.c, &t, sizeof(t), NULL);
	ts = &r.p->thread_samples[2];
	cr_expect_eq(ts->stack, oncpu);
	cr_expect_eq(ts->stack_ns, 8000);
	cr_expect(ts->stack_on_cpu);
	thread_row(&t, 13000, 77, SONDE_OFF_SLEEPING, 5000); /* asleep again */
	collector_handle(r.c, &t, sizeof(t), NULL);
	ts = &r.p->thread_samples[3];
	cr_expect_eq(ts->stack, left);
	cr_expect_not(ts->stack_on_cpu);

	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_expect_eq(st.thread_stacks, 1);
	cr_expect_eq(st.thread_stacks_missing, 1);
	cr_expect_eq(st.thread_samples, 4);
	cr_expect_eq(st.bad_records, 0);
	rig_close(&r);
}

/* Without last stacks kept (thread states off), a running thread's row
 * names the stacks it left the CPU with, not a newer sample's. */
Test(collector, without_kept_stacks_a_running_row_names_its_left_stacks)
{
	struct rig r;
	rig_open(&r);
	struct sonde_sample s;
	size_t size = thread_stack_record(&s, 5000, 77, 1);
	collector_handle(r.c, &s, size, NULL);
	size = sample_record(&s, 8000, NULL, 0);
	s.hdr.tid = 77;
	collector_handle(r.c, &s, size, NULL);
	struct sonde_thread_sample t;
	thread_row(&t, 12000, 77, SONDE_OFF_NONE, 5000);
	collector_handle(r.c, &t, sizeof(t), NULL);
	cr_assert_eq(r.p->nthread_samples, 1);
	const struct thread_sample *ts = &r.p->thread_samples[0];
	cr_expect_eq(ts->stack_ns, 5000);
	cr_expect_not(ts->stack_on_cpu);
	cr_expect_neq(ts->stack, r.p->samples[0].stack);
	rig_close(&r);
}

/* THREAD_PASS records are counted and their run times summed; they add no
 * row; one cut short is bad. */
Test(collector, thread_passes_are_counted_with_their_run_time)
{
	struct rig r;
	rig_open(&r);
	struct sonde_thread_pass tp = {0};
	header(&tp.hdr, SONDE_REC_THREAD_PASS, 10000, 0);
	tp.pass = 1;
	tp.nthreads = 12;
	tp.run_ns = 35000;
	collector_handle(r.c, &tp, sizeof(tp), NULL);
	tp.pass = 2;
	tp.run_ns = 41000;
	collector_handle(r.c, &tp, sizeof(tp), NULL);
	collector_handle(r.c, &tp, sizeof(tp) - 8, NULL);
	struct collector_stats st;
	collector_get_stats(r.c, &st);
	cr_expect_eq(st.thread_passes, 2);
	cr_expect_eq(st.thread_pass_ns, 76000);
	cr_expect_eq(st.bad_records, 1);
	cr_expect_eq(r.p->nthread_samples, 0);
	cr_expect_eq(r.p->nsamples, 0);
	rig_close(&r);
}
