/* loop — the one event loop of a session. The contract is in loop.h. */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "errbuf.h"
#include "util.h"

#define LOOP_MAX_EVENTS 64

static const int caught_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define NCAUGHT (sizeof(caught_signals) / sizeof(caught_signals[0]))

/* A watched fd. Events carry the serial, not the fd: an fd removed (and its
 * number reused) during a step is never mistaken for its successor. */
struct watch {
	int fd;
	uint64_t serial;
	loop_fn fn;
	void *arg;
};

struct timer {
	loop_fn fn;
	void *arg;
	uint64_t due_ns;
	bool armed;
};

struct hook {
	loop_fn fn;
	void *arg;
};

struct loop {
	int epfd;
	struct watch *watches;
	size_t nwatches, watches_cap;
	uint64_t next_serial;
	struct timer *timers;
	size_t ntimers, timers_cap;
	struct hook *hooks;
	size_t nhooks, hooks_cap;
	bool stopped;
	bool failed;
	char failure[512];
	/* Signals (loop_catch_signals). */
	int sig_pipe[2];
	loop_fn sig_fn;
	void *sig_arg;
	struct sigaction old[NCAUGHT];
};

/* The self-pipe's write end, for the signal handler. */
static volatile int signal_pipe_w = -1;
/* A caught signal whose callback has not run yet (loop_signal_pending). */
static volatile sig_atomic_t signal_seen;

static void on_signal(int sig)
{
	(void)sig;
	int saved = errno;
	signal_seen = 1;
	char b = 1;
	if (signal_pipe_w >= 0 && write(signal_pipe_w, &b, 1) < 0) {
		/* Full: a byte already waits, which is all the loop needs. */
	}
	errno = saved;
}

struct loop *loop_new(char *err, size_t errlen)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		errbuf_set(err, errlen, "cannot create the event loop (epoll): %s", strerror(errno));
		return NULL;
	}
	struct loop *lp = xcalloc(1, sizeof(*lp));
	lp->epfd = epfd;
	lp->sig_pipe[0] = lp->sig_pipe[1] = -1;
	return lp;
}

void loop_free(struct loop *lp)
{
	if (!lp)
		return;
	if (lp->sig_pipe[0] >= 0) {
		for (size_t i = 0; i < NCAUGHT; i++)
			sigaction(caught_signals[i], &lp->old[i], NULL);
		signal_pipe_w = -1;
		close(lp->sig_pipe[0]);
		close(lp->sig_pipe[1]);
	}
	close(lp->epfd);
	free(lp->watches);
	free(lp->timers);
	free(lp->hooks);
	free(lp);
}

static struct watch *find_watch(struct loop *lp, int fd)
{
	for (size_t i = 0; i < lp->nwatches; i++)
		if (lp->watches[i].fd == fd)
			return &lp->watches[i];
	return NULL;
}

int loop_add_fd(struct loop *lp, int fd, loop_fn fn, void *arg, char *err, size_t errlen)
{
	if (find_watch(lp, fd)) {
		errbuf_set(err, errlen, "the event loop already watches fd %d", fd);
		return -1;
	}
	uint64_t serial = ++lp->next_serial;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = serial};
	if (epoll_ctl(lp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		errbuf_set(err, errlen, "cannot watch fd %d in the event loop: %s", fd,
			   strerror(errno));
		return -1;
	}
	grow_array((void **)&lp->watches, &lp->watches_cap, lp->nwatches + 1, sizeof(*lp->watches));
	lp->watches[lp->nwatches++] = (struct watch){fd, serial, fn, arg};
	return 0;
}

void loop_remove_fd(struct loop *lp, int fd)
{
	struct watch *w = find_watch(lp, fd);
	if (!w)
		return;
	epoll_ctl(lp->epfd, EPOLL_CTL_DEL, fd, NULL);
	*w = lp->watches[--lp->nwatches];
}

void loop_on_wake(struct loop *lp, loop_fn fn, void *arg)
{
	grow_array((void **)&lp->hooks, &lp->hooks_cap, lp->nhooks + 1, sizeof(*lp->hooks));
	lp->hooks[lp->nhooks++] = (struct hook){fn, arg};
}

int loop_timer_new(struct loop *lp, loop_fn fn, void *arg)
{
	grow_array((void **)&lp->timers, &lp->timers_cap, lp->ntimers + 1, sizeof(*lp->timers));
	lp->timers[lp->ntimers] = (struct timer){fn, arg, 0, false};
	return (int)lp->ntimers++;
}

void loop_timer_at(struct loop *lp, int id, uint64_t due_ns)
{
	if (id < 0 || (size_t)id >= lp->ntimers)
		return;
	lp->timers[id].due_ns = due_ns;
	lp->timers[id].armed = true;
}

void loop_timer_in(struct loop *lp, int id, double seconds)
{
	uint64_t now = monotonic_ns();
	loop_timer_at(lp, id, seconds > 0 ? now + (uint64_t)(seconds * 1e9) : now);
}

void loop_timer_cancel(struct loop *lp, int id)
{
	if (id >= 0 && (size_t)id < lp->ntimers)
		lp->timers[id].armed = false;
}

static void drain_signals(void *arg)
{
	struct loop *lp = arg;
	char buf[64];
	bool any = false;
	signal_seen = 0;
	while (read(lp->sig_pipe[0], buf, sizeof(buf)) > 0)
		any = true;
	if (any && lp->sig_fn)
		lp->sig_fn(lp->sig_arg);
}

int loop_catch_signals(struct loop *lp, loop_fn fn, void *arg, char *err, size_t errlen)
{
	if (lp->sig_pipe[0] < 0) {
		if (pipe2(lp->sig_pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
			errbuf_set(err, errlen, "cannot create the signal pipe: %s", strerror(errno));
			return -1;
		}
		if (loop_add_fd(lp, lp->sig_pipe[0], drain_signals, lp, err, errlen)) {
			close(lp->sig_pipe[0]);
			close(lp->sig_pipe[1]);
			lp->sig_pipe[0] = lp->sig_pipe[1] = -1;
			return -1;
		}
		signal_pipe_w = lp->sig_pipe[1];
		/* No SA_RESTART: a blocking call in progress returns, and the
		 * loop gets to the signal at once. */
		struct sigaction sa = {.sa_handler = on_signal};
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < NCAUGHT; i++)
			sigaction(caught_signals[i], &sa, &lp->old[i]);
	}
	lp->sig_fn = fn;
	lp->sig_arg = arg;
	return 0;
}

bool loop_signal_pending(const struct loop *lp)
{
	return lp && lp->sig_pipe[0] >= 0 && signal_seen;
}

void loop_stop(struct loop *lp)
{
	lp->stopped = true;
}

bool loop_stopped(const struct loop *lp)
{
	return lp->stopped;
}

void loop_fail(struct loop *lp, const char *fmt, ...)
{
	if (!lp->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(lp->failure, sizeof(lp->failure), fmt, ap);
		va_end(ap);
		lp->failed = true;
	}
	lp->stopped = true;
}

/* How long a wait may last: up to the first armed timer, at most max_ms. */
static int wait_ms(const struct loop *lp, int max_ms)
{
	uint64_t now = monotonic_ns();
	int ms = max_ms;
	for (size_t i = 0; i < lp->ntimers; i++) {
		const struct timer *t = &lp->timers[i];
		if (!t->armed)
			continue;
		/* Rounded up: waking before the timer is due would only spin. */
		uint64_t left = t->due_ns > now ? (t->due_ns - now + 999999) / 1000000 : 0;
		if (left > INT32_MAX)
			left = INT32_MAX;
		if (ms < 0 || (int)left < ms)
			ms = (int)left;
	}
	return ms;
}

static void run_timers(struct loop *lp)
{
	uint64_t now = monotonic_ns();
	/* Timers made by callbacks wait for the next step. */
	size_t n = lp->ntimers;
	for (size_t i = 0; i < n; i++) {
		struct timer *t = &lp->timers[i];
		if (!t->armed || t->due_ns > now)
			continue;
		t->armed = false;
		t->fn(t->arg);
	}
}

static void run_ready(struct loop *lp, const uint64_t *serials, int n)
{
	for (int i = 0; i < n; i++) {
		struct watch *w = NULL;
		for (size_t k = 0; k < lp->nwatches && !w; k++)
			if (lp->watches[k].serial == serials[i])
				w = &lp->watches[k];
		if (w && w->fn)
			w->fn(w->arg);
	}
}

int loop_step(struct loop *lp, int max_wait_ms, char *err, size_t errlen)
{
	struct epoll_event ev[LOOP_MAX_EVENTS];
	int n = epoll_wait(lp->epfd, ev, LOOP_MAX_EVENTS, wait_ms(lp, max_wait_ms));
	if (n < 0) {
		if (errno != EINTR) {
			errbuf_set(err, errlen, "waiting in the event loop failed: %s", strerror(errno));
			return -1;
		}
		n = 0; /* a signal: a wake like any other */
	}
	uint64_t serials[LOOP_MAX_EVENTS];
	for (int i = 0; i < n; i++)
		serials[i] = ev[i].data.u64;
	/* Hooks added by hooks run from the next step. */
	size_t nhooks = lp->nhooks;
	for (size_t i = 0; i < nhooks; i++)
		lp->hooks[i].fn(lp->hooks[i].arg);
	/* A step runs to its end even when a callback stopped the loop: what
	 * was due when the run ended (a refresh, a request) is still done. */
	run_ready(lp, serials, n);
	run_timers(lp);
	if (lp->failed) {
		errbuf_set(err, errlen, "%s", lp->failure);
		return -1;
	}
	return 0;
}

int loop_run(struct loop *lp, char *err, size_t errlen)
{
	lp->stopped = false;
	while (!lp->stopped)
		if (loop_step(lp, -1, err, errlen))
			return -1;
	return 0;
}
