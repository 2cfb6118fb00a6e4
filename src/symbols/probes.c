/* probes — the API of probes.h; this room: a spec's parts (probes_split,
 * probes_split_line) and the targets freed. Resolving a spec is the other
 * rooms' job: proberesolve (probes_resolve: its steps), probebinary (finding
 * the binary), probesyms (its functions), probedebug (its separate debug
 * file and DWARF), probesafety (where a probe would break the target),
 * probelines (line probes and listings). */
#define _GNU_SOURCE
#include "probes.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"


bool probes_is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int probes_split(const char *spec)
{
	for (int i = (int)strlen(spec) - 1; i > 0; i--) {
		if (spec[i] != ':')
			continue;
		if (spec[i - 1] == ':' || spec[i + 1] == ':') {
			i--; /* skip the other half of "::" */
			continue;
		}
		return i;
	}
	return -1;
}

int probes_split_line(const char *spec, char **binary, char **file, unsigned *line)
{
	*binary = *file = NULL;
	const char *c = strrchr(spec, ':');
	if (!c || c == spec || !c[1] || strspn(c + 1, "0123456789") != strlen(c + 1) ||
	    strlen(c + 1) > 9)
		return 0;
	*line = (unsigned)strtoul(c + 1, NULL, 10);
	char *prefix = strndup(spec, (size_t)(c - spec));
	int colon = probes_split(prefix);
	*file = xstrdup(colon >= 0 ? prefix + colon + 1 : prefix);
	if (colon > 0)
		*binary = strndup(prefix, (size_t)colon);
	free(prefix);
	return 1;
}

void probes_free(struct probe_target *t, int n)
{
	for (int i = 0; i < n; i++) {
		free(t[i].function);
		free(t[i].binary);
		free(t[i].ifunc_impl);
		free(t[i].location);
		free(t[i].moved);
		free(t[i].usdt_args);
		free(t[i].py);
		free(t[i].jump.text);
		free(t[i].jump.taken_file);
		free(t[i].jump.fall_file);
		free(t[i].jump.source);
	}
	free(t);
}
