/* http — the HTTP server on the session's loop. The contract is in http.h.
 *
 * libmicrohttpd runs in its external-epoll mode: its epoll fd is one fd of
 * the session's loop, MHD_run is called when it is readable and when the
 * timer MHD_get_timeout asks for is due. A stream's connection is suspended
 * while its queue is empty (so MHD does not poll it) and resumed when an
 * event is queued. */
#define _GNU_SOURCE
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errbuf.h"
#include "json.h"
#include "util.h"

#define HTTP_MAX_ROUTES 32
/* libmicrohttpd's memory per connection (its pool: the request head, then
 * the buffers): room for heads well over HTTP_MAX_HEADER_BYTES, so that
 * they reach on_request and are answered 431 with the JSON line. Only a
 * head past what the pool holds gets libmicrohttpd's own 431 page. Pages
 * of the pool are touched only as bytes come in. */
#define HTTP_CONNECTION_MEMORY (4 * HTTP_MAX_HEADER_BYTES)

struct route {
	char method[8];
	char path[64];
	http_handler_fn fn;
	void *arg;
};

struct http_stream {
	struct http_server *s;
	struct MHD_Connection *conn;
	char *buf; /* queued bytes: [head, len) not yet taken */
	size_t head, len, cap;
	bool suspended;
	bool closing; /* the server is closing: end the stream */
	void (*closed)(void *arg);
	void *arg;
	struct http_stream *prev, *next;
};

/* Every connection libmicrohttpd holds at once: those with the token and
 * without, and some being closed. */
#define HTTP_CONNECTION_LIMIT (HTTP_MAX_CLIENTS + HTTP_MAX_UNPROVEN + 16)

/* One connection, from accept to close: the deadline for its request. */
struct http_conn {
	struct http_server *s;
	int fd;
	uint64_t deadline_ns; /* its request must be dispatched by then; 0: none
			       * (dispatched, or being answered) */
	bool proven;          /* a request of it carried the session's token */
	bool evicted;         /* shut down for a newer one, not closed yet */
	struct http_conn *prev, *next; /* newest first */
};

struct http_request {
	struct http_server *s;
	struct MHD_Connection *conn;
	size_t url_len; /* the URL as sent: path and query */
	bool started;	/* on_request has seen it */
	char method[8];
	char *body;
	size_t body_len;
	bool body_too_large;
	bool answered;
};

struct http_server {
	struct loop *lp;
	struct MHD_Daemon *d;
	int epoll_fd;
	int listen_fd;
	int timer;
	int deadline_timer;	  /* due at the earliest connection deadline */
	uint64_t request_deadline_ns; /* a request's time to come in whole */
	struct http_conn *conns;  /* every open connection */
	uint16_t port;
	bool loopback;			 /* listening on a loopback address: Host must name it */
	char addr[INET6_ADDRSTRLEN + 2]; /* as it appears in a Host header ([v6]) */
	char token[HTTP_TOKEN_HEX + 1];
	struct route routes[HTTP_MAX_ROUTES];
	size_t nroutes;
	struct http_stream *streams; /* every open stream */
	struct http_counts counts;
};

int http_token_new(char *buf, size_t size, char *err, size_t errlen)
{
	unsigned char raw[HTTP_TOKEN_HEX / 2];
	if (size < HTTP_TOKEN_HEX + 1)
		return errbuf_set(err, errlen, "token buffer too small");
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return errbuf_set(err, errlen, "cannot make a session token: getrandom: %s",
				  strerror(errno));
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* Runs what libmicrohttpd has to do now and arms the timer for what it
 * will have to do next. */
static void run_mhd(struct http_server *s)
{
	MHD_run(s->d);
	MHD_UNSIGNED_LONG_LONG ms;
	if (MHD_get_timeout(s->d, &ms) == MHD_YES)
		loop_timer_in(s->lp, s->timer, (double)ms / 1000.0);
	else
		loop_timer_cancel(s->lp, s->timer);
}

static void on_ready(void *arg)
{
	run_mhd(arg);
}

/* ---- answers ---- */

static void queue(struct http_request *rq, unsigned status, struct MHD_Response *resp)
{
	if (!resp)
		return; /* out of memory: the request ends without an answer */
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_queue_response(rq->conn, status, resp);
	MHD_destroy_response(resp);
	rq->answered = true;
	rq->s->counts.requests++;
	if (status == 401 || status == 403)
		rq->s->counts.refused++;
}

void http_reply(struct http_request *rq, unsigned status, const char *content_type,
		const void *body, size_t len)
{
	if (rq->answered)
		return;
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (resp)
		MHD_add_response_header(resp, "Content-Type", content_type);
	queue(rq, status, resp);
}

void http_reply_error(struct http_request *rq, unsigned status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (f) {
		fputs("{\"ok\":false,\"error\":", f);
		json_write_string(f, msg ? msg : "out of memory");
		fputs("}\n", f);
		if (fclose(f) == 0)
			http_reply(rq, status, "application/json", body, len);
	}
	free(body);
	free(msg);
}

/* ---- streams ---- */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct http_stream *st = cls;
	if (st->closing)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (st->head == st->len) {
		/* Nothing to send: park the connection until an event comes. */
		st->suspended = true;
		MHD_suspend_connection(st->conn);
		return 0;
	}
	size_t n = st->len - st->head < max ? st->len - st->head : max;
	memcpy(buf, st->buf + st->head, n);
	st->head += n;
	if (st->head == st->len)
		st->head = st->len = 0;
	return (ssize_t)n;
}

static void stream_unlink(struct http_stream *st)
{
	if (st->prev)
		st->prev->next = st->next;
	else if (st->s->streams == st)
		st->s->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	st->prev = st->next = NULL;
}

/* The response is gone (client closed, error, or the server stopping). */
static void stream_free(void *cls)
{
	struct http_stream *st = cls;
	stream_unlink(st);
	if (st->closed)
		st->closed(st->arg);
	free(st->buf);
	free(st);
}

static void stream_wake(struct http_stream *st)
{
	if (!st->suspended)
		return;
	st->suspended = false;
	MHD_resume_connection(st->conn);
	/* MHD takes resumed connections at its next run. */
	loop_timer_in(st->s->lp, st->s->timer, 0);
}

struct http_stream *http_reply_stream(struct http_request *rq, void (*closed)(void *arg), void *arg)
{
	struct http_stream *st = xcalloc(1, sizeof(*st));
	st->s = rq->s;
	st->conn = rq->conn;
	st->closed = closed;
	st->arg = arg;
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
								      stream_read, st, stream_free);
	if (!resp) {
		errorf("out of memory for an event stream");
		exit(1); /* as every allocation that fails (util.h) */
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	st->next = rq->s->streams;
	if (st->next)
		st->next->prev = st;
	rq->s->streams = st;
	queue(rq, 200, resp);
	return st;
}

size_t http_stream_queued(const struct http_stream *st)
{
	return st->len - st->head;
}

int http_stream_send(struct http_stream *st, const char *event, const char *data, size_t len)
{
	/* "event: E\n", then "data: LINE\n" per line of data, then "\n". */
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += data[i] == '\n';
	size_t need = 8 + strlen(event) + len + lines * 7 + 1;
	if (st->len - st->head + need > HTTP_STREAM_MAX_QUEUE) {
		st->s->counts.stream_overflows++;
		return -1;
	}
	if (st->head > 0) {
		memmove(st->buf, st->buf + st->head, st->len - st->head);
		st->len -= st->head;
		st->head = 0;
	}
	if (st->len + need > st->cap) {
		st->cap = (st->len + need) * 2;
		st->buf = xrealloc(st->buf, st->cap);
	}
	char *p = st->buf + st->len;
	p += sprintf(p, "event: %s\n", event);
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || data[i] == '\n') {
			memcpy(p, "data: ", 6);
			p += 6;
			memcpy(p, data + start, i - start);
			p += i - start;
			*p++ = '\n';
			start = i + 1;
		}
	}
	*p++ = '\n';
	st->len = (size_t)(p - st->buf);
	stream_wake(st);
	return 0;
}

/* ---- requests ---- */

const char *http_request_arg(struct http_request *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_request_body(const struct http_request *rq, size_t *len)
{
	*len = rq->body_len;
	return rq->body ? rq->body : "";
}

/* Equal strings in time that does not depend on where they differ. */
static bool token_equal(const char *given, const char *token)
{
	size_t n = strlen(token);
	if (strlen(given) != n)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(given[i] ^ token[i]);
	return diff == 0;
}

/* Host names the server itself: for a loopback listener, its address or
 * localhost with its port. */
static bool host_allowed(struct http_server *s, const char *host)
{
	if (!s->loopback)
		return true;
	if (!host)
		return false;
	char want[96];
	const char *names[] = {s->addr, "localhost", "127.0.0.1", "[::1]"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "%s:%u", names[i], (unsigned)s->port);
		if (strcasecmp(host, want) == 0)
			return true;
	}
	return false;
}

/* A state-changing request from a page of another origin is refused: the
 * browser says where the page came from in Origin. */
static bool origin_allowed(struct http_request *rq, const char *host)
{
	const char *origin =
		MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
	if (!origin)
		return true; /* not a browser's cross-origin request (curl, sonde's tests)
			      */
	if (!host)
		return false;
	char want[160];
	snprintf(want, sizeof(want), "http://%s", host);
	return strcasecmp(origin, want) == 0;
}

static struct http_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static size_t count_proven(const struct http_server *s, bool proven)
{
	size_t n = 0;
	for (const struct http_conn *c = s->conns; c; c = c->next)
		n += !c->evicted && c->proven == proven;
	return n;
}

/* The connection showed the token: it takes one of HTTP_MAX_CLIENTS
 * places, if one is free (false: none is). */
static bool prove_connection(struct http_server *s, struct MHD_Connection *conn)
{
	struct http_conn *c = conn_of(conn);
	if (!c || c->proven)
		return true;
	if (count_proven(s, true) >= HTTP_MAX_CLIENTS) {
		s->counts.busy++;
		return false;
	}
	c->proven = true;
	return true;
}

/* Room for a new connection among those that have not shown the token:
 * the oldest of them is shut down when HTTP_MAX_UNPROVEN are open
 * (libmicrohttpd closes it at its next run). */
static void make_room_unproven(struct http_server *s)
{
	if (count_proven(s, false) < HTTP_MAX_UNPROVEN)
		return;
	struct http_conn *oldest = NULL;
	for (struct http_conn *c = s->conns; c; c = c->next)
		if (!c->proven && !c->evicted)
			oldest = c;
	if (!oldest)
		return;
	if (oldest->fd >= 0)
		shutdown(oldest->fd, SHUT_RDWR);
	oldest->evicted = true;
	oldest->deadline_ns = 0;
	s->counts.evicted++;
}

static void dispatch(struct http_server *s, struct http_request *rq, const char *url)
{
	const char *host =
		MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!host_allowed(s, host)) {
		http_reply_error(
			rq, 403,
			"Host '%s' is not this server: use http://127.0.0.1:%u/ as printed",
			host ? host : "", (unsigned)s->port);
		return;
	}
	const char *token = http_request_arg(rq, "token");
	if (!token)
		token = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "X-Sonde-Token");
	if (!token) {
		http_reply_error(
			rq, 401,
			"no token: open the URL sonde serve printed (it ends in ?token=...)");
		return;
	}
	if (!token_equal(token, s->token)) {
		http_reply_error(rq, 403,
				 "wrong token: open the URL this sonde serve printed (each "
				 "session has its own)");
		return;
	}
	if (!prove_connection(s, rq->conn)) {
		http_reply_error(rq, 503, "too many connections to this session: try again");
		return;
	}
	bool path_known = false;
	for (size_t i = 0; i < s->nroutes; i++) {
		struct route *r = &s->routes[i];
		if (strcmp(r->path, url) != 0)
			continue;
		path_known = true;
		if (strcmp(r->method, rq->method) != 0)
			continue;
		if (strcmp(r->method, "POST") == 0 && !origin_allowed(rq, host)) {
			http_reply_error(rq, 403,
					 "cross-origin request refused: steer the session from its "
					 "own page");
			return;
		}
		if (rq->body_too_large) {
			http_reply_error(rq, 413, "request body too large: at most %d bytes",
					 HTTP_MAX_BODY);
			return;
		}
		r->fn(r->arg, rq);
		if (!rq->answered)
			http_reply_error(rq, 500, "no answer for %s %s", rq->method, url);
		return;
	}
	if (path_known)
		http_reply_error(rq, 405, "%s is not allowed on %s", rq->method, url);
	else
		http_reply_error(rq, 404, "no such endpoint: %s (see docs/http-api.md)", url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct http_server *s = cls;
	struct http_request *rq = *con_cls; /* made by on_uri */
	if (!rq->started) {
		/* The head is in: answer one over the limits at once. */
		rq->started = true;
		snprintf(rq->method, sizeof(rq->method), "%s", method);
		const union MHD_ConnectionInfo *hi =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
		size_t head = hi ? hi->header_size : 0;
		if (rq->url_len > HTTP_MAX_URL_BYTES)
			http_reply_error(rq, 414, "URL too long: %zu bytes, at most %d",
					 rq->url_len, HTTP_MAX_URL_BYTES);
		else if (head > HTTP_MAX_HEADER_BYTES)
			http_reply_error(rq, 431, "request head too large: %zu bytes, at most %d",
					 head, HTTP_MAX_HEADER_BYTES);
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body_len + *upload_size > HTTP_MAX_BODY) {
			rq->body_too_large = true;
		} else {
			rq->body = xrealloc(rq->body, rq->body_len + *upload_size + 1);
			memcpy(rq->body + rq->body_len, upload, *upload_size);
			rq->body_len += *upload_size;
			rq->body[rq->body_len] = 0;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->answered)
		return MHD_YES;
	/* The request came in whole: no deadline while it is answered (an
	 * event stream is answered for as long as it lasts). */
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci && ci->socket_context)
		((struct http_conn *)ci->socket_context)->deadline_ns = 0;
	dispatch(s, rq, url);
	return rq->answered ? MHD_YES : MHD_NO;
}

/* A request's state, made as soon as its request line is read (the URL as
 * sent: its length is checked against HTTP_MAX_URL_BYTES); freed by
 * on_completed. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct http_request *rq = xcalloc(1, sizeof(*rq));
	rq->s = cls;
	rq->conn = conn;
	rq->url_len = strlen(uri);
	return rq;
}

/* ---- request deadlines ---- */

/* Arms the deadline timer for the earliest deadline of any connection. */
static void arm_deadlines(struct http_server *s)
{
	uint64_t first = 0;
	for (struct http_conn *c = s->conns; c; c = c->next)
		if (c->deadline_ns && (!first || c->deadline_ns < first))
			first = c->deadline_ns;
	if (first)
		loop_timer_at(s->lp, s->deadline_timer, first);
	else
		loop_timer_cancel(s->lp, s->deadline_timer);
}

static void start_deadline(struct http_conn *c)
{
	c->deadline_ns = monotonic_ns() + c->s->request_deadline_ns;
	arm_deadlines(c->s);
}

/* Connections whose request has not come in whole by its deadline are
 * shut down: a client trickling its request in (a byte now and then, never
 * idle long enough for the idle timeout) holds one of the bounded
 * connections only that long. libmicrohttpd sees the end of the socket at
 * its next run and closes the connection. */
static void on_deadline(void *arg)
{
	struct http_server *s = arg;
	uint64_t now = monotonic_ns();
	bool cut = false;
	for (struct http_conn *c = s->conns; c; c = c->next) {
		if (!c->deadline_ns || c->deadline_ns > now)
			continue;
		c->deadline_ns = 0;
		if (c->fd >= 0)
			shutdown(c->fd, SHUT_RDWR);
		s->counts.timed_out++;
		cut = true;
	}
	if (cut)
		run_mhd(s);
	arm_deadlines(s);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		struct http_conn *c = xcalloc(1, sizeof(*c));
		c->s = s;
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		c->fd = ci ? ci->connect_fd : -1;
		c->next = s->conns;
		if (c->next)
			c->next->prev = c;
		s->conns = c;
		*socket_context = c;
		start_deadline(c);
		return;
	}
	struct http_conn *c = *socket_context;
	if (!c)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
	*socket_context = NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	struct http_request *rq = *con_cls;
	if (rq) {
		free(rq->body);
		free(rq);
		*con_cls = NULL;
	}
	/* Answered: a connection kept alive has the deadline again for its
	 * next request. */
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && ci && ci->socket_context)
		start_deadline(ci->socket_context);
}

static void on_timer(void *arg)
{
	run_mhd(arg);
}

/* Takes every waiting connection, making room among those that have not
 * shown the token (make_room_unproven); past the limit of both kinds
 * (proven ones that wait for a place, connections shut down not yet
 * closed) a client is told at once that the server is busy (rather than
 * left waiting in the backlog). */
static void on_accept(void *arg)
{
	struct http_server *s = arg;
	static const char busy[] =
		"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
		"Connection: close\r\nContent-Length: 75\r\n\r\n"
		"{\"ok\":false,\"error\":\"too many connections to this session: try again\"}\n";
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &sl,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* EAGAIN, or out of descriptors: retried at the next wake */
		}
		make_room_unproven(s);
		run_mhd(s); /* the connection shut down goes */
		if (http_server_connections(s) >= HTTP_CONNECTION_LIMIT) {
			s->counts.busy++;
			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* nothing more to tell a client that cannot take it */
			}
			close(fd);
			continue;
		}
		if (MHD_add_connection(s->d, fd, (struct sockaddr *)&ss, sl) != MHD_YES)
			s->counts.busy++; /* MHD closed it */
	}
	run_mhd(s);
}

/* A non-blocking listening socket on sa, or -1 with err. */
static int listen_on(const struct sockaddr *sa, socklen_t len, const char *name, uint16_t port,
		     char *err, size_t errlen)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0)
		return errbuf_set(err, errlen, "cannot open a socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, len) || listen(fd, 64)) {
		int e = errno;
		close(fd);
		return errbuf_set(err, errlen, "cannot listen on %s port %u: %s", name,
				  (unsigned)port,
				  e == EADDRINUSE ? "the address is in use (choose another --port, or 0)"
						  : strerror(e));
	}
	return fd;
}

struct http_server *http_server_open(struct loop *lp, const struct http_options *o, char *err,
				     size_t errlen)
{
	const char *listen = o->listen ? o->listen : "127.0.0.1";
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(o->port)};
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(o->port)};
	struct sockaddr *sa;
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
	bool loopback;
	if (inet_pton(AF_INET, listen, &sin.sin_addr) == 1) {
		sa = (struct sockaddr *)&sin;
		loopback = (ntohl(sin.sin_addr.s_addr) >> 24) == 127;
	} else if (inet_pton(AF_INET6, listen, &sin6.sin6_addr) == 1) {
		sa = (struct sockaddr *)&sin6;
		flags |= MHD_USE_IPv6;
		loopback = IN6_IS_ADDR_LOOPBACK(&sin6.sin6_addr);
	} else {
		errbuf_set(err, errlen, "bad listen address '%s': give an IPv4 or IPv6 address",
			   listen);
		return NULL;
	}
	if (!o->token || strlen(o->token) != HTTP_TOKEN_HEX) {
		errbuf_set(err, errlen, "the server needs a %d-character token", HTTP_TOKEN_HEX);
		return NULL;
	}
	int lfd = listen_on(sa, sa->sa_family == AF_INET6 ? sizeof(sin6) : sizeof(sin), listen,
			    o->port, err, errlen);
	if (lfd < 0)
		return NULL;
	struct http_server *s = xcalloc(1, sizeof(*s));
	s->lp = lp;
	s->listen_fd = lfd;
	s->loopback = loopback;
	s->request_deadline_ns =
		(o->request_deadline_ms ? o->request_deadline_ms : HTTP_REQUEST_DEADLINE_S * 1000ull) *
		1000000ull;
	s->deadline_timer = loop_timer_new(lp, on_deadline, s);
	snprintf(s->token, sizeof(s->token), "%s", o->token);
	if (sa->sa_family == AF_INET6)
		snprintf(s->addr, sizeof(s->addr), "[%s]", listen);
	else
		snprintf(s->addr, sizeof(s->addr), "%s", listen);
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	getsockname(lfd, (struct sockaddr *)&bound, &blen);
	s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						    : ((struct sockaddr_in *)&bound)->sin_port);
	s->d = MHD_start_daemon(
		flags | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request, s,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTION_LIMIT,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONNECTION_MEMORY,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
		MHD_OPTION_CONNECTION_TIMEOUT,
		o->idle_timeout_s ? o->idle_timeout_s : (unsigned)HTTP_IDLE_TIMEOUT_S,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, s, MHD_OPTION_END);
	const union MHD_DaemonInfo *info =
		s->d ? MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	s->epoll_fd = info ? info->epoll_fd : -1;
	s->timer = loop_timer_new(lp, on_timer, s);
	if (s->epoll_fd < 0) {
		errbuf_set(err, errlen, "libmicrohttpd did not start in its epoll mode");
	} else if (!loop_add_fd(lp, s->epoll_fd, on_ready, s, err, errlen)) {
		if (!loop_add_fd(lp, lfd, on_accept, s, err, errlen))
			return s;
		loop_remove_fd(lp, s->epoll_fd);
	}
	if (s->d)
		MHD_stop_daemon(s->d);
	loop_timer_cancel(lp, s->timer);
	loop_timer_cancel(lp, s->deadline_timer);
	close(lfd);
	free(s);
	return NULL;
}

void http_server_route(struct http_server *s, const char *method, const char *path,
		       http_handler_fn fn, void *arg)
{
	if (s->nroutes == HTTP_MAX_ROUTES) {
		errorf("too many HTTP routes (at most %d)", HTTP_MAX_ROUTES);
		abort(); /* a programming error: the routes are fixed at build time */
	}
	struct route *r = &s->routes[s->nroutes++];
	snprintf(r->method, sizeof(r->method), "%s", method);
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->fn = fn;
	r->arg = arg;
}

uint16_t http_server_port(const struct http_server *s)
{
	return s->port;
}

size_t http_server_connections(const struct http_server *s)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return info ? info->num_connections : 0;
}

void http_server_counts(const struct http_server *s, struct http_counts *c)
{
	*c = s->counts;
}

void http_server_close(struct http_server *s)
{
	if (!s)
		return;
	/* Suspended connections must be resumed before the daemon stops; each
	 * stream ends at its next read. */
	for (struct http_stream *st = s->streams; st; st = st->next) {
		st->closing = true;
		if (st->suspended) {
			st->suspended = false;
			MHD_resume_connection(st->conn);
		}
	}
	MHD_run(s->d);
	loop_remove_fd(s->lp, s->listen_fd);
	close(s->listen_fd);
	loop_remove_fd(s->lp, s->epoll_fd);
	MHD_stop_daemon(s->d);
	loop_timer_cancel(s->lp, s->timer);
	loop_timer_cancel(s->lp, s->deadline_timer);
	free(s);
}
