/* http: the server on a real loop and real sockets. Clients run in a thread
 * with blocking sockets while the test's thread steps the loop, as a session
 * does. Checked: the token (none 401, wrong 403) and the Host and Origin
 * checks; unknown paths 404, wrong methods 405, too large bodies 413, too
 * long URLs 414, huge request heads 431, and the server still answering
 * after them; every error one line of JSON; clients that trickle a request in (slowloris) do
 * not stall the loop, are bounded in number and time out, and are cut at
 * the request deadline however steadily they trickle; many event
 * streams each get every event, a client that reads nothing overflows its
 * own queue (counted) without holding back the others, and every stream's
 * close callback runs. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "http.h"
#include "httpkit.h"
#include "loop.h"
#include "util.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

static struct loop *lp;
static struct http_server *srv;
static int routed; /* requests that reached a route */

static void hello(void *arg, struct http_request *rq)
{
	(void)arg;
	routed++;
	http_reply(rq, 200, "text/plain", "hello\n", 6);
}

static void echo(void *arg, struct http_request *rq)
{
	(void)arg;
	routed++;
	size_t len;
	const char *body = http_request_body(rq, &len);
	http_reply(rq, 200, "text/plain", body, len);
}

static void open_server_deadline(unsigned idle_timeout_s, unsigned request_deadline_ms)
{
	char err[256] = "";
	lp = loop_new(err, sizeof(err));
	cr_assert_not_null(lp, "%s", err);
	struct http_options o = {.token = TOKEN,
				 .idle_timeout_s = idle_timeout_s,
				 .request_deadline_ms = request_deadline_ms};
	srv = http_server_open(lp, &o, err, sizeof(err));
	cr_assert_not_null(srv, "%s", err);
	cr_assert_gt(http_server_port(srv), 0);
	http_server_route(srv, "GET", "/hello", hello, NULL);
	http_server_route(srv, "POST", "/echo", echo, NULL);
	routed = 0;
}

static void open_server(unsigned idle_timeout_s)
{
	open_server_deadline(idle_timeout_s, 0);
}

static void close_server(void)
{
	http_server_close(srv);
	loop_free(lp);
}

static int connect_server(void)
{
	return httpkit_connect(http_server_port(srv));
}

/* One request to the test's server (httpkit.h). */
#define roundtrip(...) httpkit_roundtrip(lp, http_server_port(srv), __VA_ARGS__)

/* An error answer: the status, and one line of JSON with ok false. */
static void assert_error(struct http_exchange *x, int code, const char *words)
{
	cr_assert_eq(httpkit_status(x), code, "status %d, wanted %d: %s", httpkit_status(x), code,
		     x->answer);
	const char *b = httpkit_body(x);
	cr_assert(strncmp(b, "{\"ok\":false,\"error\":\"", 21) == 0, "body: %s", b);
	cr_assert(strstr(b, words), "'%s' not in %s", words, b);
	const char *nl = strchr(b, '\n');
	cr_assert(nl && nl[1] == 0, "one line: %s", b);
	httpkit_free(x);
}

#define HOST "Host: 127.0.0.1:PORT\r\n"
#define CLOSE "Connection: close\r\n"

Test(http, token)
{
	open_server(0);
	assert_error(roundtrip("GET /hello HTTP/1.1\r\n" HOST CLOSE "\r\n"), 401, "no token");
	assert_error(roundtrip("GET /hello?token=%s HTTP/1.1\r\n" HOST CLOSE "\r\n",
			       "ffffffffffffffffffffffffffffffff"),
		     403, "wrong token");
	assert_error(roundtrip("GET /hello?token=%s HTTP/1.1\r\n" HOST CLOSE "\r\n", "short"), 403,
		     "wrong token");
	cr_assert_eq(routed, 0);
	struct http_exchange *x = roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n");
	cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
	cr_assert_str_eq(httpkit_body(x), "hello\n");
	httpkit_free(x);
	x = roundtrip("GET /hello HTTP/1.1\r\n" HOST "X-Sonde-Token: " TOKEN "\r\n" CLOSE "\r\n");
	cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
	httpkit_free(x);
	cr_assert_eq(routed, 2);
	struct http_counts c;
	http_server_counts(srv, &c);
	cr_assert_eq(c.refused, 3);
	cr_assert_eq(c.requests, 5);
	close_server();
}

Test(http, host_and_origin)
{
	open_server(0);
	/* A DNS-rebinding page reaches 127.0.0.1 under its own host name. */
	assert_error(roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\nHost: evil.example:PORT\r\n" CLOSE
			       "\r\n"),
		     403, "is not this server");
	assert_error(roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" CLOSE "\r\n"), 403,
		     "is not this server");
	struct http_exchange *x = roundtrip("GET /hello?token=" TOKEN
				       " HTTP/1.1\r\nHost: localhost:PORT\r\n" CLOSE "\r\n");
	cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
	httpkit_free(x);
	/* POST: another origin's page is refused, the page's own origin and
	 * clients that send none (curl) are served. */
	assert_error(roundtrip("POST /echo?token=" TOKEN " HTTP/1.1\r\n" HOST
			       "Origin: http://evil.example\r\nContent-Length: 4\r\n" CLOSE
			       "\r\nping"),
		     403, "cross-origin");
	assert_error(roundtrip("POST /echo?token=" TOKEN " HTTP/1.1\r\n" HOST
			       "Origin: null\r\nContent-Length: 4\r\n" CLOSE "\r\nping"),
		     403, "cross-origin");
	x = roundtrip("POST /echo?token=" TOKEN " HTTP/1.1\r\n" HOST
		      "Origin: http://127.0.0.1:PORT\r\nContent-Length: 4\r\n" CLOSE "\r\nping");
	cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
	cr_assert_str_eq(httpkit_body(x), "ping");
	httpkit_free(x);
	x = roundtrip("POST /echo?token=" TOKEN " HTTP/1.1\r\n" HOST "Content-Length: 4\r\n" CLOSE
		      "\r\npong");
	cr_assert_str_eq(httpkit_body(x), "pong");
	/* No CORS: nothing invites another origin to read answers. */
	cr_assert_null(strcasestr(x->answer, "Access-Control-Allow"));
	httpkit_free(x);
	close_server();
}

Test(http, bad_requests)
{
	open_server(0);
	assert_error(roundtrip("GET /nope?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n"), 404,
		     "no such endpoint");
	assert_error(roundtrip("GET /../../etc/passwd?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE
			       "\r\n"),
		     404, "no such endpoint");
	assert_error(roundtrip("DELETE /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n"), 405,
		     "not allowed");
	assert_error(roundtrip("GET /echo?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n"), 405,
		     "not allowed");
	/* A body over the limit. */
	static char big[HTTP_MAX_BODY + 2];
	memset(big, 'x', sizeof(big) - 1);
	assert_error(roundtrip("POST /echo?token=" TOKEN " HTTP/1.1\r\n" HOST
			       "Content-Length: %zu\r\n" CLOSE "\r\n%s",
			       strlen(big), big),
		     413, "too large");
	/* Heads over the limit, just over and 3 times over: 431 and the JSON
	 * line (not libmicrohttpd's page), the server answering on. */
	static char huge[3 * HTTP_MAX_HEADER_BYTES];
	memset(huge, 'a', HTTP_MAX_HEADER_BYTES + 1024);
	assert_error(roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST "X-Big: %s\r\n" CLOSE
			       "\r\n",
			       huge),
		     431, "request head too large");
	memset(huge, 'a', sizeof(huge) - 1);
	assert_error(roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST "X-Big: %s\r\n" CLOSE
			       "\r\n",
			       huge),
		     431, "at most 65536");
	/* A URL over its limit (in a head under the head's): 414. */
	static char longurl[HTTP_MAX_URL_BYTES + 1];
	memset(longurl, 'u', sizeof(longurl) - 1);
	assert_error(roundtrip("GET /hello?token=" TOKEN "&pad=%s HTTP/1.1\r\n" HOST CLOSE "\r\n",
			       longurl),
		     414, "URL too long");
	cr_assert_eq(routed, 0);
	struct http_exchange *x = roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n");
	cr_assert_eq(httpkit_status(x), 200);
	httpkit_free(x);
	close_server();
}

/* Slowloris: many clients without the token each send a few bytes of a
 * request head and then nothing, more of them than there are places for
 * such connections. The loop keeps its pace; at most HTTP_MAX_UNPROVEN are
 * held: each newer one takes the place of the oldest, which is shut down at
 * once (evicted), none is told 503; a real client is served while they are
 * held (before this, 64 of them made every request answer 503); the held
 * ones are closed after the idle timeout; then a real client is served. */
enum { SLOW = HTTP_MAX_UNPROVEN + 16 };

struct slow_watch {
	int fds[SLOW];
	bool closed[SLOW];
	int nclosed, busy;
	uint64_t worst_step_ns;
	size_t most_held;
};

/* Steps the loop until `want` slow clients are closed (30 s at most),
 * noting the longest step and the most connections held. */
static void step_until_closed(struct slow_watch *w, int want)
{
	char err[256];
	for (uint64_t t_end = monotonic_ns() + 30000000000ull;
	     w->nclosed < want && monotonic_ns() < t_end;) {
		uint64_t t0 = monotonic_ns();
		cr_assert_eq(loop_step(lp, 20, err, sizeof(err)), 0, "%s", err);
		uint64_t took = monotonic_ns() - t0;
		w->worst_step_ns = took > w->worst_step_ns ? took : w->worst_step_ns;
		size_t held = http_server_connections(srv);
		w->most_held = held > w->most_held ? held : w->most_held;
		for (int i = 0; i < SLOW; i++) {
			char buf[512];
			if (w->closed[i])
				continue;
			ssize_t r = recv(w->fds[i], buf, sizeof(buf) - 1, MSG_DONTWAIT);
			if (r > 0) {
				buf[r] = 0;
				w->busy += strstr(buf, "HTTP/1.1 503") == buf;
				continue; /* the close comes after the answer */
			}
			if (r == 0 || errno != EAGAIN) {
				w->closed[i] = true;
				w->nclosed++;
			}
		}
	}
}

Test(http, slow_clients)
{
	open_server(1);
	static struct slow_watch w;
	char err[256];
	for (int i = 0; i < SLOW; i++) {
		w.fds[i] = connect_server();
		httpkit_send_all(w.fds[i], "GET /hel", 8);
		/* The server takes each in as it comes (a full backlog would
		 * block the next connect). */
		cr_assert_eq(loop_step(lp, 0, err, sizeof(err)), 0, "%s", err);
	}
	cr_assert_leq(http_server_connections(srv), (size_t)HTTP_MAX_UNPROVEN);
	/* Every place taken by them: a client with the token is served (it
	 * takes the oldest one's place, then proves itself). */
	struct http_exchange *during =
		roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n");
	cr_assert_eq(httpkit_status(during), 200, "%s", during->answer);
	httpkit_free(during);
	step_until_closed(&w, SLOW);
	cr_assert_eq(w.nclosed, SLOW, "%d of %d slow clients were closed", w.nclosed, SLOW);
	cr_assert_eq(w.busy, 0, "%d clients were told 503", w.busy);
	cr_assert_leq(w.most_held, HTTP_MAX_UNPROVEN, "%zu connections held at once", w.most_held);
	cr_assert_gt(w.most_held, HTTP_MAX_UNPROVEN / 2, "the slow clients were never held");
	/* A step waits at most its 20 ms, plus scheduling on a busy machine:
	 * never anything like a client's timeout. */
	cr_assert_lt(w.worst_step_ns, 500000000ull, "a loop step took %llu ms",
		     (unsigned long long)(w.worst_step_ns / 1000000));
	struct http_counts c;
	http_server_counts(srv, &c);
	cr_assert_eq(c.busy, 0);
	/* The 16 past the places, and one for the client served meanwhile. */
	cr_assert_eq(c.evicted, (uint64_t)(SLOW - HTTP_MAX_UNPROVEN + 1));
	struct http_exchange *x = roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n");
	cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
	httpkit_free(x);
	for (int i = 0; i < SLOW; i++)
		close(w.fds[i]);
	close_server();
}

/* ---- event streams ---- */

struct stream_route {
	struct http_stream *streams[64];
	bool gone[64]; /* its close callback ran (the pointer is gone then) */
	int open, closed;
};

struct slot {
	struct stream_route *r;
	int i;
};
static struct slot slots[64];

static void stream_closed(void *arg)
{
	struct slot *sl = arg;
	sl->r->gone[sl->i] = true;
	sl->r->closed++;
}

static void events(void *arg, struct http_request *rq)
{
	struct stream_route *r = arg;
	slots[r->open] = (struct slot){r, r->open};
	r->streams[r->open] = http_reply_stream(rq, stream_closed, &slots[r->open]);
	r->open++;
}

struct reader {
	int fd;
	char buf[1 << 16];
	size_t len;
};

static void read_some(struct reader *rd)
{
	for (;;) {
		ssize_t n = recv(rd->fd, rd->buf + rd->len, sizeof(rd->buf) - 1 - rd->len,
				 MSG_DONTWAIT);
		if (n <= 0)
			break;
		rd->len += (size_t)n;
	}
	rd->buf[rd->len] = 0;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

Test(http, many_streams)
{
	open_server(0);
	static struct stream_route r;
	http_server_route(srv, "GET", "/events", events, &r);
	enum { CLIENTS = 16 };
	static struct reader rd[CLIENTS + 1];
	char req[256];
	snprintf(req, sizeof(req),
		 "GET /events?token=" TOKEN " HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 (unsigned)http_server_port(srv));
	/* CLIENTS readers, and one client that never reads. */
	for (int i = 0; i <= CLIENTS; i++) {
		rd[i].fd = connect_server();
		if (i == CLIENTS) {
			int small = 4096;
			setsockopt(rd[i].fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		}
		httpkit_send_all(rd[i].fd, req, strlen(req));
	}
	char err[256];
	for (int i = 0; i < 400 && r.open < CLIENTS + 1; i++)
		cr_assert_eq(loop_step(lp, 5, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.open, CLIENTS + 1);
	/* 200 events of 64 KiB: more than the queue holds, so the client that
	 * does not read overflows; the readers take theirs as they come. */
	static char data[65536];
	memset(data, 'd', sizeof(data) - 1);
	int refused_last = 0;
	for (int e = 0; e < 200; e++) {
		for (int i = 0; i <= CLIENTS; i++) {
			int rc = http_stream_send(r.streams[i], "tick", data, strlen(data));
			if (i < CLIENTS)
				cr_assert_eq(rc, 0, "event %d to reader %d did not fit", e, i);
			else
				refused_last += rc != 0;
		}
		for (int k = 0; k < 50; k++) {
			cr_assert_eq(loop_step(lp, 0, err, sizeof(err)), 0, "%s", err);
			bool all_empty = true;
			for (int i = 0; i < CLIENTS; i++) {
				read_some(&rd[i]);
				rd[i].len = rd[i].len > 1024 ? 1024 : rd[i].len; /* keep the head */
				all_empty &= http_stream_queued(r.streams[i]) == 0;
			}
			if (all_empty)
				break;
		}
	}
	cr_assert_gt(refused_last, 0, "the client that reads nothing never overflowed");
	struct http_counts c;
	http_server_counts(srv, &c);
	cr_assert_eq(c.stream_overflows, (uint64_t)refused_last);
	cr_assert_leq(http_stream_queued(r.streams[CLIENTS]), HTTP_STREAM_MAX_QUEUE);
	/* What libmicrohttpd still buffers of the ticks comes first: a mark
	 * after them, and each reader skips to it. */
	static bool marked[CLIENTS];
	for (int i = 0; i < CLIENTS; i++)
		cr_assert_eq(http_stream_send(r.streams[i], "mark", "", 0), 0);
	int nmarked = 0;
	for (int k = 0; k < 4000 && nmarked < CLIENTS; k++) {
		cr_assert_eq(loop_step(lp, 2, err, sizeof(err)), 0, "%s", err);
		for (int i = 0; i < CLIENTS; i++) {
			if (marked[i])
				continue;
			read_some(&rd[i]);
			if (strstr(rd[i].buf, "event: mark\n")) {
				marked[i] = true;
				nmarked++;
			} else if (rd[i].len > 64) { /* keep a tail the mark may start in */
				memmove(rd[i].buf, rd[i].buf + rd[i].len - 64, 64);
				rd[i].len = 64;
			}
		}
	}
	cr_assert_eq(nmarked, CLIENTS, "%d readers got the mark", nmarked);
	/* Small events: every reader gets every one, whole. */
	for (int i = 0; i < CLIENTS; i++)
		rd[i].len = 0;
	for (int e = 0; e < 5; e++)
		for (int i = 0; i < CLIENTS; i++)
			http_stream_send(r.streams[i], "status", "{\"n\":1}\n{\"m\":2}", 15);
	for (int k = 0; k < 100; k++) {
		cr_assert_eq(loop_step(lp, 2, err, sizeof(err)), 0, "%s", err);
		for (int i = 0; i < CLIENTS; i++)
			read_some(&rd[i]);
	}
	for (int i = 0; i < CLIENTS; i++) {
		cr_assert_eq(count_of(rd[i].buf, "event: status\ndata: {\"n\":1}\ndata: {\"m\":2}\n\n"),
			     5, "reader %d: %s", i, rd[i].buf);
	}
	/* Ten readers go away: their streams close at the next events (a
	 * parked stream notices a closed client when it writes to it, as the
	 * session's events do every interval). */
	for (int i = 0; i < 10; i++)
		close(rd[i].fd);
	for (int k = 0; k < 100 && r.closed < 10; k++) {
		for (int i = 0; i < 10; i++)
			if (!r.gone[i])
				http_stream_send(r.streams[i], "status", "{}", 2);
		for (int j = 0; j < 5; j++)
			cr_assert_eq(loop_step(lp, 2, err, sizeof(err)), 0, "%s", err);
	}
	cr_assert_eq(r.closed, 10);
	for (int i = 10; i <= CLIENTS; i++)
		cr_assert(!r.gone[i], "stream %d closed though its client is there", i);
	/* Closing the server closes the rest. */
	http_server_close(srv);
	cr_assert_eq(r.closed, CLIENTS + 1);
	for (int i = 10; i <= CLIENTS; i++)
		close(rd[i].fd);
	loop_free(lp);
}

/* Trickling clients: each sends a byte of its request every second, never
 * silent long enough for the idle timeout. Each connection is shut down at
 * its request deadline (counted from its start) whether it trickles its head
 * or, after a whole head, its body; while they and an event stream are
 * held a client with the token is served all the same (they hold places
 * of connections without it), and once they are cut. The
 * event stream, established, is not cut: it still gets events after the
 * deadline. (Before the deadline existed trickling clients held their slots
 * for as long as they trickled.) */
enum { TRICKLERS = HTTP_MAX_CLIENTS - 1, DEADLINE_MS = 2000 };

struct trickle {
	int fds[TRICKLERS];
	uint64_t connected_ns[TRICKLERS];
	uint64_t closed_ns[TRICKLERS]; /* 0: still open */
	int sent[TRICKLERS];	       /* bytes trickled before it was closed */
	int answered[TRICKLERS];       /* connections that were sent anything */
	uint64_t give_up_ns;
	atomic_bool done;
};

static void *trickle_run(void *arg)
{
	struct trickle *t = arg;
	uint64_t next_byte = 0;
	for (;;) {
		uint64_t now = monotonic_ns();
		bool send_now = now >= next_byte, all_closed = true;
		if (send_now)
			next_byte = now + 1000000000ull;
		for (int i = 0; i < TRICKLERS; i++) {
			if (t->closed_ns[i])
				continue;
			char buf[256];
			ssize_t r = recv(t->fds[i], buf, sizeof(buf), MSG_DONTWAIT);
			if (r > 0)
				t->answered[i]++;
			bool closed = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
			if (!closed && send_now) {
				if (send(t->fds[i], "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
					t->sent[i]++;
				else
					closed = true;
			}
			if (closed)
				t->closed_ns[i] = now;
			else
				all_closed = false;
		}
		if (all_closed || now > t->give_up_ns)
			break;
		usleep(20000);
	}
	atomic_store(&t->done, true);
	return NULL;
}

Test(http, trickling_clients)
{
	open_server_deadline(0, DEADLINE_MS); /* the idle timeout is 15 s */
	static struct trickle t;
	static struct stream_route r;
	http_server_route(srv, "GET", "/events", events, &r);
	char err[256];
	char head[512];
	struct reader rd = {.fd = connect_server()};
	snprintf(head, sizeof(head),
		 "GET /events?token=" TOKEN " HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 (unsigned)http_server_port(srv));
	httpkit_send_all(rd.fd, head, strlen(head));
	for (int i = 0; i < 400 && r.open < 1; i++)
		cr_assert_eq(loop_step(lp, 5, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.open, 1, "the event stream did not start");
	snprintf(head, sizeof(head),
		 "POST /echo?token=" TOKEN " HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Content-Length: 1000\r\n\r\n",
		 (unsigned)http_server_port(srv));
	for (int i = 0; i < TRICKLERS; i++) {
		t.fds[i] = connect_server();
		t.connected_ns[i] = monotonic_ns();
		/* Half trickle their head (past its request line), half their
		 * body after a whole head. */
		const char *start = i % 2 ? head : "GET /hello?token=" TOKEN " HTTP/1.1\r\nX-Slow: ";
		httpkit_send_all(t.fds[i], start, strlen(start));
		cr_assert_eq(loop_step(lp, 0, err, sizeof(err)), 0, "%s", err);
		if (i == TRICKLERS - 2) {
			/* Every slot but one held: a client is served. */
			struct http_exchange *x = roundtrip("GET /hello?token=" TOKEN
						       " HTTP/1.1\r\n" HOST CLOSE "\r\n");
			cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
			httpkit_free(x);
		}
	}
	cr_assert_eq(http_server_connections(srv), (size_t)TRICKLERS + 1);
	/* Tricklers hold places of connections without the token, never one
	 * with it: a client is served. */
	struct http_exchange *y = roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n");
	cr_assert_eq(httpkit_status(y), 200, "%s", y->answer);
	httpkit_free(y);
	t.give_up_ns = t.connected_ns[0] + (DEADLINE_MS + 10000) * 1000000ull;
	pthread_t th;
	pthread_create(&th, NULL, trickle_run, &t);
	while (!atomic_load(&t.done))
		cr_assert_eq(loop_step(lp, 20, err, sizeof(err)), 0, "%s", err);
	pthread_join(th, NULL);
	int closed = 0;
	for (int i = 0; i < TRICKLERS; i++) {
		if (!t.closed_ns[i])
			continue;
		closed++;
		uint64_t held_ms = (t.closed_ns[i] - t.connected_ns[i]) / 1000000;
		/* Not before the deadline; after it, within the loop's and the
		 * client thread's pace on a busy machine. */
		cr_assert_geq(held_ms, DEADLINE_MS, "client %d cut after %llu ms", i,
			      (unsigned long long)held_ms);
		cr_assert_leq(held_ms, DEADLINE_MS + 3000, "client %d cut after %llu ms", i,
			      (unsigned long long)held_ms);
		cr_assert_geq(t.sent[i], 1, "client %d trickled %d bytes", i, t.sent[i]);
		cr_assert_eq(t.answered[i], 0, "client %d was sent an answer", i);
	}
	cr_assert_eq(closed, TRICKLERS, "%d of %d trickling clients were cut at the deadline",
		     closed, TRICKLERS);
	struct http_counts c;
	http_server_counts(srv, &c);
	cr_assert_eq(c.timed_out, (uint64_t)TRICKLERS);
	cr_assert_eq(routed, 2, "a trickled request reached its route"); /* the two served */
	struct http_exchange *x = roundtrip("GET /hello?token=" TOKEN " HTTP/1.1\r\n" HOST CLOSE "\r\n");
	cr_assert_eq(httpkit_status(x), 200, "%s", x->answer);
	httpkit_free(x);
	/* The stream outlived the deadline and still carries events. */
	cr_assert(!r.gone[0], "the event stream was closed");
	cr_assert_eq(http_stream_send(r.streams[0], "status", "{}", 2), 0);
	for (int k = 0; k < 200 && !strstr(rd.buf, "event: status\ndata: {}\n\n"); k++) {
		cr_assert_eq(loop_step(lp, 5, err, sizeof(err)), 0, "%s", err);
		read_some(&rd);
	}
	cr_assert(strstr(rd.buf, "event: status\ndata: {}\n\n"), "stream: %s", rd.buf);
	for (int i = 0; i < TRICKLERS; i++)
		close(t.fds[i]);
	close_server();
	close(rd.fd);
}

Test(http, token_new)
{
	char a[HTTP_TOKEN_HEX + 1], b[HTTP_TOKEN_HEX + 1], err[128];
	cr_assert_eq(http_token_new(a, sizeof(a), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(http_token_new(b, sizeof(b), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(strlen(a), HTTP_TOKEN_HEX);
	cr_assert_eq(strspn(a, "0123456789abcdef"), HTTP_TOKEN_HEX);
	cr_assert_str_neq(a, b);
}

Test(http, bad_listen)
{
	char err[256] = "";
	lp = loop_new(err, sizeof(err));
	struct http_options o = {.token = TOKEN, .listen = "not-an-address"};
	cr_assert_null(http_server_open(lp, &o, err, sizeof(err)));
	cr_assert(strstr(err, "bad listen address"), "%s", err);
	o.listen = NULL;
	struct http_server *a = http_server_open(lp, &o, err, sizeof(err));
	cr_assert_not_null(a, "%s", err);
	o.port = http_server_port(a);
	cr_assert_null(http_server_open(lp, &o, err, sizeof(err)));
	cr_assert(strstr(err, "in use"), "%s", err);
	http_server_close(a);
	loop_free(lp);
}
