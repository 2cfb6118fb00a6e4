/* liverun — a live session on its event loop. The contract is in liverun.h. */
#include "liverun.h"

#include <stdlib.h>

#include "ctl.h"
#include "util.h"

struct liverun {
	struct session *s;
	struct live *live;
	struct loop *loop;
	struct ctl_server *ctl;
	struct liverun_options o;
	struct liverun_display display;
	int display_timer; /* -1 until a display is set */
};

struct live *liverun_live(struct liverun *r)
{
	return r->live;
}

struct loop *liverun_loop(struct liverun *r)
{
	return r->loop;
}

bool liverun_ended(const struct liverun *r)
{
	return session_ended(r->s);
}

struct profile *liverun_profile(struct liverun *r)
{
	return session_profile(r->s);
}

const char *liverun_replay_path(const struct liverun *r)
{
	return session_replay_path(r->s);
}

const char *liverun_ctl_path(const struct liverun *r)
{
	return r->ctl ? ctl_server_path(r->ctl) : NULL;
}

int liverun_exec(struct liverun *r, const char *line, FILE *out)
{
	return live_exec(r->live, line, out);
}

/* A control request: the answer text, and for `status` the state as data. */
static int ctl_exec(void *arg, const char *line, FILE *out, FILE *data)
{
	struct liverun *r = arg;
	return live_exec_data(r->live, line, out, data);
}

char *liverun_answer(struct liverun *r, const char *line, size_t linelen, size_t *len, bool *ok)
{
	return ctl_answer(ctl_exec, r, line, linelen, len, ok);
}

/* After the session took in the ring buffer: the live state takes in what
 * arrived. */
static void on_wake(void *arg)
{
	struct liverun *r = arg;
	if (!session_ended(r->s))
		live_update(r->live);
}

static void on_end(struct session *s, void *arg, enum session_end_reason why)
{
	struct liverun *r = arg;
	if (why == SESSION_TARGETS_EXITED && r->o.stay_after_exit && !session_ended(s)) {
		session_end(s);
		live_update(r->live); /* the final drain; the views keep still from here */
		liverun_refresh_now(r);
		return;
	}
	loop_stop(r->loop);
}

static void on_display(void *arg)
{
	struct liverun *r = arg;
	const struct liverun_display *d = &r->display;
	if (!d->paused || !d->paused(d->arg))
		d->show(d->arg, live_view_build(r->live, d->rows));
	loop_timer_in(r->loop, r->display_timer, r->display.interval(r->display.arg));
}

void liverun_set_display(struct liverun *r, const struct liverun_display *d)
{
	r->display = *d;
	if (r->display_timer < 0)
		r->display_timer = loop_timer_new(r->loop, on_display, r);
	loop_timer_in(r->loop, r->display_timer, d->interval(d->arg));
}

void liverun_refresh_now(struct liverun *r)
{
	if (r->display_timer >= 0)
		loop_timer_in(r->loop, r->display_timer, 0);
}

void liverun_stop(struct liverun *r)
{
	loop_stop(r->loop);
}

struct liverun *liverun_new(struct session *s, const struct liverun_options *o, char *err,
			    size_t errlen)
{
	struct live *live = live_new(s, &live_session_source, &o->live, err, errlen);
	if (!live)
		return NULL;
	struct liverun *r = xcalloc(1, sizeof(*r));
	r->s = s;
	r->live = live;
	r->loop = session_loop(s);
	r->o = *o;
	r->display_timer = -1;
	loop_on_wake(r->loop, on_wake, r);
	session_on_end(s, on_end, r);
	if (session_replay_path(s))
		live_update(live); /* a recording: all of it, at once */
	if (o->no_ctl)
		return r;
	char why[512];
	const struct session_options *so = session_options(s);
	r->ctl = ctl_server_open(why, sizeof(why));
	if (r->ctl && ctl_server_attach(r->ctl, r->loop, ctl_exec, r, why, sizeof(why))) {
		ctl_server_close(r->ctl);
		r->ctl = NULL;
	}
	if (!r->ctl && so->note) {
		char *msg = xasprintf("warning: no control socket, so sonde ctl cannot reach this "
				      "session: %s",
				      why);
		so->note(so->note_arg, msg);
		free(msg);
	}
	return r;
}

int liverun_run(struct liverun *r, char *err, size_t errlen)
{
	int rc = session_ready(r->s, err, errlen);
	if (rc == 0)
		rc = loop_run(r->loop, err, errlen);
	session_end(r->s);
	ctl_server_close(r->ctl);
	r->ctl = NULL;
	return rc;
}

void liverun_free(struct liverun *r)
{
	if (!r)
		return;
	ctl_server_close(r->ctl);
	live_free(r->live);
	free(r);
}
