/* traced.h — lets a test target wait until sonde has attached to it: a
 * uprobe on a function replaces its first instruction with the breakpoint
 * the kernel uses for uprobes, in the memory of every process it applies to,
 * and the process can read its own code. No sleep, no race on a busy
 * machine. The function waited for is a marker the test traces after the
 * ones it counts: its breakpoint appears when its return probe is attached,
 * before its entry probe, but sonde attaches probes one after the other, so
 * by then every earlier probe is complete. */
#ifndef TRACED_H
#define TRACED_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Is there a uprobe on the function at `fn` in this process? */
static inline bool function_traced(const void *fn)
{
#if defined(__x86_64__) || defined(__i386__)
	return *(const volatile uint8_t *)fn == 0xcc; /* int3 */
#elif defined(__aarch64__)
	uint32_t insn;
	memcpy(&insn, (const void *)fn, sizeof(insn));
	return insn == 0xd42000a0u; /* BRK #0x5, the uprobe breakpoint */
#else
#error "no uprobe breakpoint known for this architecture"
#endif
}

/* Waits until `fn` is traced, or `go_file` (if not NULL) exists. Returns
 * whether it is traced. */
static inline bool wait_traced(const void *fn, const char *go_file)
{
	struct stat st;
	const struct timespec ms = {0, 1000000};
	while (!function_traced(fn) && !(go_file && stat(go_file, &st) == 0))
		nanosleep(&ms, NULL);
	return function_traced(fn);
}

#endif
