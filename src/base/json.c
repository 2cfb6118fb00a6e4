#include "json.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s, or 0 when it is not valid. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
	if (n == 0 || (n == 2 && s[0] < 0xC2))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

void json_write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	fputc('"', f);
	while (*s) {
		unsigned char c = *s;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			s++;
		} else if (c == '\n') {
			fputs("\\n", f);
			s++;
		} else if (c == '\t') {
			fputs("\\t", f);
			s++;
		} else if (c < 0x20 || c == 0x7f) { /* DEL too: old Perfetto parsers reject it raw */
			fprintf(f, "\\u%04x", c);
			s++;
		} else {
			int n = utf8_len(s);
			if (n == 0) {
				fputs("\\ufffd", f);
				s++;
			} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
				/* C1 controls (U+009B is a CSI to some terminals) */
				fprintf(f, "\\u%04x", s[1]);
				s += 2;
			} else {
				fwrite(s, 1, (size_t)n, f);
				s += n;
			}
		}
	}
	fputc('"', f);
}
