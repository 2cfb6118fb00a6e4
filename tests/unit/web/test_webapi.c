/* webapi: sonde serve's endpoints over a recording built by hand, served as
 * a session (session_replay: no engine, no BPF) on a real HTTP server and
 * loop. The answers are checked against what the recording holds: the
 * samples, the slow calls and their samples, the functions; bad requests
 * get their status and one line of JSON. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats.h"
#include "http.h"
#include "httpkit.h"
#include "liverun.h"
#include "profile.h"
#include "recording.h"
#include "session.h"
#include "unitkit.h"
#include "util.h"
#include "webapi.h"

#define TOKEN "0123456789abcdef0123456789abcdef"
#define MS 1000000ull
#define BASE (1000 * MS)
#define NCALLS 20
#define SLOW_EVERY 5 /* calls 0, 5, 10, 15: 10 ms, in slow_path; the others 1 ms */

/* One process (srv, pid 100), NCALLS calls of handle 20 ms apart; every
 * call has 2 samples in it (4 in a slow one), in parse or slow_path under
 * handle; 10 idle samples between them. */
static char *write_recording(void)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t probe = profile_probe_add(p, "handle", "/bin/srv", 0x1000);
	uint32_t th = profile_thread_intern(p, 100, 100, "srv");
	uint32_t fmain = unit_frame(p, "main", FRAME_USER), fh = unit_frame(p, "handle", FRAME_USER),
		 fparse = unit_frame(p, "parse", FRAME_USER),
		 fslow = unit_frame(p, "slow_path", FRAME_USER),
		 fidle = unit_frame(p, "idle", FRAME_USER);
	uint32_t s_parse = UNIT_STACK(p, fmain, fh, fparse), s_slow = UNIT_STACK(p, fmain, fh, fslow),
		 s_idle = UNIT_STACK(p, fmain, fidle);
	for (int i = 0; i < NCALLS; i++) {
		bool slow = i % SLOW_EVERY == 0;
		uint64_t start = BASE + (uint64_t)i * 20 * MS, dur = slow ? 10 * MS : 1 * MS;
		struct span_link link = {.span_id = 1000 + (uint64_t)i, .probe = probe};
		unit_add(p, (struct unit_sample){.thread = th,
						 .stack = slow ? s_slow : s_parse,
						 .time_ns = start + 100000,
						 .count = slow ? 4 : 2,
						 .links = &link,
						 .nlinks = 1});
		unit_span(p, (struct span){.id = 1000 + (uint64_t)i, .probe = probe, .thread = th,
					   .depth = 1, .start_ns = start, .duration_ns = dur});
		if (i % 2 == 0)
			unit_sample(p, th, start + 15 * MS, s_idle, 1);
	}
	char *path = xasprintf("/tmp/sonde-test-webapi-%d.sonde", (int)getpid());
	char err[512];
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), 0, "%s", err);
	profile_free(p);
	return path;
}

struct served {
	char *path;
	struct session *s;
	struct liverun *r;
	struct http_server *http;
	struct webapi *api;
};

static void serve_open(struct served *x)
{
	x->path = write_recording();
	char err[1024];
	struct profile *p = formats_load(x->path, NULL, NULL, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	static struct session_options so;
	session_options_init(&so);
	so.live = true;
	x->s = session_replay(p, x->path, &so, err, sizeof(err));
	cr_assert_not_null(x->s, "%s", err);
	struct liverun_options ro = {.no_ctl = true};
	live_options_init(&ro.live);
	ro.live.keep_s = ro.live.window_s = 60;
	ro.live.max_spans = 1000;
	x->r = liverun_new(x->s, &ro, err, sizeof(err));
	cr_assert_not_null(x->r, "%s", err);
	struct http_options ho = {.token = TOKEN};
	x->http = http_server_open(liverun_loop(x->r), &ho, err, sizeof(err));
	cr_assert_not_null(x->http, "%s", err);
	x->api = webapi_new(x->r, x->http, 1.0);
	live_update(liverun_live(x->r));
}

static void serve_close(struct served *x)
{
	http_server_close(x->http);
	webapi_free(x->api);
	liverun_free(x->r);
	session_free(x->s);
	unlink(x->path);
	free(x->path);
}

static struct http_exchange *get(struct served *x, const char *path)
{
	return httpkit_roundtrip(liverun_loop(x->r), http_server_port(x->http),
				 "GET %s%stoken=" TOKEN " HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n"
				 "Connection: close\r\n\r\n",
				 path, strchr(path, '?') ? "&" : "?");
}

static struct http_exchange *command(struct served *x, const char *line)
{
	return httpkit_roundtrip(liverun_loop(x->r), http_server_port(x->http),
				 "POST /api/command?token=" TOKEN " HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n"
				 "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
				 strlen(line), line);
}

/* The answer's body, asserting its status. */
static const char *body_is(const struct http_exchange *e, int status)
{
	cr_assert_eq(httpkit_status(e), status, "status %d, wanted %d: %s", httpkit_status(e), status,
		     e->answer);
	return httpkit_body(e);
}

/* The total of the first flame node named `name` after `from` (flamedelta's
 * [id, parent, name, kind, total, self, colour]); -1 when there is none. */
static long long node_total(const char *from, const char *name)
{
	char key[128];
	snprintf(key, sizeof(key), ",\"%s\",\"", name);
	const char *at = strstr(from, key);
	if (!at)
		return -1;
	at = strchr(at + strlen(key), ',');
	cr_assert_not_null(at);
	char *end;
	long long v = strtoll(at + 1, &end, 10);
	cr_assert(end != at + 1 && *end == ',', "no number after %s: %.40s", name, at);
	return v;
}

/* An error answer: its status and one line of JSON, ok false, saying words. */
static void assert_refused(struct http_exchange *e, int status, const char *words)
{
	const char *b = body_is(e, status);
	cr_assert(strncmp(b, "{\"ok\":false,\"error\":\"", 21) == 0, "body: %s", b);
	cr_assert(strstr(b, words), "'%s' not in %s", words, b);
	const char *nl = strchr(b, '\n');
	cr_assert(nl && nl[1] == 0, "one line: %s", b);
	httpkit_free(e);
}

/* 4 slow calls of 4 samples, 16 fast ones of 2, and 10 idle samples. */
#define SAMPLES 58
#define SLOW_SAMPLES 16
#define FAST_SAMPLES 32

Test(webapi, status_and_flame_hold_the_recording)
{
	struct served x;
	serve_open(&x);
	struct http_exchange *e = get(&x, "/api/status");
	const char *b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "samples"), SAMPLES);
	cr_assert_eq(json_u64(b, "calls"), NCALLS);
	cr_assert_eq(json_u64(b, "calls_in_window"), NCALLS);
	cr_assert(strstr(b, "\"name\":\"handle\""), "%s", b);
	httpkit_free(e);
	e = get(&x, "/api/flame");
	b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "total"), SAMPLES);
	cr_assert_eq(node_total(b, "handle"), SLOW_SAMPLES + FAST_SAMPLES);
	cr_assert_eq(node_total(b, "slow_path"), SLOW_SAMPLES);
	cr_assert_eq(node_total(b, "parse"), FAST_SAMPLES);
	cr_assert_eq(node_total(b, "idle"), SAMPLES - SLOW_SAMPLES - FAST_SAMPLES);
	httpkit_free(e);
	e = get(&x, "/api/heatmap");
	cr_assert_eq(json_u64(body_is(e, 200), "total"), SAMPLES);
	httpkit_free(e);
	/* Calls 0-4 (1000-1080 ms): the slow call 0's 4 samples, 2 each of
	 * calls 1-4 and the idle samples of calls 0, 2 and 4. */
	e = get(&x, "/api/range?from_ns=1000000000&to_ns=1100000000");
	b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "total"), 4 + 4 * 2 + 3);
	cr_assert_eq(node_total(b, "idle"), 3);
	httpkit_free(e);
	serve_close(&x);
}

Test(webapi, a_command_changes_the_view_every_endpoint_shows)
{
	struct served x;
	serve_open(&x);
	struct http_exchange *e = command(&x, "slow handle 5ms");
	const char *b = body_is(e, 200);
	cr_assert(strncmp(b, "{\"ok\":true", 10) == 0, "%s", b);
	httpkit_free(e);
	live_update(liverun_live(x.r));
	e = get(&x, "/api/flame");
	b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "total"), SLOW_SAMPLES);
	cr_assert_eq(node_total(b, "slow_path"), SLOW_SAMPLES);
	cr_assert_eq(node_total(b, "parse"), -1, "no fast call's samples: %s", b);
	httpkit_free(e);
	e = get(&x, "/api/sandwich?function=slow_path");
	b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "total"), SLOW_SAMPLES);
	cr_assert_eq(json_u64(b, "view_total"), SLOW_SAMPLES);
	httpkit_free(e);
	serve_close(&x);
}

Test(webapi, calls_bands_and_flame_charts)
{
	struct served x;
	serve_open(&x);
	struct http_exchange *e = get(&x, "/api/band?probe=handle&min_ns=5000000&max_ns=20000000");
	const char *b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "calls_in"), NCALLS / SLOW_EVERY);
	cr_assert_eq(json_u64(b, "calls_out"), NCALLS - NCALLS / SLOW_EVERY);
	const char *in = strstr(b, "\"in\":"), *out = strstr(b, "\"out\":");
	cr_assert(in && out, "%s", b);
	cr_assert_eq(json_u64(in, "total"), SLOW_SAMPLES);
	cr_assert_eq(json_u64(out, "total"), FAST_SAMPLES);
	httpkit_free(e);
	e = get(&x, "/api/flamechart?span=1005"); /* call 5: slow */
	b = body_is(e, 200);
	cr_assert_eq(json_u64(b, "samples"), 4);
	cr_assert_eq(json_u64(b, "dur_ns"), 10 * MS);
	httpkit_free(e);
	e = get(&x, "/api/flamechart?span=1006"); /* call 6: fast */
	cr_assert_eq(json_u64(body_is(e, 200), "samples"), 2);
	httpkit_free(e);
	serve_close(&x);
}

Test(webapi, bad_requests_are_refused_in_one_line)
{
	struct served x;
	serve_open(&x);
	assert_refused(get(&x, "/api/band"), 400, "no probe");
	assert_refused(get(&x, "/api/nosuch"), 404, "no such endpoint");
	assert_refused(command(&x, "frobnicate"), 400, "unknown command 'frobnicate'");
	assert_refused(command(&x, "trace foo"), 400, "is a recording");
	/* and it still answers */
	struct http_exchange *e = get(&x, "/api/status");
	cr_assert_eq(json_u64(body_is(e, 200), "samples"), SAMPLES);
	httpkit_free(e);
	serve_close(&x);
}
