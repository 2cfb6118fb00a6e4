/* webapi — the live session's HTTP endpoints. The contract is in webapi.h. */
#define _GNU_SOURCE
#include "webapi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "explorer.h"
#include "flamechart.h"
#include "frames.h"
#include "structure.h"
#include "flamedelta.h"
#include "heatmap.h"
#include "json.h"
#include "jsondelta.h"
#include "liveview.h"
#include "util.h"
#include "viewtree.h"

/* What the `state` event says. */
enum state { STATE_LIVE, STATE_ENDED, STATE_RECORDING };
static const char *const state_json[] = {
	[STATE_LIVE] = "{\"state\":\"live\"}",
	[STATE_ENDED] = "{\"state\":\"ended\"}",
	[STATE_RECORDING] = "{\"state\":\"recording\"}",
};

/* One interval's status or hot list: its text, parsed (NULL if it did not
 * parse, then never patched), shared by the clients it was sent to; and
 * the last patch made to it, from `from`, which the clients that got the
 * same last one share (usually all). */
struct snapshot {
	char *text;
	size_t len;
	struct json_value *v;
	unsigned refs;
	struct snapshot *from; /* a reference, or NULL: no patch made yet */
	char *patch;
	size_t plen;
	long changes;
};

/* The lists of the status and the hot list that are patched by key
 * (jsondelta.h): probes and functions by name, histogram buckets by their
 * low bound, ascending, a probe's slow calls by span id. */
static const struct jsondelta_list patch_lists[] = {
	{"probes", "name", false},
	{"functions", "name", false},
	{"buckets", NULL, true},
	{"slow", "span_id", false},
	{NULL, NULL, false},
};

struct client {
	struct webapi *a;
	struct http_stream *st;
	struct flamedelta *flame;
	bool missed;	/* an event did not fit: resend everything */
	int state_sent; /* -1 none yet, else an enum state */
	struct snapshot *status_sent, *hot_sent; /* the last status / hot it got (NULL: none yet) */
	struct client *prev, *next;
};

struct webapi {
	struct liverun *r;
	const char *source_dir; /* /api/explore's --source-dir, or NULL */
	/* The last function /api/explore built (the page asks again every 2 s:
	 * only its counts change), and what it was asked as. */
	struct structure explored;
	char *explored_key; /* "BINARY\nFUNC"; NULL: none */
	struct http_server *s;
	struct loop *lp;
	double interval_s;
	int timer;
	struct client *clients;
	size_t nclients;
};

void webapi_set_source_dir(struct webapi *a, const char *dir)
{
	a->source_dir = dir;
}

size_t webapi_clients(const struct webapi *a)
{
	return a->nclients;
}

/* A memory stream for building one answer; exits when out of memory, as
 * every allocation (util.h). */
static FILE *membuf(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	if (!f) {
		errorf("out of memory for an HTTP answer");
		exit(1);
	}
	return f;
}

/* ---- request/answer routes ---- */

/* The control socket's answer (one line of JSON), with its status. */
static void reply_answer(struct http_request *rq, unsigned status, char *answer, size_t len)
{
	if (!answer) {
		http_reply_error(rq, 500, "out of memory for the answer");
		return;
	}
	http_reply(rq, status, "application/json", answer, len);
	free(answer);
}

/* A command's structured answer as the control socket gives it. */
static void reply_command(struct webapi *a, struct http_request *rq, const char *command)
{
	size_t len = 0;
	bool ok;
	char *answer = liverun_answer(a->r, command, strlen(command), &len, &ok);
	reply_answer(rq, 200, answer, len);
}

static void route_status(void *arg, struct http_request *rq)
{
	reply_command(arg, rq, "status");
}

static void route_threads(void *arg, struct http_request *rq)
{
	reply_command(arg, rq, "threads");
}

static void route_command(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	size_t blen;
	const char *body = http_request_body(rq, &blen);
	while (blen && (body[blen - 1] == '\n' || body[blen - 1] == '\r'))
		blen--;
	if (!blen) {
		http_reply_error(rq, 400,
				 "no command: POST one command line as the body (try 'help')");
		return;
	}
	if (memchr(body, '\n', blen)) {
		http_reply_error(rq, 400, "one command per request: the body holds several lines");
		return;
	}
	size_t len = 0;
	bool ok;
	char *answer = liverun_answer(a->r, body, blen, &len, &ok);
	/* A command refused (unknown, malformed, a bad spec, nothing to steer
	 * in a recording) is a bad request: 400 with its one error line. */
	reply_answer(rq, ok ? 200 : 400, answer, len);
	webapi_refresh_now(a); /* the view may have changed: show it at once */
}

static void route_flame(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	struct live_view *v = live_view_build(liverun_live(a->r), 0);
	struct flamedelta *d = flamedelta_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fputs("{\"ok\":true,\"data\":", f);
	flamedelta_write(d, v->flame, v->fractional, f);
	fputs("}\n", f);
	fclose(f);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
	flamedelta_free(d);
	live_view_free(v);
}

/* A query argument that is a count of nanoseconds. */
static bool arg_ns(struct http_request *rq, const char *name, uint64_t *out)
{
	const char *v = http_request_arg(rq, name);
	char *end;
	if (!v || !*v)
		return false;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (*end || errno || v[0] == '-')
		return false;
	*out = n;
	return true;
}

static void route_band(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	const char *probe = http_request_arg(rq, "probe");
	uint64_t lo, hi;
	if (!probe || !*probe) {
		http_reply_error(rq, 400, "no probe: /api/band?probe=FUNC&min_ns=N&max_ns=N");
		return;
	}
	if (!arg_ns(rq, "min_ns", &lo) || !arg_ns(rq, "max_ns", &hi)) {
		http_reply_error(rq, 400, "min_ns and max_ns must be whole nanoseconds");
		return;
	}
	char err[512];
	struct live_band *b = live_band_build(liverun_live(a->r), probe, lo, hi, err, sizeof(err));
	if (!b) {
		http_reply_error(rq, 400, "%s", err);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fputs("{\"ok\":true,\"data\":{\"probe\":", f);
	json_write_string(f, probe);
	fprintf(f, ",\"min_ns\":%llu,\"max_ns\":%llu,\"calls_in\":", (unsigned long long)lo,
		(unsigned long long)hi);
	json_write_number(f, b->calls_in);
	fputs(",\"calls_out\":", f);
	json_write_number(f, b->calls_out);
	fprintf(f, ",\"samples_waiting\":%llu,\"in\":", (unsigned long long)b->samples_waiting);
	struct flamedelta *d = flamedelta_new();
	flamedelta_write(d, b->in, false, f);
	fputs(",\"out\":", f);
	flamedelta_reset(d);
	flamedelta_write(d, b->out, false, f);
	fputs("}}\n", f);
	fclose(f);
	flamedelta_free(d);
	live_band_free(b);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
}

/* The subsecond heat map of every sample held (render/heatmap.h: the
 * binning `sonde heatmap` draws), whatever the view. */
static void route_heatmap(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	int rows = HEATMAP_DEFAULT_ROWS;
	const char *rv = http_request_arg(rq, "rows");
	if (rv && *rv) {
		char *end;
		long n = strtol(rv, &end, 10);
		if (*end || n < 1 || n > 1000) {
			http_reply_error(rq, 400, "rows must be a whole number from 1 to 1000");
			return;
		}
		rows = (int)n;
	}
	struct heatmap h;
	if (heatmap_build(liverun_profile(a->r), NULL, rows, &h)) {
		http_reply_error(rq, 500, "cannot lay out the samples' time axis: %s", strerror(errno));
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fprintf(f,
		"{\"ok\":true,\"data\":{\"rows\":%d,\"cols\":%d,\"start_ns\":%llu,\"total\":%llu,"
		"\"max\":%llu,\"idle_dropped\":%llu,\"first_ns\":%llu,\"last_ns\":%llu,\"cells\":[",
		h.rows, h.cols, (unsigned long long)h.start_s * 1000000000ull,
		(unsigned long long)h.total, (unsigned long long)h.max,
		(unsigned long long)h.idle_dropped, (unsigned long long)h.first_ns,
		(unsigned long long)h.last_ns);
	for (int c = 0; c < h.cols; c++) {
		fputs(c ? ",[" : "[", f);
		for (int r = 0; r < h.rows; r++)
			fprintf(f, "%s%llu", r ? "," : "", (unsigned long long)heatmap_cell(&h, c, r));
		fputc(']', f);
	}
	fputs("]}}\n", f);
	fclose(f);
	heatmap_free(&h);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
}

/* The flame graph of the samples in a time range, as `sonde flame --range`
 * takes them (both ends included, idle samples left out as the heat map
 * leaves them out). */
static void route_range(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	uint64_t from, to;
	if (!arg_ns(rq, "from_ns", &from) || !arg_ns(rq, "to_ns", &to)) {
		http_reply_error(rq, 400,
				 "from_ns and to_ns must be whole nanoseconds: /api/range?from_ns=N&to_ns=N");
		return;
	}
	if (from > to) {
		http_reply_error(rq, 400, "empty range: from_ns is after to_ns");
		return;
	}
	struct view v = {.has_range = true, .start_ns = from, .end_ns = to,
			 .exclude = heatmap_sample_idle};
	struct flame_tree *t = viewtree_flame(liverun_profile(a->r), &v, FLAME_ROOT_COMM);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fprintf(f, "{\"ok\":true,\"data\":{\"from_ns\":%llu,\"to_ns\":%llu,\"flame\":",
		(unsigned long long)from, (unsigned long long)to);
	struct flamedelta *d = flamedelta_new();
	flamedelta_write(d, t, false, f);
	fputs("}}\n", f);
	fclose(f);
	flamedelta_free(d);
	flame_free(t);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
}

/* The frame of the tree whose label (flame_frame_label, not annotated) is
 * name: the first one met, in the tree's order; 0 when none is. */
struct find_label {
	const struct flame_tree *t;
	const char *name;
	uint32_t frame;
};

static int find_label(const struct flame_node *n, int depth, void *arg)
{
	struct find_label *f = arg;
	if (!depth)
		return 0;
	const struct frame *fr = frames_get(f->t->frames, n->frame);
	if (strcmp(fr ? fr->name : "all", f->name) != 0) /* the whole name, however long */
		return 0;
	f->frame = n->frame;
	return 1;
}

static void route_sandwich(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	const char *name = http_request_arg(rq, "function");
	if (!name || !*name) {
		http_reply_error(rq, 400, "no function: /api/sandwich?function=NAME (as /api/flame names it)");
		return;
	}
	struct live_view *v = live_view_build(liverun_live(a->r), 0);
	struct find_label fl = {v->flame, name, 0};
	if (v->flame)
		flame_walk(v->flame, find_label, &fl);
	if (!fl.frame) {
		live_view_free(v);
		http_reply_error(rq, 400, "no function '%s' in the current view's flame graph", name);
		return;
	}
	struct flame_tree *callers, *callees;
	flame_sandwich(v->flame, fl.frame, &callers, &callees);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fputs("{\"ok\":true,\"data\":{\"function\":", f);
	json_write_string(f, name);
	fputs(",\"color\":", f);
	flamedelta_write_color(f, frames_get(v->flame->frames, fl.frame));
	fputs(",\"total\":", f);
	json_write_number(f, (double)callees->root->total);
	fputs(",\"view_total\":", f);
	json_write_number(f, (double)v->flame->root->total);
	fprintf(f, ",\"fractional\":%s,\"callers\":", v->fractional ? "true" : "false");
	struct flamedelta *d = flamedelta_new();
	flamedelta_write(d, callers, v->fractional, f);
	fputs(",\"callees\":", f);
	flamedelta_reset(d);
	flamedelta_write(d, callees, v->fractional, f);
	fputs("}}\n", f);
	fclose(f);
	flamedelta_free(d);
	flame_free(callers);
	flame_free(callees);
	live_view_free(v);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
}

static void route_flamechart(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	uint64_t span;
	if (!arg_ns(rq, "span", &span) || !span) {
		http_reply_error(rq, 400, "no span: /api/flamechart?span=ID (a slow call's span_id)");
		return;
	}
	char err[512];
	struct flamechart_layout fc;
	struct flamechart_options o = {.span_id = span,
				       .show_overhead = live_shows_overhead(liverun_live(a->r))};
	if (flamechart_layout(liverun_profile(a->r), &o, &fc, err, sizeof(err))) {
		http_reply_error(rq, 400, "%s (calls older than --keep are no longer held)", err);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fprintf(f, "{\"ok\":true,\"data\":{\"span_id\":%llu,\"root\":", (unsigned long long)span);
	json_write_string(f, fc.root_label);
	fputs(",\"subtitle\":", f);
	json_write_string(f, fc.subtitle);
	fprintf(f, ",\"dur_ns\":%llu,\"sampled_ns\":%llu,\"samples\":%zu,\"depth\":%u,\"boxes\":[",
		(unsigned long long)fc.dur_ns, (unsigned long long)fc.sampled_ns, fc.nsamples,
		(unsigned)fc.maxdepth);
	for (size_t i = 0; i < fc.nboxes; i++) {
		const struct flamechart_box *b = &fc.boxes[i];
		bool root = b->fn == UINT32_MAX;
		const unsigned char *rgb = root ? fc.ff->root_rgb : fc.ff->rgb[b->fn];
		fprintf(f, "%s[%llu,%llu,%u,", i ? "," : "", (unsigned long long)b->start,
			(unsigned long long)b->end, (unsigned)b->depth);
		json_write_string(f, root ? fc.root_label : fc.ff->name[b->fn]);
		fprintf(f, ",\"%s\",\"#%02x%02x%02x\",%u]",
			root ? "process" : frames_kind_name(fc.ff->kind[b->fn]), rgb[0], rgb[1], rgb[2],
			(unsigned)b->samples);
	}
	fputs("]}}\n", f);
	fclose(f);
	flamechart_layout_free(&fc);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
}

/* The binary of a function the live session's frames name (NULL: none). */
static const char *module_of(const struct profile *p, const char *func)
{
	size_t n = frames_count(p->frames);
	for (uint32_t id = 1; id <= n; id++) {
		const struct frame *f = frames_get(p->frames, id);
		if (f && f->module[0] && f->module[0] != '[' && strcmp(f->name, func) == 0)
			return f->module;
	}
	return NULL;
}

/* GET /api/explore?func=NAME[&binary=PATH]: the function's structure
 * (explorer.h's JSON) with the samples the session holds per line and its
 * probes' counts. */
static void route_explore(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	const char *func = http_request_arg(rq, "func"), *binary = http_request_arg(rq, "binary");
	struct profile *p = liverun_profile(a->r);
	if (!func || !*func) {
		http_reply_error(rq, 400, "no function: /api/explore?func=NAME[&binary=PATH]");
		return;
	}
	if (!binary || !*binary)
		binary = module_of(p, func);
	if (!binary) {
		http_reply_error(rq, 400, "%s: no sample names its binary; give binary=PATH", func);
		return;
	}
	char err[1024];
	char *key = xasprintf("%s\n%s", binary, func);
	if (!a->explored_key || strcmp(a->explored_key, key)) {
		struct structure s;
		struct structure_query q = {.binary = binary, .func = func, .source_dir = a->source_dir};
		if (structure_build(&q, &s, err, sizeof(err))) {
			free(key);
			http_reply_error(rq, 400, "%s", err);
			return;
		}
		if (a->explored_key)
			structure_free(&a->explored);
		free(a->explored_key);
		a->explored = s;
		a->explored_key = key;
	} else {
		free(key);
	}
	const struct structure *sp = &a->explored;
	struct explorer_counts counts;
	explorer_counts_fill(&counts, p, sp, "live");
	struct explorer_options o = {.counts = &counts};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = membuf(&buf, &len);
	fputs("{\"ok\":true,\"data\":", f);
	explorer_json(f, sp, &o);
	fputs("}\n", f);
	fclose(f);
	explorer_counts_free(&counts);
	http_reply(rq, 200, "application/json", buf, len);
	free(buf);
}

/* ---- event streams ---- */

static struct snapshot *snapshot_new(char *text, size_t len)
{
	struct snapshot *sn = xcalloc(1, sizeof(*sn));
	char err[256];
	sn->text = text;
	sn->len = len;
	sn->v = json_parse(text, len, err, sizeof(err));
	static bool told;
	if (!sn->v && !told) { /* a bug of sonde's writers: say it once */
		errorf("serve: an event of ours is not JSON, so it is sent whole: %s", err);
		told = true;
	}
	sn->refs = 1;
	return sn;
}

static struct snapshot *snapshot_ref(struct snapshot *sn)
{
	sn->refs++;
	return sn;
}

static void snapshot_unref(struct snapshot *sn);

/* Lets go of the patch made to sn (and so of the snapshot it was made
 * from): sn is no longer the newest, no patch to it will be sent again. */
static void snapshot_forget_patch(struct snapshot *sn)
{
	struct snapshot *from = sn->from;
	sn->from = NULL;
	free(sn->patch);
	sn->patch = NULL;
	snapshot_unref(from);
}

static void snapshot_unref(struct snapshot *sn)
{
	if (!sn || --sn->refs)
		return;
	snapshot_forget_patch(sn);
	free(sn->text);
	json_free(sn->v);
	free(sn);
}

static void client_closed(void *arg)
{
	struct client *c = arg;
	struct webapi *a = c->a;
	if (c->prev)
		c->prev->next = c->next;
	else
		a->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	a->nclients--;
	snapshot_unref(c->status_sent);
	snapshot_unref(c->hot_sent);
	flamedelta_free(c->flame);
	free(c);
}

static void write_hot(FILE *f, const struct live_view *v)
{
	fprintf(f, "{\"total\":");
	json_write_number(f, v->total);
	fputs(",\"fractional\":", f);
	fputs(v->fractional ? "true" : "false", f);
	fputs(",\"functions\":[", f);
	for (size_t i = 0; i < v->nhot && i < WEBAPI_HOT_MAX && v->flame; i++) {
		const struct live_hot *h = &v->hot[i];
		char label[512];
		flame_frame_label(v->flame, h->frame, false, label, sizeof(label));
		const struct frame *fr = frames_get(v->flame->frames, h->frame);
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_write_string(f, label);
		fprintf(f, ",\"kind\":\"%s\",\"color\":",
			frames_kind_name(fr ? fr->kind : FRAME_USER));
		flamedelta_write_color(f, fr);
		fputs(",\"self\":", f);
		json_write_number(f, h->self);
		fputs(",\"total\":", f);
		json_write_number(f, h->total);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* Queues one event; a client that has no room misses it and is resent the
 * whole state once it has. */
static void send_event(struct client *c, const char *event, const char *data, size_t len)
{
	if (!c->missed && http_stream_send(c->st, event, data, len))
		c->missed = true;
}

/* Sends now (a status or the hot list) as what changed since the last
 * one of its kind the client got (*last): nothing when nothing did (a
 * session that ended, a recording), else the patch (jsondelta.h) as event
 * "EVENT_delta" when there is one shorter than the whole, else the whole as
 * event EVENT (the first, and after a missed event). */
static void send_changed(struct client *c, const char *event, struct snapshot *now,
			 struct snapshot **last)
{
	struct snapshot *prev = *last;
	if (prev == now || (prev && prev->len == now->len && memcmp(prev->text, now->text, now->len) == 0))
		goto sent;
	if (prev && prev->v && now->v && now->from != prev) {
		snapshot_forget_patch(now);
		now->plen = 0;
		FILE *f = membuf(&now->patch, &now->plen);
		now->changes = jsondelta_write(f, prev->v, now->v, patch_lists);
		fclose(f);
		now->from = snapshot_ref(prev);
	}
	if (prev && now->from == prev && now->changes > 0 && now->plen < now->len) {
		char name[32];
		snprintf(name, sizeof(name), "%s_delta", event);
		send_event(c, name, now->patch, now->plen);
	} else if (!prev || now->from != prev || now->changes) {
		send_event(c, event, now->text, now->len);
	}
sent:
	snapshot_unref(prev);
	*last = c->missed ? NULL : snapshot_ref(now);
}

static void send_to(struct client *c, const struct live_view *v, struct snapshot *status,
		    struct snapshot *hot, enum state state)
{
	if (c->missed) {
		/* Resend everything once its queue has room for a full state. */
		if (http_stream_queued(c->st) > HTTP_STREAM_MAX_QUEUE / 2)
			return;
		c->missed = false;
		c->state_sent = -1;
		snapshot_unref(c->status_sent);
		snapshot_unref(c->hot_sent);
		c->status_sent = c->hot_sent = NULL;
		flamedelta_reset(c->flame);
	}
	if (c->state_sent != (int)state) {
		send_event(c, "state", state_json[state], strlen(state_json[state]));
		c->state_sent = (int)state;
	}
	send_changed(c, "status", status, &c->status_sent);
	char *flame = NULL;
	size_t flen = 0;
	FILE *f = membuf(&flame, &flen);
	size_t changes = flamedelta_write(c->flame, v->flame, v->fractional, f);
	fclose(f);
	if (changes)
		send_event(c, "flame", flame, flen);
	free(flame);
	send_changed(c, "hot", hot, &c->hot_sent);
	if (c->missed)
		flamedelta_reset(c->flame); /* what it has is no base for a delta */
}

static void tick(void *arg)
{
	struct webapi *a = arg;
	loop_timer_in(a->lp, a->timer, a->interval_s);
	if (!a->clients)
		return;
	struct live_view *v = live_view_build(liverun_live(a->r), WEBAPI_HOT_MAX);
	live_view_add_probe_details(liverun_live(a->r), v);
	char *status = NULL, *hot = NULL;
	size_t slen = 0, hlen = 0;
	FILE *f = membuf(&status, &slen);
	live_view_write_json(f, v);
	fclose(f);
	f = membuf(&hot, &hlen);
	write_hot(f, v);
	fclose(f);
	enum state state = liverun_replay_path(a->r) ? STATE_RECORDING
			   : liverun_ended(a->r)    ? STATE_ENDED
						    : STATE_LIVE;
	struct snapshot *st = snapshot_new(status, slen), *hs = snapshot_new(hot, hlen);
	for (struct client *c = a->clients, *next; c; c = next) {
		next = c->next;
		send_to(c, v, st, hs, state);
	}
	/* the clients keep st and hs as their last, not the ones before */
	snapshot_forget_patch(st);
	snapshot_forget_patch(hs);
	snapshot_unref(st);
	snapshot_unref(hs);
	live_view_free(v);
}

static void route_events(void *arg, struct http_request *rq)
{
	struct webapi *a = arg;
	struct client *c = xcalloc(1, sizeof(*c));
	c->a = a;
	c->flame = flamedelta_new();
	c->state_sent = -1;
	c->next = a->clients;
	if (c->next)
		c->next->prev = c;
	a->clients = c;
	a->nclients++;
	c->st = http_reply_stream(rq, client_closed, c);
	webapi_refresh_now(a); /* its first state at once, not an interval later */
}

void webapi_refresh_now(struct webapi *a)
{
	loop_timer_in(a->lp, a->timer, 0);
}

struct webapi *webapi_new(struct liverun *r, struct http_server *s, double interval_s)
{
	struct webapi *a = xcalloc(1, sizeof(*a));
	a->r = r;
	a->s = s;
	a->lp = liverun_loop(r);
	a->interval_s = interval_s;
	a->timer = loop_timer_new(a->lp, tick, a);
	loop_timer_in(a->lp, a->timer, interval_s);
	http_server_route(s, "GET", "/api/status", route_status, a);
	http_server_route(s, "GET", "/api/threads", route_threads, a);
	http_server_route(s, "POST", "/api/command", route_command, a);
	http_server_route(s, "GET", "/api/flame", route_flame, a);
	http_server_route(s, "GET", "/api/events", route_events, a);
	http_server_route(s, "GET", "/api/band", route_band, a);
	http_server_route(s, "GET", "/api/sandwich", route_sandwich, a);
	http_server_route(s, "GET", "/api/flamechart", route_flamechart, a);
	http_server_route(s, "GET", "/api/explore", route_explore, a);
	http_server_route(s, "GET", "/api/heatmap", route_heatmap, a);
	http_server_route(s, "GET", "/api/range", route_range, a);
	return a;
}

void webapi_free(struct webapi *a)
{
	if (!a)
		return;
	loop_timer_cancel(a->lp, a->timer);
	/* http_server_close ended the streams, and so freed the clients. */
	if (a->explored_key)
		structure_free(&a->explored);
	free(a->explored_key);
	free(a);
}
