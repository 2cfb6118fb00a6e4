/* http — the HTTP server of `sonde serve`, driven by the session's event
 * loop (loop.h): libmicrohttpd in its external-epoll mode, so requests are
 * answered on the loop's thread between ring-buffer drains and nothing needs
 * a lock. Never blocks: sockets are non-blocking, a slow or vanished client
 * only fills its own bounded queue.
 *
 * Access: every request carries the session's token (`?token=T` in the URL,
 * or the header `X-Sonde-Token: T`); none is 401, a wrong one 403. The Host
 * header must name the address listened on (or localhost for a loopback
 * address), which stops DNS-rebinding pages. A route that changes the
 * session (POST) also needs same-origin: an Origin header, when there is
 * one, must be http://HOST of the request, else 403; there are no CORS
 * headers, so other origins cannot read answers either.
 *
 * Errors are a status code and one line of JSON: {"ok":false,"error":"..."}.
 * Limits: HTTP_MAX_CLIENTS connections at once that have shown the token
 * (a request of theirs passed the check; more are answered 503), and
 * HTTP_MAX_UNPROVEN that have not yet: a new connection past those takes
 * the place of the oldest of them, which is shut down (counted: evicted),
 * so clients without the token holding half-sent requests never keep one
 * with it out (its request comes in at once and proves it); URLs (path and query) of at most HTTP_MAX_URL_BYTES
 * (414), request heads of at most HTTP_MAX_HEADER_BYTES (431; a head too
 * large for libmicrohttpd's memory per connection, 4 times that, gets
 * libmicrohttpd's own 431 page instead of the JSON line), request bodies of
 * at most HTTP_MAX_BODY bytes (413), HTTP_IDLE_TIMEOUT_S of silence before a
 * connection is closed, and HTTP_REQUEST_DEADLINE_S for a whole request
 * (head and body) to come in, from the connection's start or its previous
 * answer: a connection past it is shut down, so a client trickling a
 * request in (never silent long enough for the idle timeout) ties up one of
 * the bounded connections that long at most, never the loop. An answer
 * being sent (an event stream for as long as it lasts) has no deadline.
 *
 * Streams (Server-Sent Events): a route may turn its request into a stream
 * and send events into it at any time; each stream queues at most
 * HTTP_STREAM_MAX_QUEUE bytes not yet taken by its client. */
#ifndef SONDE_HTTP_H
#define SONDE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"

#define HTTP_MAX_CLIENTS 64
#define HTTP_MAX_UNPROVEN 64
#define HTTP_MAX_HEADER_BYTES (64 * 1024)
#define HTTP_MAX_URL_BYTES (8 * 1024)
#define HTTP_MAX_BODY (16 * 1024)
#define HTTP_IDLE_TIMEOUT_S 15
#define HTTP_REQUEST_DEADLINE_S 10
#define HTTP_STREAM_MAX_QUEUE (4u << 20)
#define HTTP_TOKEN_HEX 32 /* characters of a token made by http_token_new */

struct http_options {
	const char *listen; /* an IPv4 or IPv6 address; NULL: 127.0.0.1 */
	uint16_t port;	    /* 0: any free port */
	const char *token;  /* what every request must carry (copied) */
	unsigned idle_timeout_s; /* 0: HTTP_IDLE_TIMEOUT_S */
	unsigned request_deadline_ms; /* 0: HTTP_REQUEST_DEADLINE_S */
};

struct http_server;
struct http_request;
struct http_stream;

/* A route's handler: answers the request with exactly one http_reply* call
 * (or none: the server then answers 500). */
typedef void (*http_handler_fn)(void *arg, struct http_request *rq);

/* Fills buf (at least HTTP_TOKEN_HEX + 1 bytes) with a random token from the
 * kernel's generator. Returns 0, or -1 with err. */
int http_token_new(char *buf, size_t size, char *err, size_t errlen);

/* Listens and registers with the loop. Returns NULL with one line in err
 * (address in use, bad address, ...). */
struct http_server *http_server_open(struct loop *lp, const struct http_options *o, char *err,
				     size_t errlen);

/* Adds a route: method "GET" or "POST", an exact path. POST routes are
 * state-changing and get the same-origin check. Up to 32 routes. */
void http_server_route(struct http_server *s, const char *method, const char *path,
		       http_handler_fn fn, void *arg);

/* The port listened on (the real one when 0 was asked for). */
uint16_t http_server_port(const struct http_server *s);

/* Closes every connection and the listening socket; streams' close
 * callbacks run. NULL is allowed. */
void http_server_close(struct http_server *s);

/* Counters since the start. */
struct http_counts {
	uint64_t requests;	   /* answered, any status */
	uint64_t refused;	   /* 401/403 */
	uint64_t stream_overflows; /* events not queued: the client was too slow */
	uint64_t busy;             /* connections refused at HTTP_MAX_CLIENTS (503) */
	uint64_t evicted;          /* connections without the token shut down for a
				    * newer one (HTTP_MAX_UNPROVEN) */
	uint64_t timed_out;        /* connections shut down at their request deadline */
};
void http_server_counts(const struct http_server *s, struct http_counts *c);

/* Connections open now (requests being read, answers and streams being
 * sent). */
size_t http_server_connections(const struct http_server *s);

/* The request's query argument `name`, or NULL. */
const char *http_request_arg(struct http_request *rq, const char *name);

/* The request body (POST), bytes and length; "" and 0 for none. */
const char *http_request_body(const struct http_request *rq, size_t *len);

/* Answers with a body (copied) and a content type. */
void http_reply(struct http_request *rq, unsigned status, const char *content_type,
		const void *body, size_t len);

/* Answers with {"ok":false,"error":message} (message: one line). */
void http_reply_error(struct http_request *rq, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Answers with an open text/event-stream. closed(arg) runs once when the
 * stream ends (the client went away, or the server closed); after it the
 * stream pointer is gone. Returns the stream (never NULL). */
struct http_stream *http_reply_stream(struct http_request *rq, void (*closed)(void *arg),
				      void *arg);

/* Queues one event ("event: NAME" and the data, each line of data its own
 * "data:" line). Returns 0, or -1 when the client has not taken enough of
 * what was queued for this to fit (nothing queued then, counted as an
 * overflow): the sender decides what to resend (a full state instead of a
 * delta, say). */
int http_stream_send(struct http_stream *st, const char *event, const char *data, size_t len);

/* Bytes queued and not yet taken by the client. */
size_t http_stream_queued(const struct http_stream *st);

#endif
