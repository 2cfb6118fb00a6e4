#include "drops.h"

#include <stdio.h>

#include "sonde_abi.h"

struct row {
	const char *key;
	enum drops_group group;
	bool live;
	const char *phrase;
};

static const struct row rows[SONDE_CNT_NUM] = {
#define DROPS_ROW(name, key, group, drop, phrase)                                           \
	[SONDE_CNT_##name] = {key, DROPS_##group, drop, phrase},
	SONDE_COUNTERS(DROPS_ROW)
#undef DROPS_ROW
};

const char *drops_key(int k)
{
	return k >= 0 && k < SONDE_CNT_NUM ? rows[k].key : "";
}

uint64_t drops_sum(const struct engine_stats *es, enum drops_group g, bool live_only)
{
	uint64_t sum = 0;
	for (int k = 0; k < SONDE_CNT_NUM; k++)
		if ((g == DROPS_ANY || rows[k].group == g) && (!live_only || rows[k].live))
			sum += es->count[k];
	return sum;
}

const char *drops_list(const struct engine_stats *es, enum drops_group g, char *buf, size_t size)
{
	size_t off = 0;
	if (size)
		buf[0] = '\0';
	for (int k = 0; k < SONDE_CNT_NUM; k++) {
		if (rows[k].group != g && g != DROPS_ANY)
			continue;
		int n = snprintf(buf + off, size - off, "%s%llu %s", off ? ", " : "",
				 (unsigned long long)es->count[k], rows[k].phrase);
		if (n < 0 || (size_t)n >= size - off)
			break; /* cut: the buffer ends the list */
		off += (size_t)n;
	}
	return buf;
}
