/* pprof — which bytes are a pprof profile (pprof_detect, pprof_detect_head)
 * and the formats registry's entry; the reading and the writing are
 * pprof_read.c and pprof_write.c. */
#include "pprof.h"

#include "pb.h"
#include "pprofproto.h"
#include "registry.h"

/* With `head`, data is the start of a longer input: a field running past
 * its end ends the check, and no required field is required yet. */
static bool detect(const uint8_t *data, size_t len, bool head)
{
	if (head && !len)
		return false;
	struct pb_reader r;
	pb_reader_init(&r, data, len);
	size_t nstrs = 0;
	bool first_empty = false, types = false;
	while (!pb_reader_done(&r)) {
		uint32_t f;
		enum pb_wire wire;
		if (pb_read_tag(&r, &f, &wire))
			return head && r.cut;
		if (f > P_DOC_URL)
			return false;
		bool ok;
		switch (f) {
		case P_SAMPLE_TYPE:
		case P_SAMPLE:
		case P_MAPPING:
		case P_LOCATION:
		case P_FUNCTION:
		case P_STRING_TABLE:
		case P_PERIOD_TYPE:
			ok = wire == PB_LEN;
			break;
		case P_COMMENT:
			ok = wire == PB_VARINT || wire == PB_LEN;
			break;
		default:
			ok = wire == PB_VARINT;
			break;
		}
		if (!ok)
			return false;
		if (f == P_STRING_TABLE) {
			struct pb_reader s;
			if (pb_read_len(&r, &s))
				return head && r.cut;
			if (nstrs++ == 0)
				first_empty = pb_reader_done(&s);
			if (!first_empty)
				return false; /* string 0 is always "" */
			continue;
		}
		types |= f == P_SAMPLE_TYPE;
		if (pb_skip(&r, wire))
			return head && r.cut;
	}
	return head || (nstrs > 0 && first_empty && types);
}

bool pprof_detect(const uint8_t *data, size_t len)
{
	return detect(data, len, false);
}

bool pprof_detect_head(const uint8_t *data, size_t len)
{
	return detect(data, len, true);
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

static int write_pprof(FILE *f, struct profile *p, const struct format_write_options *o)
{
	(void)o;
	return pprof_write(f, p, NULL);
}

const struct format_entry format_pprof = {
	.name = "pprof",
	.suffixes = (const char *const[]){".pb.gz", ".pprof", ".pb", NULL},
	.what = "pprof",
	.about = "gzipped or raw protobuf",
	.detect_whole = pprof_detect,
	.detect_head = pprof_detect_head,
	.read_whole = pprof_read,
	.write = write_pprof,
};
