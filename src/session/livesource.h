/* livesource — what a live session needs of the session it steers, as one
 * interface: the session's own functions (live_session_source), or a
 * stand-in that plays a recording (tests/unit/session/test_view_paths.c),
 * so the live session's windows, views and commands run without the engine. Each
 * member is the session.h function of that name. */
#ifndef SONDE_LIVESOURCE_H
#define SONDE_LIVESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "session.h"

struct livesource_ops {
	struct profile *(*profile)(struct session *s);
	const struct session_options *(*options)(const struct session *s);
	double (*start_time)(const struct session *s);
	bool (*ended)(const struct session *s);
	const char *(*replay_path)(const struct session *s);
	double (*end_time)(const struct session *s);
	bool (*refuse_replay)(const struct session *s, char *err, size_t errlen);
	pid_t (*command_pid)(const struct session *s);
	bool (*probe_attached)(const struct session *s, uint32_t probe);
	const char *(*probe_spec)(const struct session *s, uint32_t probe);
	int (*keep_calls_over)(struct session *s, uint32_t probe, uint64_t ns);
	int (*probe_hist)(struct session *s, uint32_t probe, uint64_t *buckets);
	int (*probe_hists)(struct session *s, uint64_t (*out)[LATENCY_LOGLIN_BUCKETS]);
	uint64_t (*probe_entered)(struct session *s, uint32_t probe);
	void (*get_stats)(struct session *s, struct engine_stats *es, struct collector_stats *cs);
	struct recording_image *(*recording)(struct session *s, char *err, size_t errlen);
	int (*trace)(struct session *s, const char *spec, int *count, char *err, size_t errlen);
	int (*untrace)(struct session *s, const char *pattern, char *err, size_t errlen);
	int (*set_sampling)(struct session *s, const char *event, uint64_t freq, uint64_t period,
			    char *err, size_t errlen);
	int (*set_offcpu)(struct session *s, bool on, char *err, size_t errlen);
	int (*set_threads)(struct session *s, bool on, uint64_t hz, char *err, size_t errlen);
	int (*set_sample_in)(struct session *s, const char *func, char *err, size_t errlen);
	int (*set_sample_slow)(struct session *s, const char *func, uint64_t ns, char *err,
			       size_t errlen);
	int (*set_sample_when)(struct session *s, const char *line, char *err, size_t errlen);
};

/* session.h's functions: what sonde top, serve and ctl steer. */
extern const struct livesource_ops live_session_source;

#endif
