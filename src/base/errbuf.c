#define _GNU_SOURCE
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"
#include "util.h"

void errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* Messages quote input (names, paths, lines of files): one line, and
	 * nothing in it a terminal would obey. */
	struct printable keep = {0};
	fprintf(stderr, "%s: %s\n", progname, printable(&keep, msg));
	printable_free(&keep);
	free(msg);
}

static int errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (!err || !errlen)
		return -1;
	vsnprintf(err, errlen, fmt, ap);
	for (char *p = err; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return -1;
}

int errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	errbuf_vset(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int errbuf_first(struct errbuf *e, const char *fmt, ...)
{
	if (e->failed)
		return -1;
	e->failed = true;
	va_list ap;
	va_start(ap, fmt);
	errbuf_vset(e->err, e->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void errbuf_prefix(char *err, size_t errlen, const char *prefix)
{
	if (!err || !errlen)
		return;
	size_t n = strlen(prefix), len = strnlen(err, errlen - 1);
	if (n > errlen - 1)
		n = errlen - 1;
	if (len > errlen - 1 - n)
		len = errlen - 1 - n;
	memmove(err + n, err, len);
	memcpy(err, prefix, n);
	err[n + len] = '\0';
}
