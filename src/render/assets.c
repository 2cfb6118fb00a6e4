#define _GNU_SOURCE
#include "assets.h"

#include <stdarg.h>
#include <string.h>

enum { MAX_NAME = 32 };

/* The length of the placeholder name at s (just past an '@'), or 0 when s
 * does not start one: capitals, digits and '_', then the closing '@'. */
static size_t placeholder_len(const char *s)
{
	size_t n = 0;
	while (n < MAX_NAME && ((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
				s[n] == '_'))
		n++;
	return n > 0 && s[n] == '@' ? n : 0;
}

bool assets_fill_ints(FILE *out, const char *name, void *arg)
{
	for (const struct assets_int *v = arg; v->name; v++)
		if (strcmp(v->name, name) == 0) {
			fprintf(out, "%lld", v->value);
			return true;
		}
	return false;
}

void assets_write(FILE *out, const char *text, assets_fill_fn fill, void *arg)
{
	const char *p = text;
	while (*p) {
		const char *at = fill ? strchr(p, '@') : NULL;
		if (!at) {
			fputs(p, out);
			return;
		}
		fwrite(p, 1, (size_t)(at - p), out);
		size_t n = placeholder_len(at + 1);
		if (!n) {
			fputc('@', out);
			p = at + 1;
			continue;
		}
		char name[MAX_NAME + 1];
		memcpy(name, at + 1, n);
		name[n] = '\0';
		if (!fill(out, name, arg))
			fwrite(at, 1, n + 2, out); /* an unknown placeholder stays as it is */
		p = at + n + 2;
	}
}

void assets_svg_style(FILE *out, const char *const css[], assets_fill_fn fill, void *arg)
{
	fputs("<style type=\"text/css\"><![CDATA[\n", out);
	for (size_t i = 0; css[i]; i++)
		assets_write(out, css[i], fill, arg);
	fputs("]]></style>\n", out);
}

void assets_svg_script(FILE *out, const char *const scripts[], const char *cfg, ...)
{
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	va_list ap;
	va_start(ap, cfg);
	vfprintf(out, cfg, ap);
	va_end(ap);
	for (size_t i = 0; scripts[i]; i++)
		fputs(scripts[i], out);
	fputs("]]></script>\n", out);
}
