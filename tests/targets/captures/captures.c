/* captures — a target for sonde's captures and predicates, built by gcc and
 * clang at -O0 and -O2 (CMakeLists.txt here). It makes `calls` requests
 * with sizes, names, colors and flags from a fixed sequence and prints what
 * it passed, so tests compare sonde's captured values with the program's
 * own counts:
 *   handle(struct request *req, int n)  req->hdr.size, req->name (char[16]),
 *                                       req->path (char *), req->color (enum),
 *                                       req->urgent (bool), n, g_generation
 *   checksum(unsigned long seed, int rounds)  at -O2 `seed` is a register-held
 *                                       argument whose location is a location
 *                                       list (it is overwritten in the loop)
 *   mix(unsigned seed, int rounds)      a line in a loop (LINE_MIX), for captures
 *                                       at a line: its locals `step` and `acc`
 *                                       (at -O2 register-held, acc's location a
 *                                       location list) as the line begins
 * Output, one line each: "calls N", "size S COUNT" per size, "big B" (calls
 * with size > 1000), "big_not_urgent B" (and not urgent), "color NAME COUNT", "name NAME COUNT", "urgent COUNT",
 * "generation_sum SUM", "seed_sum SUM", "n_sum SUM"; for LINE_MIX, what main
 * computes the line sees at each pass: "mix_hits N" (passes), "mix_acc_sum
 * SUM" (of acc), "mix_big B" (passes with acc > 500), "step K COUNT" (passes
 * with step K). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct hdr {
	unsigned char kind;
	unsigned short size;
	int flags;
};

struct request {
	int fd;
	struct hdr hdr;
	const char *path;
	char name[16];
	enum color color;
	bool urgent;
	long long offset;
};

int g_generation; /* a global the target changes as it runs */

__attribute__((noinline)) long handle(struct request *req, int n)
{
	long s = req->hdr.size + n;
	for (int i = 0; req->name[i]; i++)
		s += req->name[i];
	if (req->urgent)
		s *= 2;
	return s + (long)req->color;
}

__attribute__((noinline)) unsigned long checksum(unsigned long seed, int rounds)
{
	for (int i = 0; i < rounds; i++)
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
	return seed;
}

static volatile unsigned mix_sink;

/* A call in the loop keeps compilers from unrolling it (an unrolled copy of
 * a line has no statement row of its own). */
__attribute__((noinline)) void mix_note(unsigned v)
{
	mix_sink = v;
}

#define MIX_MOD 1009u

__attribute__((noinline)) unsigned mix(unsigned seed, int rounds)
{
	unsigned acc = seed % MIX_MOD;
	for (int step = 0; step < rounds; step++) {
		acc = (acc * 7u + (unsigned)step) % MIX_MOD; /* LINE_MIX */
		mix_note(acc);
	}
	return acc;
}

static const unsigned short sizes[] = {64, 512, 1500, 64, 9000, 64, 512};
static const char *const names[] = {"alpha", "beta", "gamma-request"};
static const char *const paths[] = {"/index.html", "/api/v1/items"};
static const char *const color_names[] = {[RED] = "RED", [GREEN] = "GREEN", [BLUE] = "BLUE"};
static const enum color colors[] = {RED, GREEN, BLUE, GREEN};

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 1000;
	unsigned long size_count[65536] = {0};
	unsigned long color_count[BLUE + 1] = {0}, name_count[3] = {0};
	unsigned long big = 0, big_not_urgent = 0, urgent = 0, gen_sum = 0, seed_sum = 0, n_sum = 0, total = 0;
	unsigned long mix_hits = 0, mix_acc_sum = 0, mix_big = 0, step_count[4] = {0};
	for (int i = 0; i < calls; i++) {
		struct request r = {.fd = 3 + i % 4, .path = paths[i % 2], .color = colors[i % 4],
				    .urgent = i % 5 == 0, .offset = -1000 + i};
		r.hdr.size = sizes[i % 7];
		r.hdr.kind = (unsigned char)(i % 3);
		snprintf(r.name, sizeof(r.name), "%s", names[i % 3]);
		g_generation = i / 100;
		int n = i % 11 - 5;
		size_count[r.hdr.size]++;
		big += r.hdr.size > 1000;
		big_not_urgent += r.hdr.size > 1000 && !r.urgent;
		color_count[r.color]++;
		name_count[i % 3]++;
		urgent += r.urgent;
		gen_sum += (unsigned long)g_generation;
		n_sum += (unsigned long)(long)n;
		total += (unsigned long)handle(&r, n);
		unsigned long seed = 1000u + (unsigned long)(i % 13);
		seed_sum += seed;
		total += checksum(seed, 3 + i % 3);
		/* What LINE_MIX sees as each pass begins. */
		unsigned mseed = 7u * (unsigned)i + 3u, acc = mseed % MIX_MOD;
		int rounds = 1 + i % 4;
		for (int step = 0; step < rounds; step++) {
			mix_hits++;
			mix_acc_sum += acc;
			mix_big += acc > 500;
			step_count[step]++;
			acc = (acc * 7u + (unsigned)step) % MIX_MOD;
		}
		total += mix(mseed, rounds);
	}
	printf("calls %d\n", calls);
	for (int s = 0; s < 65536; s++)
		if (size_count[s])
			printf("size %d %lu\n", s, size_count[s]);
	printf("big %lu\n", big);
	printf("big_not_urgent %lu\n", big_not_urgent);
	for (int c = 0; c <= BLUE; c++)
		if (color_names[c])
			printf("color %s %lu\n", color_names[c], color_count[c]);
	for (int k = 0; k < 3; k++)
		printf("name %s %lu\n", names[k], name_count[k]);
	printf("urgent %lu\n", urgent);
	printf("generation_sum %lu\n", gen_sum);
	printf("seed_sum %lu\n", seed_sum);
	printf("n_sum %ld\n", (long)n_sum);
	printf("mix_hits %lu\n", mix_hits);
	printf("mix_acc_sum %lu\n", mix_acc_sum);
	printf("mix_big %lu\n", mix_big);
	for (int k = 0; k < 4; k++)
		printf("step %d %lu\n", k, step_count[k]);
	printf("total %lu\n", total);
	return 0;
}
