// SPDX-License-Identifier: GPL-2.0
/* common.bpf.c — the one definition of each map and global that several
 * program files share (declared extern in common.bpf.h, where the maps'
 * shapes are). */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

sonde_events_map events SEC(".maps");
sonde_targets_map targets SEC(".maps");
sonde_counters_map counters SEC(".maps");
sonde_threads_map threads SEC(".maps");
sonde_unwind_procs_map unwind_procs SEC(".maps");
sonde_unwind_requests_map unwind_requests SEC(".maps");
sonde_unwind_rows_map unwind_rows SEC(".maps");
sonde_unwind_mappings_map unwind_mappings SEC(".maps");

const volatile __u32 filter_mode = SONDE_FILTER_ALL;
const volatile __u32 unwind_mode = SONDE_UNWIND_AUTO;
__u64 miss_wakeup_ns = 0;
__u64 next_span_id = 0;
struct sonde_calibration calib = {};

/* Waking the reader for every record costs the thread that made it: for a
 * span record microseconds per call, for a sample about 20 us more of the
 * call it landed in (measured: sampled calls grew by 43 us with a wake-up
 * per sample, 20 us without). So samples and span records wake the reader
 * only once this much is waiting (it also drains on its poll timeout, at
 * least every 100 ms, so records are never stuck). Process events force a
 * wake-up: user space must read a new process's maps while it still lives.
 * (The default flag would not do: it wakes the reader only when it has
 * consumed everything before, which unread records prevent.) */
const volatile __u64 wakeup_bytes = 1u << 20;
