/* nflxproto — what the nflxprofile reader, writer and detector share: the
 * Profile and Node messages' field numbers, the prefix of sonde's metadata
 * params, and the key of a pair of 32-bit ids in a hashmap. Nothing outside
 * nflx*.c includes it. */
#ifndef SONDE_NFLXPROTO_H
#define SONDE_NFLXPROTO_H

#include <stdint.h>

/* Profile fields. */
enum {
	P_START_TIME = 1,
	P_END_TIME = 2,
	P_SAMPLES = 3,
	P_TIME_DELTAS = 4,
	P_NODES = 5,
	P_TITLE = 6,
	P_DESCRIPTION = 7,
	P_PARAMS = 8,
	P_SAMPLES_CPU = 9,
	P_SAMPLES_PID = 10,
	P_SAMPLES_TID = 11,
	P_SAMPLES_VALUE = 12,
	P_IDLE_SAMPLE_COUNT = 13,
};

/* Node fields. */
enum {
	N_FUNCTION_NAME = 1,
	N_HIT_COUNT = 2,
	N_CHILDREN = 3,
	N_LIBTYPE = 4,
	N_PARENT = 5,
	N_PID = 6,
	N_TID = 7,
	N_CPU = 8,
	N_VALUE = 9,
	N_STACK = 10,
	N_FILE = 11,
};

#define PARAM_PREFIX "sonde."

static inline uint64_t pair_key(uint32_t a, uint32_t b)
{
	return (uint64_t)a << 32 | b;
}

#endif
