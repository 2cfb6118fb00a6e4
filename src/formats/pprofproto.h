/* pprofproto — what the pprof reader and writer share of profile.proto:
 * the Profile message's field numbers and the mapping name kernel frames go
 * under. Nothing outside pprof*.c includes it. */
#ifndef SONDE_PPROFPROTO_H
#define SONDE_PPROFPROTO_H

/* profile.proto field numbers. */
enum {
	P_SAMPLE_TYPE = 1,
	P_SAMPLE = 2,
	P_MAPPING = 3,
	P_LOCATION = 4,
	P_FUNCTION = 5,
	P_STRING_TABLE = 6,
	P_DROP_FRAMES = 7,
	P_KEEP_FRAMES = 8,
	P_TIME_NANOS = 9,
	P_DURATION_NANOS = 10,
	P_PERIOD_TYPE = 11,
	P_PERIOD = 12,
	P_COMMENT = 13,
	P_DEFAULT_SAMPLE_TYPE = 14,
	P_DOC_URL = 15,
};

#define KERNEL_MAPPING "[kernel.kallsyms]"

#endif
