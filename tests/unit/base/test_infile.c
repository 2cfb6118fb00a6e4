/* Unit tests for infile (inputs streamed: head, lines, whole reads, gunzip
 * on the fly) and for detection from a head: lines across every buffer
 * boundary, plain and gzipped, from memory and from files; the caps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "filebuf.h"
#include "infile.h"
#include "nflx.h"
#include "pb.h"
#include "pprof.h"

static uint8_t *gzip_of(const void *data, size_t len, size_t *out_len)
{
	z_stream z = {0};
	cr_assert_eq(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&z, len) + 64;
	uint8_t *out = malloc(cap);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Lines of lengths 0, 1, ... with contents that say their number, so that a
 * line cut or joined at a buffer boundary shows. 3 MB in all. */
static char *numbered_lines(size_t *len, size_t *nlines)
{
	size_t cap = 4 << 20, n = 0, k = 0;
	char *text = malloc(cap);
	while (n < (3u << 20)) {
		size_t width = (k * 7919) % 4000; /* lengths from 0 to 3999 */
		int head = snprintf(text + n, cap - n, "%zu:", k);
		n += (size_t)head;
		for (size_t i = (size_t)head; i < width; i++)
			text[n++] = (char)('a' + (k + i) % 26);
		text[n++] = '\n';
		k++;
	}
	*len = n;
	*nlines = k;
	return text;
}

static void check_lines(struct infile *in, const char *text, size_t nlines)
{
	const char *line, *pos = text;
	size_t n, k = 0;
	char err[256];
	int r;
	while ((r = infile_line(in, &line, &n, err, sizeof(err))) > 0) {
		const char *nl = strchr(pos, '\n');
		cr_assert_eq(n, (size_t)(nl - pos), "line %zu: length %zu", k, n);
		cr_assert_eq(memcmp(line, pos, n), 0, "line %zu differs", k);
		pos = nl + 1;
		k++;
		cr_assert_eq(in->lineno, k);
	}
	cr_assert_eq(r, 0, "%s", err);
	cr_assert_eq(k, nlines);
}

Test(infile, lines_from_memory_plain_and_gzip)
{
	size_t len, nlines;
	char *text = numbered_lines(&len, &nlines);
	struct infile in;
	infile_from_memory(&in, text, len);
	check_lines(&in, text, nlines);
	infile_close(&in);

	size_t gzlen;
	uint8_t *gz = gzip_of(text, len, &gzlen);
	infile_from_memory(&in, gz, gzlen);
	const uint8_t *head;
	size_t hlen;
	bool complete;
	char err[256];
	cr_assert_eq(infile_head(&in, &head, &hlen, &complete, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hlen, INFILE_HEAD);
	cr_assert_not(complete);
	cr_assert_eq(memcmp(head, text, hlen), 0, "the head is the gunzipped start");
	cr_assert(in.gzip);
	check_lines(&in, text, nlines); /* the head was peeked, not consumed */
	infile_close(&in);
	free(gz);
	free(text);
}

Test(infile, lines_from_a_file_and_a_pipe)
{
	size_t len, nlines;
	char *text = numbered_lines(&len, &nlines);
	char path[] = "/tmp/sonde-unit-infile-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	struct infile in;
	char err[256];
	cr_assert_eq(infile_open(&in, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.file_size, len);
	check_lines(&in, text, nlines);
	infile_close(&in);

	/* a pipe: no size known, reads come in pieces */
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t child = fork();
	if (child == 0) {
		close(p[0]);
		for (size_t off = 0; off < len;) {
			size_t n = len - off < 1000 ? len - off : 1000;
			ssize_t w = write(p[1], text + off, n);
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	int saved = dup(0);
	dup2(p[0], 0);
	close(p[0]);
	cr_assert_eq(infile_open(&in, "-", err, sizeof(err)), 0, "%s", err);
	check_lines(&in, text, nlines);
	infile_close(&in);
	dup2(saved, 0);
	close(saved);
	unlink(path);
	free(text);
}

Test(infile, last_line_crs_and_nuls)
{
	static const char text[] = "a\r\n\nb\0c\nlast";
	struct infile in;
	infile_from_memory(&in, text, sizeof(text) - 1);
	const char *line;
	size_t n;
	char err[256];
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 1);
	cr_assert_eq(n, 2);
	cr_assert_eq(memcmp(line, "a\r", 2), 0, "the \\r is the reader's");
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 1);
	cr_assert_eq(n, 0);
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 1);
	cr_assert_eq(n, 3);
	cr_assert_eq(memcmp(line, "b\0c", 3), 0);
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 1);
	cr_assert_eq(n, 4);
	cr_assert_eq(memcmp(line, "last", 4), 0);
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 0);
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 0);
	infile_close(&in);

	infile_from_memory(&in, "", 0);
	const uint8_t *head;
	bool complete;
	cr_assert_eq(infile_head(&in, &head, &n, &complete, err, sizeof(err)), 0);
	cr_assert_eq(n, 0);
	cr_assert(complete);
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), 0);
	infile_close(&in);
}

Test(infile, caps)
{
	/* a line over INFILE_MAX_LINE */
	size_t len = INFILE_MAX_LINE + 2;
	char *big = malloc(len);
	memset(big, 'x', len);
	struct infile in;
	infile_from_memory(&in, big, len);
	const char *line;
	size_t n;
	char err[256] = "";
	cr_assert_eq(infile_line(&in, &line, &n, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "line 1 is longer than 16 MiB: no text profile has such lines");
	infile_close(&in);

	/* a whole read over its cap, from memory and from a file's size */
	infile_from_memory(&in, big, len);
	uint8_t *data;
	cr_assert_eq(infile_read_all(&in, &(struct infile_limit){1 << 20, "pprof"},
				     &data, &n, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "larger than 1 MiB: sonde reads pprof files whole, up to that size");
	infile_close(&in);
	char path[] = "/tmp/sonde-unit-infile-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_eq(ftruncate(fd, (off_t)3 << 30), 0); /* sparse: 3 GiB of nothing */
	close(fd);
	cr_assert_eq(infile_open(&in, path, err, sizeof(err)), 0);
	cr_assert_eq(infile_read_all(&in, &(struct infile_limit){(size_t)1 << 30, "nflx"},
				     &data, &n, err, sizeof(err)),
		     -1);
	cr_assert(strstr(err, "larger than 1024 MiB"), "%s", err);
	infile_close(&in);
	unlink(path);

	/* gzip: the cap applies to what comes out */
	size_t gzlen;
	uint8_t *gz = gzip_of(big, len, &gzlen);
	infile_from_memory(&in, gz, gzlen);
	cr_assert_eq(infile_read_all(&in, &(struct infile_limit){1 << 20, "pprof"},
				     &data, &n, err, sizeof(err)), -1);
	cr_assert(strstr(err, "larger than 1 MiB once gunzipped"), "%s", err);
	infile_close(&in);

	/* within the cap: everything, after a peek at the head */
	infile_from_memory(&in, gz, gzlen);
	const uint8_t *head;
	bool complete;
	cr_assert_eq(infile_head(&in, &head, &n, &complete, err, sizeof(err)), 0);
	cr_assert_eq(infile_read_all(&in, &(struct infile_limit){(size_t)64 << 20, "pprof"},
				     &data, &n, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(n, len);
	cr_assert_eq(memcmp(data, big, len), 0);
	cr_assert_eq(data[n], 0);
	free(data);
	infile_close(&in);

	/* truncated gzip */
	infile_from_memory(&in, gz, gzlen / 2);
	cr_assert_eq(infile_read_all(&in, &(struct infile_limit){(size_t)64 << 20, "pprof"},
				     &data, &n, err, sizeof(err)),
		     -1);
	cr_assert_str_eq(err, "corrupt or truncated gzip data");
	infile_close(&in);
	free(gz);
	free(big);
}

/* A protobuf profile bigger than the head: the head alone may say "could
 * be", never "is"; bytes that are no protobuf say "no" at once. */
Test(infile, protobuf_heads)
{
	struct pb_buf b = {0}, st = {0};
	pb_put_uint(&st, 1, 1);
	pb_put_uint(&st, 2, 2);
	pb_put_message(&b, 1, &st); /* sample_type */
	char *big = malloc(2 << 20);
	memset(big, 'x', 2 << 20);
	pb_put_bytes(&b, 6, "", 0);         /* string_table[0] = "" */
	pb_put_bytes(&b, 6, big, 2 << 20); /* a 2 MB string: runs past the head */
	cr_assert(pprof_detect(b.data, b.len));
	cr_assert_not(pprof_detect(b.data, INFILE_HEAD), "cut: not a whole profile");
	cr_assert(pprof_detect_head(b.data, INFILE_HEAD));
	cr_assert_not(nflx_detect_head(b.data, INFILE_HEAD), "sample_type is no nflx field");

	struct pb_buf n = {0};
	pb_put_double(&n, 1, 100.0);
	pb_put_bytes(&n, 3, big, 2 << 20); /* samples, packed */
	cr_assert(nflx_detect_head(n.data, INFILE_HEAD));

	static const uint8_t zeros[4096];
	cr_assert_not(pprof_detect_head(zeros, sizeof(zeros)));
	cr_assert_not(nflx_detect_head(zeros, sizeof(zeros)));
	/* a first string that is not "" */
	struct pb_buf bad = {0};
	pb_put_message(&bad, 1, &st);
	pb_put_bytes(&bad, 6, "x", 1);
	pb_put_bytes(&bad, 6, big, 2 << 20);
	cr_assert_not(pprof_detect_head(bad.data, INFILE_HEAD));
	pb_buf_free(&b);
	pb_buf_free(&st);
	pb_buf_free(&n);
	pb_buf_free(&bad);
	free(big);
}
