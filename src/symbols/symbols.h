/* symbols — turns addresses into frames: user addresses of live (or since
 * exited) processes, and kernel addresses.
 *
 * User side: /proc/PID/maps gives the mapping of an address to a file and a
 * file offset; the file's PT_LOAD headers turn that into an ELF virtual
 * address; ELF .symtab/.dynsym give the function and DWARF (libdw) the source
 * line and the chain of inlined calls. Separate debug info is found by
 * build-id (/usr/lib/debug/.build-id/xx/rest.debug) and .gnu_debuglink.
 * Kernel side: /proc/kallsyms.
 *
 * Caching: each binary is opened and parsed once, keyed by (device, inode),
 * and kept for the symbolizer's lifetime; files are opened through
 * /proc/PID/map_files or /proc/PID/root so deleted files and containers work.
 * A process's maps are read on first use and kept after it exits, so samples
 * of processes that went away are still symbolized; symbols_note_exec()
 * drops them (the address space was replaced, unless they were read after
 * that) and a lookup that misses every
 * mapping re-reads /proc/PID/maps once (new mmap, dlopen).
 *
 * Which function holds an address: the DWARF subprogram (or inlined
 * instance) whose ranges hold it; else the ELF symbol covering it, where a
 * symbol covers [value, value + size) and nothing past its end; past the
 * end, the function whose .eh_frame FDE holds the address (every function
 * the compiler emitted has one, named or not), named by the symbol that
 * starts where the FDE starts if there is one, else "[module+0xSTART]"
 * with START the file offset of the function's start (kind FRAME_UNKNOWN,
 * unnamed_function set): one frame per unnamed function, whatever address
 * in it was sampled. A sizeless symbol (assembly) reaches as far as the
 * next symbol, as in addr2line, unless an FDE holding the address begins
 * after it. Inside symbols the answers are addr2line's.
 *
 * JIT code: an address in anonymous executable memory (or, once the
 * process's perf map was found, in none of the mappings last read: the
 * process exited, or mapped it since) is
 * looked up in the process's perf map, /tmp/perf-PID.map (see perfmap.h),
 * read incrementally while the process runs and kept after it exits: a
 * frame of kind FRAME_JIT, module "/tmp/perf-PID.map", named as the map
 * names it. An address the map does not name stays "[unknown]". A return
 * address is looked up as addr - 1, as in a binary.
 *
 * Nothing here ever crashes on bad input: an address that cannot be resolved
 * yields one frame of kind FRAME_UNKNOWN named "[module+0xoffset]" (or
 * "[unknown]" when no mapping covers it). All returned strings are owned by
 * the symbolizer and live until symbols_free(). Not thread-safe. */
#ifndef SONDE_SYMBOLS_H
#define SONDE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symframe.h"

#define SYM_MAX_INLINE 16 /* frames one address can expand to, at most */

struct symbolizer;

struct symbolizer *symbols_new(void);
void symbols_free(struct symbolizer *s);

/* Resolves a user address of process `pid`. `is_return` says the address is
 * a return address (every stack frame but the leaf): the lookup then uses
 * addr - 1 so the line is the call's, not the next statement's. Fills up to
 * `max` frames innermost first and returns how many (always >= 1 when
 * max >= 1). A longer inline chain keeps its innermost max - 1 frames and
 * the out-of-line function as the last. */
int symbols_user(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_return,
		 struct sym_frame *out, int max);

/* Resolves a kernel address through /proc/kallsyms (loaded on first use).
 * Always fills exactly one frame of kind FRAME_KERNEL (or FRAME_UNKNOWN). */
void symbols_kernel(struct symbolizer *s, uint64_t addr, struct sym_frame *out);

/* Stack walks by frame pointer go astray in code built without them: a
 * return address read from a frame that is not one points anywhere. This
 * says whether a return address of process `pid` can be code: NULL when it
 * is in an executable mapping (or the process's maps are unknown), else
 * where it points, as the marker frame's name a broken stack ends with:
 *   "[broken stack: heap]"     [heap] or anonymous memory that is not code
 *   "[broken stack: stack]"    a thread's stack
 *   "[broken stack: data]"     a file's data (.data, .rodata, .bss) or any
 *                              other mapping that is not executable
 *   "[broken stack: uprobes]"  the kernel's uprobe trampoline page
 *   "[broken stack: unmapped]" no mapping at all (nor JIT code its perf
 *                              map names)
 * A miss re-reads the maps as symbols_user() does. */
const char *symbols_user_not_code(struct symbolizer *s, pid_t pid, uint64_t addr);

/* Reads /proc/PID/maps now (call this while the process is surely alive,
 * e.g. when profiling starts or a new process is seen). Returns 0, or -1
 * when the process is gone or unreadable. */
int symbols_note_process(struct symbolizer *s, pid_t pid);

/* The process replaced its address space at exec_ns (CLOCK_MONOTONIC): forget
 * its maps (re-read lazily), unless they were read after exec_ns and so are
 * already the new image's (an exec reported late, after the process exited,
 * must not take away the only maps there will be). */
void symbols_note_exec(struct symbolizer *s, pid_t pid, uint64_t exec_ns);

/* Resolves an ELF virtual address in a binary given by path (the addr2line
 * use case, used by tests, benchmarks and `sonde symbolize`). Same output
 * contract as symbols_user(); `is_return` as there. Returns the number of
 * frames, or -1 when the file cannot be opened as ELF. */
int symbols_file(struct symbolizer *s, const char *path, uint64_t vaddr, bool is_return,
		 struct sym_frame *out, int max);

/* The namer of its processes' Python frames (pysyms.h): the session adds
 * the Python processes it finds. */
struct pysyms *symbols_python(struct symbolizer *s);

/* Counters, for reports and benchmarks. */
struct symbols_stats {
	uint64_t binaries_opened; /* distinct binaries parsed */
	uint64_t lookups;         /* user + kernel lookups */
	uint64_t unresolved;      /* lookups that produced FRAME_UNKNOWN */
	uint64_t maps_reads;      /* /proc/PID/maps reads */
	uint64_t jit_frames;      /* frames named from a perf map (FRAME_JIT) */
	/* perf maps read: good lines, lines that were not "START SIZE NAME",
	 * bytes past PERFMAP_MAX_BYTES */
	uint64_t jit_map_lines, jit_map_bad_lines, jit_map_skipped_bytes;
};
void symbols_get_stats(const struct symbolizer *s, struct symbols_stats *out);

#endif
