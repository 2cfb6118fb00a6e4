/* verifier — how much work the kernel's verifier does for each of sonde's
 * BPF programs: loads an object (build/bpf/sonde.bpf.o) with the verifier's
 * statistics on and prints, per program, the instructions it processed (its
 * limit is 1,000,000 per program), its peak states and its verification
 * time. Verification is most of sonde's start-up: every `sonde record`,
 * `lat`, `top` and `serve` pays it before the first sample.
 *
 * usage: verifier OBJECT [MAX_INSNS]
 *   exits 1 when a program does not load, or processed more than
 *   MAX_INSNS instructions (tests/integration/bpf_verifier.sh). */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROGS 64
#define LOG_BYTES (64 << 10)

/* The number after `key` in the verifier's statistics line, or -1. */
static long stat_of(const char *log, const char *key)
{
	const char *p = strstr(log, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: verifier OBJECT [MAX_INSNS]\n");
		return 2;
	}
	long max = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	struct bpf_object *obj = bpf_object__open(argv[1]);
	if (!obj) {
		fprintf(stderr, "verifier: cannot open %s\n", argv[1]);
		return 2;
	}
	static char logs[MAX_PROGS][LOG_BYTES];
	struct bpf_program *prog;
	int n = 0;
	bpf_object__for_each_program(prog, obj) {
		if (n == MAX_PROGS)
			break;
		/* 4: statistics only (BPF_LOG_STATS), not the instruction trace. */
		bpf_program__set_log_level(prog, 4);
		bpf_program__set_log_buf(prog, logs[n++], LOG_BYTES);
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "verifier: %s does not load (run as root, on a kernel with BPF)\n", argv[1]);
		return 1;
	}
	int over = 0;
	long total = 0, total_us = 0;
	printf("%-20s %10s %8s %10s\n", "program", "insns", "states", "verify_us");
	n = 0;
	bpf_object__for_each_program(prog, obj) {
		const char *log = logs[n++];
		long insns = stat_of(log, "processed "), states = stat_of(log, "total_states ");
		long us = stat_of(log, "verification time ");
		printf("%-20s %10ld %8ld %10ld\n", bpf_program__name(prog), insns, states, us);
		total += insns > 0 ? insns : 0;
		total_us += us > 0 ? us : 0;
		if (max && insns > max) {
			fprintf(stderr, "verifier: %s processed %ld instructions, over %ld\n",
				bpf_program__name(prog), insns, max);
			over = 1;
		}
	}
	printf("%-20s %10ld %8s %10ld\n", "total", total, "", total_us);
	bpf_object__close(obj);
	return over;
}
