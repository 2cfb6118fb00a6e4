/* symstack: the decisions symstack_user makes on synthetic stacks of this
 * very process, whose addresses are known: functions of this file, the
 * kernel's real uprobe page (a uretprobe is put on a function here with
 * perf_event_open and hit once, so [uprobes] is in our maps; skipped where
 * perf events are refused), and heap memory. A leaf in the uprobe page is
 * left out; trampoline addresses further up are replaced by the real
 * returns, innermost first, a chained return skipped; the first address
 * that cannot be code cuts the stack into one marker frame at the root.
 * symstack_kernel names kernel addresses as /proc/kallsyms does and tells
 * the uprobe machinery from other kernel code. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "symstack.h"

/* Functions whose addresses make the stacks; they call nothing, so no
 * inline chain. A return address stands inside its function (fn + 2: a
 * lookup as a return reads fn + 1; as a leaf, fn + 2). */
#define FN(name)                                                                              \
	__attribute__((noinline, used)) int name(int x)                                       \
	{                                                                                     \
		__asm__ volatile("" : "+r"(x));                                               \
		return x + 1;                                                                 \
	}
FN(sstk_leaf)
FN(sstk_caller)
FN(sstk_outer)
FN(sstk_root)
FN(sstk_real_ret_a)
FN(sstk_real_ret_b)
FN(sstk_probed)

#define ADDR(fn) ((uint64_t)(uintptr_t)(fn))
#define RET(fn) (ADDR(fn) + 2)

/* The [uprobes] page of this process, after a uretprobe on sstk_probed (an
 * uprobe PMU event on our own executable, config bit 0: a return probe,
 * whose trampoline is in that page; an entry probe alone may be emulated
 * and map none) was hit; skips the test when the kernel refuses. Returns
 * the perf fd (close it at the end). */
static int uprobe_page(uint64_t *lo, uint64_t *hi)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;
	if (!f || fscanf(f, "%d", &type) != 1) {
		if (f)
			fclose(f);
		cr_skip_test("no uprobe PMU");
	}
	fclose(f);
	/* the file offset of sstk_probed, from the mapping that holds it */
	char path[4096] = "", line[8192];
	uint64_t off = 0;
	f = fopen("/proc/self/maps", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e, o;
		char p[4096] = "";
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %4095s", &s, &e, &o,
			   p) >= 3 &&
		    ADDR(sstk_probed) >= s && ADDR(sstk_probed) < e) {
			off = ADDR(sstk_probed) - s + o;
			snprintf(path, sizeof(path), "%s", p);
		}
	}
	fclose(f);
	cr_assert_neq(path[0], '\0', "sstk_probed is in no file mapping");
	struct perf_event_attr a = {.size = sizeof(a), .type = (uint32_t)type,
				    .config = 1, .config1 = (uint64_t)(uintptr_t)path,
				    .config2 = off,
				    .sample_period = 1};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		cr_skip_test("perf_event_open(uprobe) refused: %s", strerror(errno));
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	cr_assert_eq(sstk_probed(1), 2);
	*lo = *hi = 0;
	f = fopen("/proc/self/maps", "r");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]"))
			sscanf(line, "%" SCNx64 "-%" SCNx64, lo, hi);
	fclose(f);
	if (*lo == 0)
		cr_skip_test("the uprobe was hit but no [uprobes] page is mapped");
	return fd;
}

static int resolve(struct symbolizer *s, const uint64_t *ips, int n, const uint64_t *returns,
		   uint32_t nreturns, uint32_t chained, struct sym_frame *out, size_t max,
		   struct symstack_info *info)
{
	struct symstack_user u = {.ips = ips, .n = n, .returns = returns, .nreturns = nreturns,
				  .chained = chained};
	memset(info, 0x5a, sizeof(*info)); /* every field is the call's */
	return symstack_user(s, getpid(), &u, out, max, info);
}

/* The frames' names, ';'-joined, leaf first. */
static const char *names(const struct sym_frame *f, int n)
{
	static char buf[1024];
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? ";" : "",
			 f[i].name);
	return buf;
}

/* A leaf in the uprobe page is sonde's own machinery: left out, said so;
 * the rest of the stack is the program's. */
Test(symstack, uprobe_page_leaf_left_out)
{
	uint64_t lo, hi;
	int fd = uprobe_page(&lo, &hi);
	struct symbolizer *s = symbols_new();
	uint64_t ips[] = {lo + 0x10, RET(sstk_caller), RET(sstk_outer)};
	struct sym_frame out[SYMSTACK_MAX(3)];
	struct symstack_info info;
	int n = resolve(s, ips, 3, NULL, 0, 0, out, SYMSTACK_MAX(3), &info);
	cr_expect_str_eq(names(out, n), "sstk_caller;sstk_outer");
	cr_expect(info.leaf_in_uprobes);
	cr_expect_eq(info.returns_restored, 0);
	cr_expect_null(info.broken);
	cr_expect_eq(info.broken_addresses, 0);
	/* the same stack without the uprobe-page leaf: nothing said */
	n = resolve(s, ips + 1, 2, NULL, 0, 0, out, SYMSTACK_MAX(2), &info);
	cr_expect_str_eq(names(out, n), "sstk_caller;sstk_outer");
	cr_expect_not(info.leaf_in_uprobes);
	symbols_free(s);
	close(fd);
}

/* Trampoline addresses where returns were hijacked get the real returns
 * back, innermost first, and the stack is whole. */
Test(symstack, hijacked_returns_put_back)
{
	uint64_t lo, hi;
	int fd = uprobe_page(&lo, &hi);
	struct symbolizer *s = symbols_new();
	uint64_t ips[] = {ADDR(sstk_leaf), lo, RET(sstk_caller), lo, RET(sstk_root)};
	uint64_t returns[] = {RET(sstk_real_ret_a), RET(sstk_real_ret_b)};
	struct sym_frame out[SYMSTACK_MAX(5)];
	struct symstack_info info;
	int n = resolve(s, ips, 5, returns, 2, 0, out, SYMSTACK_MAX(5), &info);
	cr_expect_str_eq(names(out, n),
			 "sstk_leaf;sstk_real_ret_a;sstk_caller;sstk_real_ret_b;sstk_root");
	cr_expect_eq(info.returns_restored, 2);
	cr_expect_not(info.leaf_in_uprobes);
	cr_expect_null(info.broken);
	symbols_free(s);
	close(fd);
}

/* A chained return (bit 0: returns[0] shares its slot with returns[1]) is
 * passed over: the first trampoline gets returns[1]; the second has no
 * return left, so the stack breaks there, at the uprobe page. */
Test(symstack, chained_return_skipped_then_cut)
{
	uint64_t lo, hi;
	int fd = uprobe_page(&lo, &hi);
	struct symbolizer *s = symbols_new();
	uint64_t ips[] = {ADDR(sstk_leaf), lo, RET(sstk_caller), lo, RET(sstk_root)};
	uint64_t returns[] = {RET(sstk_real_ret_a), RET(sstk_real_ret_b)};
	struct sym_frame out[SYMSTACK_MAX(5)];
	struct symstack_info info;
	int n = resolve(s, ips, 5, returns, 2, 1u << 0, out, SYMSTACK_MAX(5), &info);
	cr_expect_str_eq(names(out, n),
			 "sstk_leaf;sstk_real_ret_b;sstk_caller;[broken stack: uprobes]");
	cr_expect_eq(info.returns_restored, 1);
	cr_assert_not_null(info.broken);
	cr_expect_str_eq(info.broken, "[broken stack: uprobes]");
	cr_expect_eq(info.broken_addresses, 2);
	symbols_free(s);
	close(fd);
}

/* A walk gone astray: the first address that cannot be code (heap here)
 * and all beyond it become one marker frame, the stack's root, with no
 * module or file; with room for fewer frames, the marker is what goes. */
Test(symstack, broken_stack_cut_at_the_first_non_code)
{
	struct symbolizer *s = symbols_new();
	char *heap = malloc(1 << 20);
	cr_assert_not_null(heap);
	uint64_t ips[] = {ADDR(sstk_leaf), RET(sstk_caller), (uint64_t)(uintptr_t)(heap + 64),
			  RET(sstk_outer), RET(sstk_root)};
	struct sym_frame out[SYMSTACK_MAX(5)];
	struct symstack_info info;
	int n = resolve(s, ips, 5, NULL, 0, 0, out, SYMSTACK_MAX(5), &info);
	cr_assert_eq(n, 3, "frames: %s", names(out, n));
	cr_expect_str_eq(names(out, n), "sstk_leaf;sstk_caller;[broken stack: heap]");
	cr_expect_eq(out[2].kind, FRAME_UNKNOWN);
	cr_expect_str_empty(out[2].module);
	cr_expect_str_empty(out[2].file);
	cr_expect_eq(out[0].kind, FRAME_USER);
	cr_expect_gt(out[1].line, 0, "a frame of this file has its line");
	cr_expect_str_eq(info.broken, "[broken stack: heap]");
	cr_expect_eq(info.broken_addresses, 3);
	cr_expect_not(info.leaf_in_uprobes);
	cr_expect_eq(info.returns_restored, 0);
	n = resolve(s, ips, 5, NULL, 0, 0, out, 2, &info);
	cr_expect_str_eq(names(out, n), "sstk_leaf;sstk_caller");
	/* the first return address already astray: only the leaf is kept */
	uint64_t first[] = {ADDR(sstk_leaf), (uint64_t)(uintptr_t)heap, RET(sstk_caller)};
	n = resolve(s, first, 3, NULL, 0, 0, out, SYMSTACK_MAX(3), &info);
	cr_expect_str_eq(names(out, n), "sstk_leaf;[broken stack: heap]");
	cr_expect_eq(info.broken_addresses, 2);
	/* the heap address as the leaf is not a return address: no cut */
	uint64_t leaf_heap[] = {(uint64_t)(uintptr_t)heap, RET(sstk_caller)};
	n = resolve(s, leaf_heap, 2, NULL, 0, 0, out, SYMSTACK_MAX(2), &info);
	cr_expect_null(info.broken);
	cr_expect_eq(n, 2);
	/* no addresses, no frames, info cleared */
	cr_expect_eq(resolve(s, ips, 0, NULL, 0, 0, out, SYMSTACK_MAX(5), &info), 0);
	cr_expect(!info.leaf_in_uprobes && !info.broken && info.returns_restored == 0 &&
		  info.broken_addresses == 0);
	free(heap);
	symbols_free(s);
}

/* The address of a kernel symbol, from /proc/kallsyms; 0 when not there. */
static uint64_t kallsyms_addr(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	char line[512], sym[256], t;
	uint64_t a, found = 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &t, sym) == 3 && strcmp(sym, name) == 0)
			found = a;
	fclose(f);
	return found;
}

/* Kernel frames named as kallsyms names them; a stack through
 * uprobe_notify_resume is the uprobe machinery, one of schedule and
 * do_sys_openat2 is not. */
Test(symstack, kernel_stack_and_uprobe_machinery)
{
	uint64_t up = kallsyms_addr("uprobe_notify_resume"), sched = kallsyms_addr("schedule"),
		 open2 = kallsyms_addr("do_sys_openat2");
	if (!up || !sched || !open2)
		cr_skip_test("/proc/kallsyms hides the addresses or lacks the functions");
	struct symbolizer *s = symbols_new();
	uint64_t plain[] = {sched + 4, open2 + 8};
	struct sym_frame out[3];
	cr_expect_not(symstack_kernel(s, plain, 2, out));
	cr_expect_str_eq(out[0].name, "schedule");
	cr_expect_str_eq(out[1].name, "do_sys_openat2");
	cr_expect_eq(out[0].kind, FRAME_KERNEL);
	uint64_t probe[] = {sched + 4, up + 8, open2 + 8};
	cr_expect(symstack_kernel(s, probe, 3, out));
	cr_expect_str_eq(out[1].name, "uprobe_notify_resume");
	symbols_free(s);
}
