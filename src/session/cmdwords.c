/* cmdwords — a command line cut into words (the syntax is command.h's),
 * and a word as an error shows it. */
#include "cmdwords.h"

#include <string.h>

#include "errbuf.h"

/* A word as shown inside an error: at most SHOW_MAX bytes (cut at a UTF-8
 * character boundary), then "...". */
const char *word_show(const char *word, char buf[SHOW_MAX + 4])
{
	size_t n = strlen(word);
	if (n <= SHOW_MAX)
		return word;
	n = SHOW_MAX;
	while (n > 0 && ((unsigned char)word[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, word, n);
	memcpy(buf + n, "...", 4);
	return buf;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Control characters other than tab (line breaks are checked before). */
bool char_is_control(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* Splits line[0..len) into words: blanks separate, "..." quotes (with \" and
 * \\), '#' at the start of a word ends the line. */
int words_split(const char *line, size_t len, struct words *w, char *err, size_t errlen)
{
	size_t i = 0, used = 0;
	w->n = 0;
	for (;;) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len || line[i] == '#')
			return 0;
		bool store = w->n < MAX_WORDS, quoted = false;
		char *out = w->buf + used;
		size_t k = 0;
		while (i < len && !is_blank(line[i])) {
			if (line[i] != '"') {
				if (store)
					out[k++] = line[i];
				i++;
				continue;
			}
			quoted = true;
			i++;
			for (;;) {
				if (i == len)
					return errbuf_set(err, errlen,
							  "unterminated quote: end the quoted word with \", "
							  "e.g. trace \"operator new(unsigned long)\"");
				char c = line[i];
				if (c == '"') {
					i++;
					break;
				}
				if (c == '\\') {
					if (i + 1 == len)
						return errbuf_set(err, errlen,
								  "unterminated quote: the line ends in a backslash "
								  "inside a quoted word; end it with \"");
					unsigned char e = (unsigned char)line[i + 1];
					if (e != '"' && e != '\\') {
						if (e > 0x20 && e < 0x7f)
							return errbuf_set(err, errlen,
									  "unknown escape \\%c in a quoted word: only \\\" "
									  "and \\\\ are escapes (\\\\ for a backslash)",
									  e);
						return errbuf_set(err, errlen,
								  "unknown escape \\ followed by byte 0x%02x in a "
								  "quoted word: only \\\" and \\\\ are escapes",
								  e);
					}
					c = (char)e;
					i++;
				}
				if (store)
					out[k++] = c;
				i++;
			}
		}
		if (store) {
			out[k] = 0;
			w->w[w->n] = out;
			w->quoted[w->n] = quoted;
			used += k + 1;
		}
		w->n++;
	}
}
