/* nflx — which bytes are an nflxprofile (nflx_detect, nflx_detect_head)
 * and the formats registry's entry; the reading and the writing are
 * nflx_read.c and nflx_write.c. */
#include "nflx.h"

#include "nflxproto.h"
#include "pb.h"
#include "registry.h"

/* Does a message parse as a Node (known fields with their wire types, a
 * function_name)? */
static bool node_plausible(struct pb_reader *m)
{
	uint32_t field;
	enum pb_wire wire;
	bool name = false;
	while (!pb_reader_done(m)) {
		if (pb_read_tag(m, &field, &wire))
			return false;
		switch (field) {
		case N_FUNCTION_NAME:
			name = true;
			/* fallthrough */
		case N_LIBTYPE:
		case N_STACK:
		case N_FILE:
			if (wire != PB_LEN)
				return false;
			break;
		case N_CHILDREN:
			if (wire != PB_LEN && wire != PB_VARINT)
				return false;
			break;
		case N_HIT_COUNT:
		case N_PARENT:
		case N_PID:
		case N_TID:
		case N_CPU:
		case N_VALUE:
			if (wire != PB_VARINT)
				return false;
			break;
		default:
			return false;
		}
		if (pb_skip(m, wire))
			return false;
	}
	return name;
}

static bool node_entry_plausible(struct pb_reader *e)
{
	uint32_t field;
	enum pb_wire wire;
	bool value = false;
	while (!pb_reader_done(e)) {
		if (pb_read_tag(e, &field, &wire))
			return false;
		if (field == 1 && wire == PB_VARINT) {
			if (pb_skip(e, wire))
				return false;
		} else if (field == 2 && wire == PB_LEN) {
			struct pb_reader v;
			if (pb_read_len(e, &v) || !node_plausible(&v))
				return false;
			value = true;
		} else {
			return false;
		}
	}
	return value;
}

/* With `head`, data is the start of a longer input: a field running past
 * its end ends the check, and no required field is required yet. */
static bool detect(const uint8_t *data, size_t len, bool head)
{
	if (!data || !len)
		return false;
	struct pb_reader r;
	pb_reader_init(&r, data, len);
	uint32_t field;
	enum pb_wire wire;
	bool start = false, node = false;
	while (!pb_reader_done(&r)) {
		if (pb_read_tag(&r, &field, &wire))
			return head && r.cut;
		bool ok;
		switch (field) {
		case P_START_TIME:
		case P_END_TIME:
			ok = wire == PB_I64;
			start |= field == P_START_TIME;
			break;
		case P_TIME_DELTAS:
			ok = wire == PB_I64 || wire == PB_LEN;
			break;
		case P_SAMPLES:
		case P_SAMPLES_CPU:
		case P_SAMPLES_PID:
		case P_SAMPLES_TID:
		case P_SAMPLES_VALUE:
			ok = wire == PB_VARINT || wire == PB_LEN;
			break;
		case P_NODES:
			if (wire != PB_LEN)
				return false;
			if (!node) { /* the first entry must be a Node */
				struct pb_reader e;
				if (pb_read_len(&r, &e))
					return head && r.cut;
				if (!node_entry_plausible(&e))
					return false;
				node = true;
				continue;
			}
			ok = true;
			break;
		case P_TITLE:
		case P_DESCRIPTION:
		case P_PARAMS:
			ok = wire == PB_LEN;
			break;
		case P_IDLE_SAMPLE_COUNT:
			ok = wire == PB_VARINT;
			break;
		default:
			ok = false;
			break;
		}
		if (!ok)
			return false;
		if (pb_skip(&r, wire))
			return head && r.cut;
	}
	return head || (start && node);
}

bool nflx_detect(const uint8_t *data, size_t len)
{
	return detect(data, len, false);
}

bool nflx_detect_head(const uint8_t *data, size_t len)
{
	return detect(data, len, true);
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

static int write_nflx(FILE *f, struct profile *p, const struct format_write_options *o)
{
	(void)o;
	return nflx_write(f, p);
}

const struct format_entry format_nflx = {
	.name = "nflx",
	.aliases = (const char *const[]){"nflxprofile", NULL},
	.suffixes = (const char *const[]){".nflx", ".nflxprofile", NULL},
	.what = "nflxprofile",
	.detect_whole = nflx_detect,
	.detect_head = nflx_detect_head,
	.read_whole = nflx_read,
	.write = write_nflx,
};
