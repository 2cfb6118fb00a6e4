/* The bundled demo workload: a toy request server that does recognisable
 * kinds of work, so its flame graph has something to say.
 *
 * usage: workload SECONDS
 * Each "request" is parsed, validated, checksummed and rendered; one request
 * in 16 takes a slow path that rebuilds an index (sorting); every request's
 * response is written to /dev/null, so kernel frames (write syscalls) show
 * up too. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct request {
	char method[8];
	char path[64];
	int id;
	unsigned char body[2048];
};

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void parse_request(struct request *r, int id)
{
	char line[128];
	snprintf(line, sizeof(line), "GET /items/%d?sort=name HTTP/1.1", id);
	sscanf(line, "%7s %63s", r->method, r->path);
	r->id = id;
	for (size_t i = 0; i < sizeof(r->body); i++)
		r->body[i] = (unsigned char)(i * 31 + (size_t)id);
}

__attribute__((noinline)) static int validate_request(const struct request *r)
{
	int ok = strcmp(r->method, "GET") == 0;
	for (const char *c = r->path; *c; c++)
		ok &= *c != '\\';
	return ok;
}

__attribute__((noinline)) static unsigned compute_checksum(const unsigned char *p, size_t n)
{
	unsigned crc = 0xffffffffu;
	for (int round = 0; round < 8; round++)
		for (size_t i = 0; i < n; i++) {
			crc ^= p[i];
			for (int k = 0; k < 8; k++)
				crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
		}
	return ~crc;
}

/* Its own sort rather than libc's qsort: Debian's libc is built without
 * frame pointers, so stacks through it would be cut short. */
__attribute__((noinline)) static void sort_keys(int *a, int n)
{
	for (int gap = n / 2; gap > 0; gap /= 2)
		for (int i = gap; i < n; i++) {
			int v = a[i], j = i;
			for (; j >= gap && a[j - gap] > v; j -= gap)
				a[j] = a[j - gap];
			a[j] = v;
		}
}

__attribute__((noinline)) static void rebuild_index(int seed)
{
	static int keys[20000];
	unsigned s = (unsigned)seed;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		s = s * 1103515245u + 12345u;
		keys[i] = (int)(s >> 8);
	}
	sort_keys(keys, (int)(sizeof(keys) / sizeof(keys[0])));
}

__attribute__((noinline)) static size_t render_response(const struct request *r, unsigned sum,
							char *out, size_t size)
{
	size_t n = 0;
	for (int i = 0; i < 40 && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "<li id=\"%d-%d\">%s %08x</li>\n", r->id,
				      i, r->path, sum + (unsigned)i);
	return n < size ? n : size;
}

__attribute__((noinline)) static void handle_request(int id, int devnull)
{
	struct request r;
	char response[8192];
	parse_request(&r, id);
	if (!validate_request(&r))
		return;
	unsigned sum = compute_checksum(r.body, sizeof(r.body));
	if (id % 16 == 0)
		rebuild_index(id);
	size_t n = render_response(&r, sum, response, sizeof(response));
	for (size_t off = 0; off < n; off += 256) /* small writes: syscall-heavy */
		if (write(devnull, response + off, n - off < 256 ? n - off : 256) < 0)
			return;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5.0;
	int devnull = open("/dev/null", O_WRONLY);
	double end = wall_now() + seconds;
	int id = 0;
	while (wall_now() < end)
		handle_request(id++, devnull);
	printf("workload: handled %d requests in %.1f s\n", id, seconds);
	close(devnull);
	return 0;
}
