/* Fuzzes the protobuf wire reader: walk any bytes as nested messages. */
#include <stdint.h>

#include "pb.h"

static void walk(struct pb_reader *r, int depth)
{
	uint32_t field;
	enum pb_wire wire;
	while (!pb_reader_done(r)) {
		if (pb_read_tag(r, &field, &wire))
			return;
		if (wire == PB_LEN && depth < 8) {
			struct pb_reader sub;
			if (pb_read_len(r, &sub))
				return;
			walk(&sub, depth + 1);
		} else if (pb_skip(r, wire)) {
			return;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pb_reader r;
	pb_reader_init(&r, data, size);
	walk(&r, 0);
	return 0;
}
