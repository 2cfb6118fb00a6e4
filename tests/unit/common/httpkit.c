#define _GNU_SOURCE
#include "httpkit.h"

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "util.h"

int httpkit_connect(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = {.tv_sec = 20};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		cr_assert_fail("connect: %m");
	return fd;
}

void httpkit_send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the server closed: the answer says why */
		p += w;
		n -= (size_t)w;
	}
}

static void *exchange_run(void *arg)
{
	struct http_exchange *x = arg;
	int fd = httpkit_connect(x->port);
	httpkit_send_all(fd, x->request, strlen(x->request));
	for (;;) {
		grow_array((void **)&x->answer, &x->cap, x->len + 65536, 1);
		ssize_t r = recv(fd, x->answer + x->len, x->cap - x->len - 1, 0);
		if (r <= 0)
			break;
		x->len += (size_t)r;
	}
	x->answer[x->len] = 0;
	close(fd);
	atomic_store(&x->done, true);
	return NULL;
}

void httpkit_step_until(struct loop *lp, atomic_bool *done)
{
	char err[256] = "";
	for (int i = 0; i < 4000 && !atomic_load(done); i++)
		cr_assert_eq(loop_step(lp, 5, err, sizeof(err)), 0, "%s", err);
	cr_assert(atomic_load(done), "the client got no answer");
}

struct http_exchange *httpkit_roundtrip(struct loop *lp, uint16_t port, const char *fmt, ...)
{
	struct http_exchange *x = xcalloc(1, sizeof(*x));
	x->port = port;
	char *tmpl = xmalloc(sizeof(x->request));
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmpl, sizeof(x->request), fmt, ap);
	va_end(ap);
	char portbuf[8];
	snprintf(portbuf, sizeof(portbuf), "%u", (unsigned)port);
	char *out = x->request;
	for (const char *p = tmpl; *p;) {
		if (strncmp(p, "PORT", 4) == 0) {
			out = stpcpy(out, portbuf);
			p += 4;
		} else {
			*out++ = *p++;
		}
	}
	*out = 0;
	free(tmpl);
	pthread_t t;
	pthread_create(&t, NULL, exchange_run, x);
	httpkit_step_until(lp, &x->done);
	pthread_join(t, NULL);
	return x;
}

void httpkit_free(struct http_exchange *x)
{
	if (!x)
		return;
	free(x->answer);
	free(x);
}

int httpkit_status(const struct http_exchange *x)
{
	int code = 0;
	if (x->answer)
		sscanf(x->answer, "HTTP/1.1 %d", &code);
	return code;
}

const char *httpkit_body(const struct http_exchange *x)
{
	const char *b = x->answer ? strstr(x->answer, "\r\n\r\n") : NULL;
	return b ? b + 4 : "";
}
