/* pyperf — are a Python target's perf trampolines on. See pyperf.h. */
#include "pyperf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discovery.h"
#include "errbuf.h"
#include "procmaps.h"
#include "util.h"

/* -X perf (or -X perf_jit, 3.13's), as one word or two. */
static bool args_ask_perf(char *const *argv, int argc)
{
	for (int i = 0; i < argc; i++) {
		const char *x = NULL;
		if (!strcmp(argv[i], "-X") && i + 1 < argc)
			x = argv[i + 1];
		else if (!strncmp(argv[i], "-X", 2))
			x = argv[i] + 2;
		if (x && !strncmp(x, "perf", 4) && (!x[4] || !strcmp(x + 4, "_jit")))
			return true;
	}
	return false;
}

static bool value_asks_perf(const char *v)
{
	return v && *v && atoi(v) != 0;
}

static bool process_has_perf(pid_t pid)
{
	char map[64];
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	if (access(map, F_OK) == 0)
		return true;
	char *buf, **words;
	int n = procmaps_words(pid, "cmdline", &buf, &words);
	bool on = args_ask_perf(words, n);
	free(buf);
	free(words);
	if (on)
		return true;
	n = procmaps_words(pid, "environ", &buf, &words);
	for (int i = 0; i < n && !on; i++)
		on = !strncmp(words[i], "PYTHONPERFSUPPORT=", 18) && value_asks_perf(words[i] + 18);
	free(buf);
	free(words);
	return on;
}

int pyperf_check(struct session *s, char *why, size_t whylen)
{
	pid_t *pids;
	int n = discovery_running_targets(s, &pids);
	int r = 0;
	for (int i = 0; i < n && !r; i++)
		if (!process_has_perf(pids[i]))
			r = errbuf_set(why, whylen,
				       "process %d runs Python without its perf trampolines, through "
				       "which sonde times Python calls: start it with -X perf or "
				       "PYTHONPERFSUPPORT=1 (or call sys.activate_stack_trampoline('perf'))",
				       (int)pids[i]);
	free(pids);
	char *const *cmd = s->o->cmd;
	if (n > 0 || !cmd || !cmd[0] || r)
		return r;
	int argc = 0;
	while (cmd[argc])
		argc++;
	if (args_ask_perf(cmd, argc) || value_asks_perf(getenv("PYTHONPERFSUPPORT")))
		return 0;
	return errbuf_set(why, whylen,
			  "%s is not started with -X perf or PYTHONPERFSUPPORT=1, without which its "
			  "Python calls do not go through the trampolines sonde times them by",
			  cmd[0]);
}
