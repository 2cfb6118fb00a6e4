/* emptyprobe — the floor of a uprobe: an empty BPF program (r0 = 0; exit)
 * attached as a uprobe at a file offset of a binary, for every process,
 * while a command runs. What a probe costs beyond this is the program's own
 * work (bench/line_cost.sh compares sonde's line probe with it on the same
 * address: bpftrace 0.17 cannot probe an address inside a function).
 *
 * usage: emptyprobe BINARY FILE_OFFSET -- CMD [ARGS...]
 * Exits with CMD's status. */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int uprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int t = -1;
	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: emptyprobe BINARY FILE_OFFSET -- CMD [ARGS...]\n");
		return 2;
	}
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "empty", "GPL", insns, 2, NULL);
	int type = uprobe_pmu_type();
	if (prog < 0 || type < 0) {
		fprintf(stderr, "emptyprobe: cannot load the program or find the uprobe PMU\n");
		return 1;
	}
	struct perf_event_attr attr = {.size = sizeof(attr), .type = (unsigned)type};
	attr.config1 = (unsigned long)argv[1];              /* uprobe_path */
	attr.config2 = strtoull(argv[2], NULL, 0);          /* probe_offset */
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("emptyprobe: uprobe");
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	close(fd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
