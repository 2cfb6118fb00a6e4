#include "pb.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void pb_buf_free(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static void put_bytes(struct pb_buf *b, const void *p, size_t n)
{
	grow_array((void **)&b->data, &b->cap, b->len + n, 1);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pb_put_varint(struct pb_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		tmp[n++] = byte | (v ? 0x80 : 0);
	} while (v);
	put_bytes(b, tmp, n);
}

void pb_put_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
	pb_put_varint(b, ((uint64_t)field << 3) | wire);
}

void pb_put_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	pb_put_tag(b, field, PB_VARINT);
	pb_put_varint(b, v);
}

void pb_put_double(struct pb_buf *b, uint32_t field, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, 8);
	uint8_t le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(bits >> (8 * i));
	pb_put_tag(b, field, PB_I64);
	put_bytes(b, le, 8);
}

void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *p, size_t n)
{
	pb_put_tag(b, field, PB_LEN);
	pb_put_varint(b, n);
	put_bytes(b, p, n);
}

void pb_put_string(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_put_bytes(b, field, s, strlen(s));
}

void pb_put_message(struct pb_buf *b, uint32_t field, const struct pb_buf *msg)
{
	pb_put_bytes(b, field, msg->data ? msg->data : (const uint8_t *)"", msg->len);
}

void pb_put_packed_uint(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	struct pb_buf tmp = {0};
	for (size_t i = 0; i < n; i++)
		pb_put_varint(&tmp, v[i]);
	pb_put_message(b, field, &tmp);
	pb_buf_free(&tmp);
}

void pb_put_packed_double(struct pb_buf *b, uint32_t field, const double *v, size_t n)
{
	struct pb_buf tmp = {0};
	for (size_t i = 0; i < n; i++) {
		uint64_t bits;
		memcpy(&bits, &v[i], 8);
		uint8_t le[8];
		for (int k = 0; k < 8; k++)
			le[k] = (uint8_t)(bits >> (8 * k));
		put_bytes(&tmp, le, 8);
	}
	pb_put_message(b, field, &tmp);
	pb_buf_free(&tmp);
}

void pb_reader_init(struct pb_reader *r, const void *data, size_t len)
{
	static const uint8_t empty[1];
	r->p = data ? data : empty; /* NULL + 0 is undefined behaviour */
	r->end = r->p + (data ? len : 0);
	r->cut = false;
}

bool pb_reader_done(const struct pb_reader *r)
{
	return r->p >= r->end;
}

int pb_read_varint(struct pb_reader *r, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		if (r->p >= r->end) {
			r->cut = true;
			return -1;
		}
		uint8_t byte = *r->p++;
		if (shift == 63 && byte > 1)
			return -1; /* more than 64 bits */
		x |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

int pb_read_tag(struct pb_reader *r, uint32_t *field, enum pb_wire *wire)
{
	uint64_t t;
	if (pb_read_varint(r, &t) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff)
		return -1;
	uint32_t w = t & 7;
	if (w != PB_VARINT && w != PB_I64 && w != PB_LEN && w != PB_I32)
		return -1;
	*field = (uint32_t)(t >> 3);
	*wire = (enum pb_wire)w;
	return 0;
}

int pb_read_double(struct pb_reader *r, double *v)
{
	if (r->end - r->p < 8) {
		r->cut = true;
		return -1;
	}
	uint64_t bits = 0;
	for (int i = 0; i < 8; i++)
		bits |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	memcpy(v, &bits, 8);
	return 0;
}

int pb_read_len(struct pb_reader *r, struct pb_reader *sub)
{
	uint64_t n;
	if (pb_read_varint(r, &n))
		return -1;
	if (n > (uint64_t)(r->end - r->p)) {
		r->cut = true;
		return -1;
	}
	sub->p = r->p;
	sub->end = r->p + n;
	sub->cut = false;
	r->p += n;
	return 0;
}

int pb_skip(struct pb_reader *r, enum pb_wire wire)
{
	uint64_t v;
	struct pb_reader sub;
	switch (wire) {
	case PB_VARINT:
		return pb_read_varint(r, &v);
	case PB_I64:
		return pb_read_double(r, &(double){0});
	case PB_I32:
		if (r->end - r->p < 4) {
			r->cut = true;
			return -1;
		}
		r->p += 4;
		return 0;
	case PB_LEN:
		return pb_read_len(r, &sub);
	}
	return -1;
}

int pb_read_uints(struct pb_reader *r, enum pb_wire wire, int (*fn)(void *arg, uint64_t v),
		  void *arg)
{
	uint64_t v;
	if (wire == PB_VARINT)
		return pb_read_varint(r, &v) ? -1 : fn(arg, v);
	if (wire != PB_LEN)
		return -1;
	struct pb_reader sub;
	if (pb_read_len(r, &sub))
		return -1;
	while (!pb_reader_done(&sub))
		if (pb_read_varint(&sub, &v) || fn(arg, v))
			return -1;
	return 0;
}
