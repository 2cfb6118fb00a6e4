/* strcheck — calls the string and memory functions of libc whose
 * implementation the IFUNC resolution picks for this CPU (AVX2, EVEX or
 * SSE versions: the ones whose first instructions the kernel's uprobes may
 * mis-step, insn.h) over many lengths and alignments, and checks every
 * result against a plain loop. trace_avx.sh runs it with a probe on each.
 * Built with -fno-builtin (tests/targets/CMakeLists.txt) so that every call
 * goes to libc.
 * Usage: strcheck ROUNDS. Prints "NAME calls=N" per function and
 * "strcheck: checks=N wrong=W"; exits 1 if any result was wrong. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

enum { MAXLEN = 300, ALIGNS = 33 };
static long checks, wrong;
static char a[MAXLEN + 128], b[MAXLEN + 128];
static wchar_t wa[MAXLEN + 64], wb[MAXLEN + 64];

#define FUNCS(X)                                                                              \
	X(memset) X(memcpy) X(memmove) X(mempcpy) X(memchr) X(memrchr) X(rawmemchr) X(memcmp) \
	X(bcmp) X(strlen) X(strnlen) X(strchr) X(strchrnul) X(strrchr) X(strcmp) X(strncmp)  \
	X(strcpy) X(stpcpy) X(strncpy) X(stpncpy) X(strcat) X(strncat) X(strcasecmp)          \
	X(strncasecmp) X(strspn) X(strcspn) X(strpbrk) X(strstr) X(wcslen) X(wcsnlen)        \
	X(wcschr) X(wcsrchr) X(wcscmp) X(wcsncmp) X(wcscpy) X(wmemchr) X(wmemcmp) X(wmemset)
#define COUNTER(f) static long n_##f;
FUNCS(COUNTER)
#define CALL(f, ...) (n_##f++, f(__VA_ARGS__))

static void expect(int ok)
{
	checks++;
	wrong += !ok;
}

/* a[off..off+len) = a pattern without zeros, then a NUL. */
static char *fill(char *buf, int off, int len, int seed)
{
	for (int i = 0; i < len; i++)
		buf[off + i] = (char)('a' + (i * 7 + seed) % 26);
	buf[off + len] = 0;
	return buf + off;
}

static void one(int off, int len, int seed)
{
	char *s = fill(a, off, len, seed), *t;
	char c = len ? s[len / 2] : 'a';
	/* the first and last occurrence of c, by hand */
	int first = -1, last = -1;
	for (int i = 0; i < len; i++)
		if (s[i] == c) {
			last = i;
			if (first < 0)
				first = i;
		}
	expect(CALL(strlen, s) == (size_t)len);
	expect(CALL(strnlen, s, (size_t)len / 2) == (size_t)len / 2);
	t = CALL(strchr, s, c);
	expect(first < 0 ? !t : t == s + first);
	t = CALL(strchrnul, s, c);
	expect(t == (first < 0 ? s + len : s + first));
	t = CALL(strrchr, s, c);
	expect(last < 0 ? !t : t == s + last);
	t = CALL(memchr, s, c, (size_t)len);
	expect(first < 0 ? !t : t == s + first);
	t = CALL(memrchr, s, c, (size_t)len);
	expect(last < 0 ? !t : t == s + last);
	t = CALL(rawmemchr, s, 0);
	expect(t == s + len);
	/* copies */
	memset(b, 'x', sizeof(b));
	char *d = b + (off * 3) % ALIGNS;
	expect(CALL(memcpy, d, s, (size_t)len) == d);
	int same = 1;
	for (int i = 0; i < len; i++)
		same &= d[i] == s[i];
	expect(same && d[len] == 'x');
	expect(CALL(memcmp, d, s, (size_t)len) == 0);
	expect(CALL(bcmp, d, s, (size_t)len) == 0);
	if (len) {
		d[len - 1] ^= 1;
		expect(CALL(memcmp, d, s, (size_t)len) != 0);
		expect((CALL(memcmp, d, s, (size_t)len) > 0) == ((unsigned char)d[len - 1] >
								   (unsigned char)s[len - 1]));
		d[len - 1] ^= 1;
	}
	expect(CALL(mempcpy, d, s, (size_t)len) == d + len);
	CALL(memmove, d + 1, d, (size_t)len);
	same = 1;
	for (int i = 0; i < len; i++)
		same &= d[i + 1] == s[i];
	expect(same);
	expect(CALL(memset, d, (char)(seed + 1), (size_t)len) == d);
	same = 1;
	for (int i = 0; i < len; i++)
		same &= d[i] == (char)(seed + 1);
	expect(same);
	expect(CALL(strcpy, d, s) == d && d[len] == 0);
	expect(CALL(strcmp, d, s) == 0);
	expect(CALL(stpcpy, d, s) == d + len);
	expect(CALL(strncmp, d, s, (size_t)len + 5) == 0);
	if (len) {
		d[len / 2] = (char)(d[len / 2] + 1);
		int r = CALL(strcmp, d, s);
		expect(r > 0);
		expect(CALL(strncmp, d, s, (size_t)len / 2) == 0);
		expect((CALL(strncmp, s, d, (size_t)len) < 0) == (r > 0));
		d[len / 2] = s[len / 2];
	}
	memset(b, 'x', sizeof(b));
	expect(CALL(strncpy, d, s, (size_t)len + 3) == d && d[len] == 0 && d[len + 2] == 0 &&
	       d[len + 3] == 'x');
	expect(CALL(stpncpy, d, s, (size_t)len + 3) == d + len);
	d[0] = 0;
	CALL(strcat, d, s);
	CALL(strcat, d, "!");
	expect(CALL(strlen, d) == (size_t)len + 1 && d[len] == '!');
	d[0] = 0;
	CALL(strncat, d, s, (size_t)len / 2);
	expect(CALL(strlen, d) == (size_t)len / 2);
	/* case-insensitive: the same text upper-cased */
	for (int i = 0; i <= len; i++)
		d[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
	expect(CALL(strcasecmp, d, s) == 0);
	expect(CALL(strncasecmp, d, s, (size_t)len) == 0);
	/* spans: s is all lower case letters */
	expect(CALL(strspn, s, "abcdefghijklmnopqrstuvwxyz") == (size_t)len);
	expect(CALL(strcspn, s, "!?") == (size_t)len);
	t = CALL(strpbrk, s, (char[]){c, 0});
	expect(first < 0 ? !t : t == s + first);
	if (len > 4)
		expect(CALL(strstr, s, s + len - 4) != NULL);
	/* wide characters */
	for (int i = 0; i < len; i++)
		wa[off % 8 + i] = (wchar_t)(0x100 + (i * 5 + seed) % 50);
	wchar_t *w = wa + off % 8;
	w[len] = 0;
	wchar_t wc = len ? w[len / 2] : 0x100;
	int wfirst = -1, wlast = -1;
	for (int i = 0; i < len; i++)
		if (w[i] == wc) {
			wlast = i;
			if (wfirst < 0)
				wfirst = i;
		}
	expect(CALL(wcslen, w) == (size_t)len);
	expect(CALL(wcsnlen, w, (size_t)len / 2) == (size_t)len / 2);
	wchar_t *wt = CALL(wcschr, w, wc);
	expect(wfirst < 0 ? !wt : wt == w + wfirst);
	wt = CALL(wcsrchr, w, wc);
	expect(wlast < 0 ? !wt : wt == w + wlast);
	wt = CALL(wmemchr, w, wc, (size_t)len);
	expect(wfirst < 0 ? !wt : wt == w + wfirst);
	wchar_t *wd = wb + (off * 3) % 8;
	expect(CALL(wcscpy, wd, w) == wd);
	expect(CALL(wcscmp, wd, w) == 0);
	expect(CALL(wcsncmp, wd, w, (size_t)len) == 0);
	expect(CALL(wmemcmp, wd, w, (size_t)len) == 0);
	expect(CALL(wmemset, wd, (wchar_t)0x41, (size_t)len) == wd);
	same = 1;
	for (int i = 0; i < len; i++)
		same &= wd[i] == 0x41;
	expect(same);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	for (int r = 0; r < rounds; r++)
		for (int len = 0; len <= MAXLEN; len += len < 70 ? 1 : 23)
			for (int off = 0; off < ALIGNS; off += 4)
				one(off, len, r + len);
#define PRINT(f) printf(#f " calls=%ld\n", n_##f);
	FUNCS(PRINT)
	printf("strcheck: checks=%ld wrong=%ld\n", checks, wrong);
	return wrong != 0;
}
