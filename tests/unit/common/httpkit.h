/* httpkit — a test's HTTP client for a server on the test's own loop
 * (web/http.h): the request goes from a thread with a blocking socket while
 * the test's thread steps the loop, as a session does. Shared by the tests
 * of the server (test_http) and of the endpoints (test_webapi). */
#ifndef SONDE_HTTPKIT_H
#define SONDE_HTTPKIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"

struct http_exchange {
	char request[320 * 1024];
	char *answer; /* all the server sent until it closed, NUL-terminated */
	size_t len, cap;
	uint16_t port;
	atomic_bool done;
};

/* A connected socket to 127.0.0.1:port (a 20 s receive timeout). */
int httpkit_connect(uint16_t port);
/* Sends n bytes of p on fd, as far as the peer takes them. */
void httpkit_send_all(int fd, const char *p, size_t n);

/* Sends the request (every "PORT" in it replaced by the port), stepping lp
 * until the answer is in; asserts one came. Free the result with
 * httpkit_free. */
struct http_exchange *httpkit_roundtrip(struct loop *lp, uint16_t port, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void httpkit_free(struct http_exchange *x);

/* Steps lp until *done (asserts it came within 20 s). */
void httpkit_step_until(struct loop *lp, atomic_bool *done);

/* The answer's status code (0: none) and body ("" when none). */
int httpkit_status(const struct http_exchange *x);
const char *httpkit_body(const struct http_exchange *x);

#endif
