/* cmdparse — command_parse (command.h): a line checked (length, one
 * line, printable), cut into words (cmdwords), its command found in the table
 * (cmdtable) and its arguments parsed by that command's parser (cmdargs). */
#include "command.h"

#include <string.h>

#include "cmdtable.h"
#include "cmdwords.h"
#include "errbuf.h"

int command_parse(const char *line, struct command *cmd, char *err, size_t errlen)
{
	memset(cmd, 0, sizeof(*cmd));
	if (err && errlen)
		err[0] = 0;
	if (!line)
		return 0;

	size_t len = strnlen(line, COMMAND_LINE_MAX + 3);
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	if (len > COMMAND_LINE_MAX) {
		size_t total = len + strlen(line + len);
		return errbuf_set(err, errlen,
				  "line too long (%zu bytes; at most %d)", total, COMMAND_LINE_MAX);
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)line[i];
		if (ch == '\n' || ch == '\r')
			return errbuf_set(err, errlen,
					  "more than one line: give one command per line");
		if (char_is_control(ch))
			return errbuf_set(err, errlen,
					  "control character 0x%02x at byte %zu: a command is printable text", ch,
					  i + 1);
	}

	struct words w;
	if (words_split(line, len, &w, err, errlen))
		return -1;
	if (w.n == 0)
		return 0;

	const struct command_info *ci = info_find(w.w[0]);
	if (!ci) {
		char sb[SHOW_MAX + 4], list[256];
		const char *near = suggest_command(w.w[0]);
		if (near)
			return errbuf_set(err, errlen,
					  "unknown command '%s': did you mean %s? (help lists the commands)",
					  word_show(w.w[0], sb), near);
		command_list(list, sizeof(list));
		return errbuf_set(err, errlen,
				  "unknown command '%s' (commands: %s)", word_show(w.w[0], sb), list);
	}
	if (ci->parse(ci, &w, cmd, err, errlen)) {
		memset(cmd, 0, sizeof(*cmd));
		return -1;
	}
	if (err && errlen)
		err[0] = 0;
	return 0;
}
