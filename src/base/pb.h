/* pb — the protocol-buffer wire format, by hand: enough to write and read
 * pprof's profile.proto and nflxprofile without generated code.
 *
 * Writing: a growable byte buffer; nested messages are written into their
 * own buffer and appended as length-delimited fields.
 * Reading: a cursor over a byte range that never reads past its end; every
 * read returns -1 on truncated or malformed input (and the cursor is then
 * unusable), so hostile files cannot crash a parser built on it. The
 * cursor's `cut` tells truncated from malformed: detection on the first
 * bytes of a file accepts a field that runs past them. */
#ifndef SONDE_PB_H
#define SONDE_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

struct pb_buf {
	uint8_t *data;
	size_t len, cap;
};

void pb_buf_free(struct pb_buf *b);
void pb_put_varint(struct pb_buf *b, uint64_t v);
void pb_put_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire);
void pb_put_uint(struct pb_buf *b, uint32_t field, uint64_t v); /* varint field */
void pb_put_double(struct pb_buf *b, uint32_t field, double v);
void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n);
void pb_put_string(struct pb_buf *b, uint32_t field, const char *s);
void pb_put_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg);
/* Packed repeated fields. */
void pb_put_packed_uint(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
void pb_put_packed_double(struct pb_buf *b, uint32_t field, const double *v, size_t n);

struct pb_reader {
	const uint8_t *p, *end;
	bool cut; /* a read failed because the bytes ended (not malformed ones) */
};

void pb_reader_init(struct pb_reader *r, const void *data, size_t len);
bool pb_reader_done(const struct pb_reader *r);
/* Reads the next field's tag. Returns 0, or -1 when malformed/truncated. */
int pb_read_tag(struct pb_reader *r, uint32_t *field, enum pb_wire *wire);
int pb_read_varint(struct pb_reader *r, uint64_t *v);
int pb_read_double(struct pb_reader *r, double *v);   /* wire type I64 */
/* A length-delimited field: *sub covers its bytes (no copy). */
int pb_read_len(struct pb_reader *r, struct pb_reader *sub);
/* Skips a field of the given wire type. */
int pb_skip(struct pb_reader *r, enum pb_wire wire);

/* A repeated varint field may be packed (LEN) or not (VARINT): reads one
 * field's values either way, calling fn for each; returns 0 or -1. */
int pb_read_uints(struct pb_reader *r, enum pb_wire wire, int (*fn)(void *arg, uint64_t v),
		  void *arg);

#endif
