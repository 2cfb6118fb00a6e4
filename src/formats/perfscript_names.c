/* perfscript_names — a stack line's function name as FlameGraph's
 * stackcollapse-perf.pl cleans it (offset stripped, "a->b" split into
 * inlined parts, "[unknown]" named by its module, arguments and quotes
 * dropped) and the annotation it gives each part (perfscriptscan.h). The
 * collapse and the profile reader name frames the same way through it. */
#define _GNU_SOURCE
#include "perfscriptscan.h"

/* Perl's s/\+0x[\da-f]+$//: only the last "+0x" can be followed by hex
 * digits up to the end. */
struct sv perfscript_strip_offset(struct sv f)
{
	size_t j = f.n;
	while (j > 0 && (is_digit((unsigned char)f.p[j - 1]) ||
			 (f.p[j - 1] >= 'a' && f.p[j - 1] <= 'f')))
		j--;
	if (j < f.n && j >= 3 && f.p[j - 1] == 'x' && f.p[j - 2] == '0' && f.p[j - 3] == '+')
		f.n = j - 3;
	return f;
}

static bool sv_has(struct sv s, const char *needle)
{
	return memmem(s.p, s.n, needle, strlen(needle)) != NULL;
}

/* m/(^\[|vmlinux$)/ && !~ /unknown/ */
bool perfscript_mod_is_kernel(struct sv mod)
{
	bool k = (mod.n && mod.p[0] == '[') ||
		 (mod.n >= 7 && memcmp(mod.p + mod.n - 7, "vmlinux", 7) == 0);
	return k && !sv_has(mod, "unknown");
}

/* m:/tmp/perf-\d+\.map: */
bool perfscript_mod_is_jit(struct sv mod)
{
	const char *p = mod.p, *end = mod.p + mod.n;
	while (p < end) {
		const char *x = memmem(p, (size_t)(end - p), "/tmp/perf-", 10);
		if (!x)
			return false;
		const char *d = x + 10;
		while (d < end && is_digit((unsigned char)*d))
			d++;
		if (d > x + 10 && end - d >= 4 && memcmp(d, ".map", 4) == 0)
			return true;
		p = x + 1;
	}
	return false;
}

/* The cleanups FlameGraph applies to one function name (after "[unknown]"
 * became "[module]"): ';' -> ':'; unless it looks like a Go method
 * (".(" ... ")."), cut at the first '(' that does not open
 * "(anonymous namespace)"; drop quote characters; for comm "java" drop the
 * leading 'L' of names with a '/'. Appends to b. */
void perfscript_tidy_append(struct buf *b, struct sv f, bool java)
{
	const char *p = f.p;
	size_t n = f.n;
	bool go = false;
	const char *dp = memmem(p, n, ".(", 2);
	if (dp) {
		size_t off = (size_t)(dp - p) + 2;
		go = memmem(p + off, n - off, ").", 2) != NULL;
	}
	if (!go) {
		static const char anon[] = "anonymous namespace)";
		for (size_t i = 0; i < n; i++) {
			if (p[i] != '(')
				continue;
			if (n - i - 1 >= sizeof(anon) - 1 && memcmp(p + i + 1, anon, sizeof(anon) - 1) == 0)
				continue;
			n = i;
			break;
		}
	}
	size_t start = b->n;
	buf_reserve(b, n);
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '"' || c == '\'')
			continue;
		b->p[b->n++] = c == ';' ? ':' : c;
	}
	if (java && b->n > start && b->p[start] == 'L' &&
	    memchr(b->p + start, '/', b->n - start)) {
		memmove(b->p + start, b->p + start + 1, b->n - start - 1);
		b->n--;
	}
}

/* Perl's split /\->/ (trailing empty fields removed). */
void perfscript_split_arrows(struct sv f, struct fields *out)
{
	out->n = 0;
	size_t start = 0;
	for (size_t i = 0; i <= f.n; i++) {
		bool arrow = i + 1 < f.n && f.p[i] == '-' && f.p[i + 1] == '>';
		if (!arrow && i < f.n)
			continue;
		grow_array((void **)&out->v, &out->cap, out->n + 1, sizeof(*out->v));
		out->v[out->n++] = (struct sv){f.p + start, i - start};
		if (!arrow)
			break;
		start = i + 2;
		i++;
	}
	while (out->n > 0 && out->v[out->n - 1].n == 0)
		out->n--;
}

