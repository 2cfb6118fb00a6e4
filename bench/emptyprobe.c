/* emptyprobe — the floor of a uprobe: an empty BPF program (r0 = 0; exit)
 * attached at a file offset of a binary, for every process (as sonde
 * attaches: pid -1), while a command runs. What a probe costs beyond this is
 * the program's own work: bench/line_cost.sh compares sonde's line probe
 * with it on the same address (bpftrace 0.17 cannot probe an address inside
 * a function), bench/trace_cost.sh sonde's span probes with the same pair
 * of entry and return probes on the same kind of link as sonde's.
 *
 * usage: emptyprobe [--return] [--multi] BINARY FILE_OFFSET -- CMD [ARGS...]
 *   --return  also a return probe at the offset (a function's entry)
 *   --multi   uprobe_multi links (Linux 6.6+; sonde's links on 6.11+)
 *             instead of one perf-event link a uprobe
 * Exits with CMD's status. */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The PMU type of uprobes and the config bit of a return probe. */
static int uprobe_pmu(int *type, int *retprobe_bit)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	bool ok = f && fscanf(f, "%d", type) == 1;
	if (f)
		fclose(f);
	f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "r");
	ok = ok && f && fscanf(f, "config:%d", retprobe_bit) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static int perf_link(int prog, const char *binary, uint64_t offset, bool ret)
{
	int type, bit;
	if (uprobe_pmu(&type, &bit))
		return -1;
	struct perf_event_attr attr = {.size = sizeof(attr), .type = (unsigned)type};
	attr.config = ret ? 1ull << bit : 0;
	attr.config1 = (unsigned long)binary; /* uprobe_path */
	attr.config2 = offset;                /* probe_offset */
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		return -1;
	return fd;
}

/* BPF_LINK_CREATE's uprobe_multi attributes (uapi linux/bpf.h of Linux
 * 6.6; Debian 12's headers and libbpf 1.1 predate them). */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};
#define ATTACH_UPROBE_MULTI 48 /* BPF_TRACE_UPROBE_MULTI */

static int multi_link(int prog, const char *binary, uint64_t offset, bool ret)
{
	struct uprobe_multi_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog;
	a.attach_type = ATTACH_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)binary;
	a.offsets = (uint64_t)(uintptr_t)&offset;
	a.cnt = 1;
	a.multi_flags = ret ? 1 : 0; /* BPF_F_UPROBE_MULTI_RETURN */
	return (int)syscall(SYS_bpf, 28 /* BPF_LINK_CREATE */, &a, sizeof(a));
}

int main(int argc, char **argv)
{
	bool ret = false, multi = false;
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2]; i++) {
		if (strcmp(argv[i], "--return") == 0)
			ret = true;
		else if (strcmp(argv[i], "--multi") == 0)
			multi = true;
		else
			break;
	}
	if (argc - i < 4 || strcmp(argv[i + 2], "--") != 0) {
		fprintf(stderr, "usage: emptyprobe [--return] [--multi] BINARY FILE_OFFSET -- CMD [ARGS...]\n");
		return 2;
	}
	const char *binary = argv[i];
	uint64_t offset = strtoull(argv[i + 1], NULL, 0);
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	if (multi)
		opts.expected_attach_type = (enum bpf_attach_type)ATTACH_UPROBE_MULTI;
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "empty", "GPL", insns, 2, &opts);
	if (prog < 0) {
		perror("emptyprobe: loading the empty program");
		return 1;
	}
	for (int r = 0; r <= (ret ? 1 : 0); r++) {
		int fd = multi ? multi_link(prog, binary, offset, r) : perf_link(prog, binary, offset, r);
		if (fd < 0) {
			perror(multi ? "emptyprobe: uprobe_multi link" : "emptyprobe: uprobe");
			return 1;
		}
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[i + 3], argv + i + 3);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
