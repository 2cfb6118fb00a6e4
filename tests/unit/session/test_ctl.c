/* ctl: the session directory's checks, the socket's mode, round trips
 * between ctl_send (in a thread, or a forked process) and a server serviced
 * in a poll loop or attached to an event loop (ok and error answers, exact
 * text), the JSON answers as they go over the socket (exact bytes, with and
 * without data), a client that sends nothing (dropped after the timeout while
 * others are served), one that does not read its answer (dropped after the
 * bounded write wait), over-long lines, listing with stale-socket removal,
 * pid 0 with none / one / two sessions, and `sonde ctl`'s argument joining,
 * its one-argument command line, --json and exit codes. Every test runs in
 * a fresh SONDE_RUNTIME_DIR. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "commands.h"
#include "ctl.h"
#include "json.h"
#include "loop.h"

#define STALE_PID 4194999 /* above PID_MAX_LIMIT (2^22): never a live process */

static char dir[64];

static void setup(void)
{
	signal(SIGPIPE, SIG_DFL); /* the server must not need SIG_IGN */
	snprintf(dir, sizeof(dir), "/tmp/sonde-ctl-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	setenv("SONDE_RUNTIME_DIR", dir, 1);
}

static void teardown(void)
{
	char cmd[128];
	chmod(dir, 0700);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(ctl, .init = setup, .fini = teardown, .timeout = 20);

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- a handler with known answers ---- */

struct hstate {
	int calls;
	char last[COMMAND_LINE_MAX + 8];
};

static int handler(void *arg, const char *line, FILE *out, FILE *data)
{
	struct hstate *h = arg;
	h->calls++;
	snprintf(h->last, sizeof(h->last), "%s", line);
	if (!strcmp(line, "fail")) {
		fprintf(out, "no such thing: fail\n");
		return -1;
	}
	if (!strcmp(line, "status")) {
		fprintf(out, "line one\nline two\n");
		return 0;
	}
	if (!strcmp(line, "noeol")) {
		fputs("no newline", out);
		return 0;
	}
	if (!strcmp(line, "quiet"))
		return 0;
	if (!strcmp(line, "withdata")) {
		fprintf(out, "two \"quoted\" words\n");
		fprintf(data, "{\"n\":1,\"s\":\"x\"}");
		return 0;
	}
	if (!strcmp(line, "big")) { /* more than a socket buffer holds */
		for (int i = 0; i < 100000; i++)
			fprintf(out, "%063d\n", i);
		return 0;
	}
	fprintf(out, "got [%s] %zu\n", line, strlen(line));
	return 0;
}

/* ---- clients in threads ---- */

struct client {
	pid_t pid;
	const char *line;
	int rc;
	char err[512];
	char *text;
	size_t len;
	atomic_bool done;
	pthread_t th;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	FILE *out = open_memstream(&c->text, &c->len);
	c->rc = ctl_send(c->pid, c->line, out, c->err, sizeof(c->err));
	fclose(out);
	atomic_store(&c->done, true);
	return NULL;
}

static void *raw_client_main(void *arg)
{
	struct client *c = arg;
	c->rc = ctl_request(c->pid, c->line, &c->text, &c->len, c->err, sizeof(c->err));
	atomic_store(&c->done, true);
	return NULL;
}

static void client_start(struct client *c, pid_t pid, const char *line)
{
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->line = line;
	atomic_init(&c->done, false);
	cr_assert_eq(pthread_create(&c->th, NULL, client_main, c), 0);
}

static void client_join(struct client *c)
{
	pthread_join(c->th, NULL);
}

/* Polls and services the server until *done or max_ms. */
static void serve_until(struct ctl_server *s, struct hstate *h, atomic_bool *done, int max_ms)
{
	uint64_t end = ms_now() + (uint64_t)max_ms;
	while (!(done && atomic_load(done)) && ms_now() < end) {
		int fds[CTL_MAX_CLIENTS + 1];
		struct pollfd p[CTL_MAX_CLIENTS + 1];
		size_t n = ctl_server_fds(s, fds, CTL_MAX_CLIENTS + 1);
		for (size_t i = 0; i < n; i++)
			p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		poll(p, n, 20);
		ctl_server_service(s, handler, h);
	}
}

static struct client *round_trip(struct ctl_server *s, struct hstate *h, pid_t pid,
				 const char *line)
{
	static struct client c;
	client_start(&c, pid, line);
	serve_until(s, h, &c.done, 5000);
	cr_assert(atomic_load(&c.done), "client did not finish: %s", line);
	client_join(&c);
	return &c;
}

static struct ctl_server *open_server(void)
{
	char err[512] = "";
	struct ctl_server *s = ctl_server_open(err, sizeof(err));
	cr_assert_not_null(s, "ctl_server_open: %s", err);
	return s;
}

/* A raw client: connects to our own session. */
static int raw_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%d.sock", dir, (int)getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert(fd >= 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect: %s",
		     strerror(errno));
	return fd;
}

/* Reads until EOF (non-blocking; "" when nothing yet). */
static size_t raw_read(int fd, char *buf, size_t size, size_t have, bool *eof)
{
	for (;;) {
		ssize_t r = recv(fd, buf + have, size - 1 - have, MSG_DONTWAIT);
		if (r > 0) {
			have += (size_t)r;
			continue;
		}
		*eof = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
		break;
	}
	buf[have] = 0;
	return have;
}

/* Serves until a raw client's whole answer came (the server closed) or 3 s
 * passed; the answer in buf. */
static size_t raw_answer(struct ctl_server *s, struct hstate *h, int fd, char *buf, size_t size)
{
	size_t have = 0;
	bool eof = false;
	uint64_t end = ms_now() + 3000;
	while (!eof && ms_now() < end) {
		serve_until(s, h, NULL, 20);
		have = raw_read(fd, buf, size, have, &eof);
	}
	cr_assert(eof, "no whole answer: %s", buf);
	return have;
}

/* Creates a socket file nobody listens on. */
static void make_stale_socket(pid_t pid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%d.sock", dir, (int)pid);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert(fd >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind: %s", strerror(errno));
	close(fd);
	struct stat st;
	cr_assert_eq(lstat(sa.sun_path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
}

/* ---- directory and socket ---- */

Test(ctl, socket_is_owner_only)
{
	char got[256], err[256] = "";
	cr_assert_eq(ctl_session_dir(got, sizeof(got), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(got, dir);

	struct ctl_server *s = open_server();
	char want[128];
	snprintf(want, sizeof(want), "%s/%d.sock", dir, (int)getpid());
	cr_assert_str_eq(ctl_server_path(s), want);
	struct stat st;
	cr_assert_eq(lstat(want, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600, "socket mode %o", st.st_mode & 0777);
	cr_assert_eq(st.st_uid, geteuid());

	int fds[4];
	cr_assert_eq(ctl_server_fds(s, fds, 4), 1); /* just the listening socket */
	ctl_server_close(s);
	cr_assert_neq(lstat(want, &st), 0, "close leaves the socket file");
}

Test(ctl, creates_missing_dir_0700)
{
	char sub[128], got[256], err[256] = "";
	snprintf(sub, sizeof(sub), "%s/run", dir);
	setenv("SONDE_RUNTIME_DIR", sub, 1);
	mode_t old = umask(0);
	int rc = ctl_session_dir(got, sizeof(got), err, sizeof(err));
	umask(old);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(got, sub);
	struct stat st;
	cr_assert_eq(lstat(sub, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0700, "dir mode %o", st.st_mode & 0777);
}

Test(ctl, refuses_dir_open_to_others)
{
	cr_assert_eq(chmod(dir, 0755), 0);
	char err[512] = "";
	cr_assert_null(ctl_server_open(err, sizeof(err)));
	cr_assert(strstr(err, dir), "error names the directory: %s", err);
	cr_assert(strstr(err, "0755"), "error shows the mode: %s", err);
	cr_assert(strstr(err, "chmod 700"), "error says what to do: %s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	/* The client refuses it too. */
	err[0] = 0;
	cr_assert_eq(ctl_send(0, "status", NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "chmod 700"), "%s", err);
}

/* A directory every user may write to cannot be made private: the advice is
 * another directory, never chmod (which would break /tmp for everyone). */
static void check_shared_dir(mode_t mode, const char *shown)
{
	char sub[128], err[512] = "";
	snprintf(sub, sizeof(sub), "%s/pub", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(chmod(sub, mode), 0);
	setenv("SONDE_RUNTIME_DIR", sub, 1);
	unsetenv("XDG_RUNTIME_DIR");
	cr_assert_null(ctl_server_open(err, sizeof(err)));
	cr_assert(strstr(err, sub), "error names the directory: %s", err);
	cr_assert(strstr(err, shown), "error shows the mode: %s", err);
	cr_assert(strstr(err, "shared with other users"), "%s", err);
	cr_assert(strstr(err, "private directory"), "error says what to do: %s", err);
	cr_assert_null(strstr(err, "chmod"), "no chmod advice for a shared directory: %s", err);
	cr_assert_null(strstr(err, "remove it"), "no removal advice: %s", err);
	cr_assert(strstr(err, geteuid() == 0 ? "unset it to use /run/sonde" : "unset it to use /tmp/sonde-"),
		  "error names the default: %s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	struct stat st;
	cr_assert_eq(lstat(sub, &st), 0);
	cr_assert_eq(st.st_mode & 07777, mode, "the directory was left as it was");
	char sock[192];
	snprintf(sock, sizeof(sock), "%s/%d.sock", sub, (int)getpid());
	cr_assert_neq(access(sock, F_OK), 0, "no socket in a shared directory");
	/* The client refuses it too, with the same advice. */
	err[0] = 0;
	cr_assert_eq(ctl_send(0, "status", NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "private directory"), "%s", err);
	cr_assert_eq(rmdir(sub), 0);
}

Test(ctl, refuses_shared_dir_without_chmod_advice)
{
	check_shared_dir(01777, "1777"); /* as /tmp */
	check_shared_dir(0777, "0777");
	check_shared_dir(01770, "1770");
}

Test(ctl, refuses_file_and_symlink)
{
	char file[128], link[128], err[512] = "";
	snprintf(file, sizeof(file), "%s/file", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	setenv("SONDE_RUNTIME_DIR", file, 1);
	cr_assert_null(ctl_server_open(err, sizeof(err)));
	cr_assert(strstr(err, "not a directory"), "%s", err);
	cr_assert(strstr(err, "SONDE_RUNTIME_DIR"), "error says what to do: %s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);

	char sub[128];
	snprintf(sub, sizeof(sub), "%s/real", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	cr_assert_eq(symlink(sub, link), 0);
	setenv("SONDE_RUNTIME_DIR", link, 1);
	err[0] = 0;
	cr_assert_null(ctl_server_open(err, sizeof(err)));
	cr_assert(strstr(err, "symbolic link"), "%s", err);
}

/* ---- round trips ---- */

Test(ctl, round_trip_ok_and_error)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};

	struct client *c = round_trip(s, &h, getpid(), "status");
	cr_assert_eq(c->rc, 0, "rc %d: %s", c->rc, c->err);
	cr_assert_eq(c->len, strlen("line one\nline two\n"));
	cr_assert_str_eq(c->text, "line one\nline two\n");
	cr_assert_str_eq(h.last, "status");
	free(c->text);

	c = round_trip(s, &h, getpid(), "fail");
	cr_assert_eq(c->rc, 1, "rc %d: %s", c->rc, c->err);
	cr_assert_str_eq(c->text, "no such thing: fail\n");
	free(c->text);

	/* pid 0: the only session. A final newline in the line is allowed. */
	c = round_trip(s, &h, 0, "trace \"a b\"\n");
	cr_assert_eq(c->rc, 0, "rc %d: %s", c->rc, c->err);
	cr_assert_str_eq(c->text, "got [trace \"a b\"] 11\n");
	free(c->text);

	/* An answer without a final newline gets one; an empty answer is "". */
	c = round_trip(s, &h, getpid(), "noeol");
	cr_assert_eq(c->rc, 0);
	cr_assert_str_eq(c->text, "no newline\n");
	free(c->text);
	c = round_trip(s, &h, getpid(), "quiet");
	cr_assert_eq(c->rc, 0);
	cr_assert_eq(c->len, 0);
	free(c->text);
	cr_assert_eq(h.calls, 5);

	/* A line of exactly COMMAND_LINE_MAX bytes is accepted. */
	char *line = malloc(COMMAND_LINE_MAX + 1);
	memset(line, 'x', COMMAND_LINE_MAX);
	line[COMMAND_LINE_MAX] = 0;
	c = round_trip(s, &h, getpid(), line);
	cr_assert_eq(c->rc, 0, "rc %d: %s", c->rc, c->err);
	cr_assert_eq(strlen(h.last), COMMAND_LINE_MAX);
	free(c->text);
	free(line);
	ctl_server_close(s);
}

Test(ctl, raw_protocol_crlf_and_eof)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	/* "\r\n" ends a line too; bytes after the line are ignored. */
	int fd = raw_connect();
	const char *req = "status\r\nignored\n";
	cr_assert_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	char buf[256];
	raw_answer(s, &h, fd, buf, sizeof(buf));
	cr_assert_str_eq(buf, "{\"ok\":true,\"text\":\"line one\\nline two\\n\"}\n");
	cr_assert_str_eq(h.last, "status");
	close(fd);

	/* A last line without newline, ended by shutting down the writing side. */
	fd = raw_connect();
	cr_assert_eq(send(fd, "fail", 4, 0), 4);
	shutdown(fd, SHUT_WR);
	raw_answer(s, &h, fd, buf, sizeof(buf));
	cr_assert_str_eq(buf, "{\"ok\":false,\"error\":\"no such thing: fail\"}\n");
	close(fd);

	/* Connect and close at once: no request, nothing run. */
	int before = h.calls;
	fd = raw_connect();
	close(fd);
	serve_until(s, &h, NULL, 100);
	cr_assert_eq(h.calls, before);
	int fds[4];
	cr_assert_eq(ctl_server_fds(s, fds, 4), 1);
	ctl_server_close(s);
}

/* The answer of a command with data, as it goes over the socket, and as
 * ctl_send decodes it (the text only). */
Test(ctl, json_answer_with_data)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	int fd = raw_connect();
	cr_assert_eq(send(fd, "withdata\n", 9, 0), 9);
	char buf[256];
	size_t have = raw_answer(s, &h, fd, buf, sizeof(buf));
	cr_assert_str_eq(buf, "{\"ok\":true,\"text\":\"two \\\"quoted\\\" words\\n\","
			      "\"data\":{\"n\":1,\"s\":\"x\"}}\n");
	close(fd);
	char err[256];
	struct json_value *v = json_parse(buf, have, err, sizeof(err));
	cr_assert_not_null(v, "%s", err);
	cr_assert_eq(json_get(json_get(v, "data"), "n")->number, 1);
	json_free(v);

	struct client *c = round_trip(s, &h, getpid(), "withdata");
	cr_assert_eq(c->rc, 0, "%s", c->err);
	cr_assert_str_eq(c->text, "two \"quoted\" words\n");
	free(c->text);
	/* ctl_request: the answer as it came (an error answer is no error of
	 * ctl_request's). */
	static struct client r;
	memset(&r, 0, sizeof(r));
	r.pid = getpid();
	r.line = "fail";
	atomic_init(&r.done, false);
	cr_assert_eq(pthread_create(&r.th, NULL, raw_client_main, &r), 0);
	serve_until(s, &h, &r.done, 5000);
	client_join(&r);
	cr_assert_eq(r.rc, 0, "%s", r.err);
	cr_assert_str_eq(r.text, "{\"ok\":false,\"error\":\"no such thing: fail\"}\n");
	cr_assert_eq(r.len, strlen(r.text));
	free(r.text);
	ctl_server_close(s);
}

/* The server on an event loop: requests answered as the loop runs, fds
 * kept in step as clients come and go, a silent client timed out by the
 * loop's timer while others are served. */
Test(ctl, attached_to_an_event_loop)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	char err[256] = "";
	struct loop *lp = loop_new(err, sizeof(err));
	cr_assert_not_null(lp, "%s", err);
	cr_assert_eq(ctl_server_attach(s, lp, handler, &h, err, sizeof(err)), 0, "%s", err);
	int silent = raw_connect();
	uint64_t t0 = ms_now();
	const char *lines[] = {"status", "fail", "hello", "withdata"};
	const char *want[] = {"line one\nline two\n", "no such thing: fail\n", "got [hello] 5\n",
			      "two \"quoted\" words\n"};
	for (int i = 0; i < 4; i++) {
		static struct client c;
		client_start(&c, getpid(), lines[i]);
		uint64_t end = ms_now() + 5000;
		while (!atomic_load(&c.done) && ms_now() < end)
			cr_assert_eq(loop_step(lp, 50, err, sizeof(err)), 0, "%s", err);
		client_join(&c);
		cr_assert_eq(c.rc, i == 1 ? 1 : 0, "%s: rc %d %s", lines[i], c.rc, c.err);
		cr_assert_str_eq(c.text, want[i]);
		free(c.text);
	}
	cr_assert_lt(ms_now() - t0, 1500, "served while a silent client waits");
	/* The silent client: answered with the timeout by the loop's timer. */
	char buf[512];
	size_t have = 0;
	bool eof = false;
	while (!eof && ms_now() - t0 < 4000) {
		cr_assert_eq(loop_step(lp, 50, err, sizeof(err)), 0, "%s", err);
		have = raw_read(silent, buf, sizeof(buf), have, &eof);
	}
	cr_assert(eof, "the silent client was not dropped");
	cr_assert(!strncmp(buf, "{\"ok\":false,\"error\":\"timed out", 29), "answer: %s", buf);
	close(silent);
	int fds[4];
	cr_assert_eq(ctl_server_fds(s, fds, 4), 1);
	cr_assert_eq(h.calls, 4);
	ctl_server_close(s);
	loop_free(lp);
}

Test(ctl, silent_client_is_dropped_without_blocking_others)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	int silent = raw_connect();
	uint64_t t0 = ms_now();
	serve_until(s, &h, NULL, 50);
	int fds[4];
	cr_assert_eq(ctl_server_fds(s, fds, 4), 2, "the silent client is being read");

	/* Another client is served at once meanwhile. */
	struct client *c = round_trip(s, &h, getpid(), "status");
	cr_assert_eq(c->rc, 0, "%s", c->err);
	free(c->text);
	cr_assert_lt(ms_now() - t0, 1000, "service blocked on the silent client");

	char buf[512];
	size_t have = 0;
	bool eof = false;
	while (!eof && ms_now() - t0 < 4000) {
		serve_until(s, &h, NULL, 20);
		have = raw_read(silent, buf, sizeof(buf), have, &eof);
	}
	uint64_t took = ms_now() - t0;
	cr_assert(eof, "the silent client was not dropped");
	cr_assert_geq(took, CTL_CLIENT_TIMEOUT_MS - 50, "dropped after %llu ms",
		      (unsigned long long)took);
	cr_assert_lt(took, CTL_CLIENT_TIMEOUT_MS + 1000, "dropped after %llu ms",
		     (unsigned long long)took);
	cr_assert(!strncmp(buf, "{\"ok\":false,\"error\":\"timed out", 29), "answer: %s", buf);
	cr_assert_eq(ctl_server_fds(s, fds, 4), 1);
	close(silent);
	ctl_server_close(s);
}

Test(ctl, client_not_reading_is_dropped)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	/* What building the answer costs on this machine now (a sanitizer
	 * build on a busy machine takes a while over 6.4 MB): the wait for the
	 * client comes on top of it. */
	struct hstate probe = {0};
	size_t alen = 0;
	bool ok;
	uint64_t b0 = ms_now();
	free(ctl_answer(handler, &probe, "big", 3, &alen, &ok));
	uint64_t build = ms_now() - b0;
	int fd = raw_connect();
	cr_assert_eq(send(fd, "big\n", 4, 0), 4);
	/* The answer (6.4 MB) does not fit in the socket buffers and nobody
	 * reads it: service gives up after its bounded wait. */
	uint64_t t0 = ms_now();
	serve_until(s, &h, NULL, 100);
	uint64_t took = ms_now() - t0;
	cr_assert_eq(h.calls, 1);
	cr_assert_lt(took, 2 * build + 1000, "service took %llu ms (building the answer: %llu ms)",
		     (unsigned long long)took, (unsigned long long)build);
	int fds[4];
	cr_assert_eq(ctl_server_fds(s, fds, 4), 1, "the client was not dropped");
	close(fd); /* SIGPIPE is at its default: the server used MSG_NOSIGNAL */

	/* Still serving. */
	struct client *c = round_trip(s, &h, getpid(), "status");
	cr_assert_eq(c->rc, 0, "%s", c->err);
	free(c->text);
	ctl_server_close(s);
}

Test(ctl, big_answer_read_by_client)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	struct client *c = round_trip(s, &h, getpid(), "quiet");
	free(c->text);
	/* 100k lines of 64 bytes: more than the bounded wait may allow if the
	 * client were slow, but a reading client takes it in time. */
	c = round_trip(s, &h, getpid(), "big");
	cr_assert_eq(c->rc, 0, "%s", c->err);
	cr_assert_eq(c->len, 100000 * 64, "got %zu bytes", c->len);
	cr_assert(!strncmp(c->text + 64 * 99999, "0000", 4));
	free(c->text);
	ctl_server_close(s);
}

Test(ctl, over_long_line_is_an_error)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	int fd = raw_connect();
	size_t n = COMMAND_LINE_MAX + 1000;
	char *req = malloc(n + 1);
	memset(req, 'a', n);
	req[n] = '\n';
	cr_assert_eq(send(fd, req, n + 1, 0), (ssize_t)(n + 1));
	free(req);
	char buf[512];
	raw_answer(s, &h, fd, buf, sizeof(buf));
	char want[128];
	snprintf(want, sizeof(want),
		 "{\"ok\":false,\"error\":\"command line too long: at most %d bytes\"}\n",
		 COMMAND_LINE_MAX);
	cr_assert_str_eq(buf, want);
	cr_assert_eq(h.calls, 0, "the handler saw the long line");
	close(fd);

	/* One byte over: also refused. */
	fd = raw_connect();
	req = malloc(COMMAND_LINE_MAX + 2);
	memset(req, 'b', COMMAND_LINE_MAX + 1);
	req[COMMAND_LINE_MAX + 1] = '\n';
	cr_assert_eq(send(fd, req, COMMAND_LINE_MAX + 2, 0), COMMAND_LINE_MAX + 2);
	raw_answer(s, &h, fd, buf, sizeof(buf));
	cr_assert_str_eq(buf, want);
	close(fd);

	/* The client refuses it before sending. */
	char err[256] = "";
	req[COMMAND_LINE_MAX + 1] = 0;
	cr_assert_eq(ctl_send(getpid(), req, NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "too long"), "%s", err);
	cr_assert_eq(ctl_send(getpid(), "a\nb", NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "line break"), "%s", err);
	free(req);
	cr_assert_eq(h.calls, 0);
	ctl_server_close(s);
}

/* ---- finding sessions ---- */

Test(ctl, list_and_stale_sockets)
{
	char err[256] = "";
	char stale[128];
	snprintf(stale, sizeof(stale), "%s/%d.sock", dir, STALE_PID);

	/* Nothing running: pid 0 says so, in exactly these words. */
	cr_assert_eq(ctl_send(0, "status", NULL, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "no sonde session is running (start one with sonde top)");

	/* A stale socket of our own PID is replaced by ctl_server_open. */
	make_stale_socket(getpid());
	struct ctl_server *s = open_server();
	make_stale_socket(STALE_PID);

	/* A named dead session: a clear error, and its socket is removed. */
	cr_assert_eq(ctl_send(STALE_PID, "status", NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "no sonde session with PID 4194999"), "%s", err);
	struct stat st;
	cr_assert_neq(lstat(stale, &st), 0, "stale socket kept by ctl_send");

	make_stale_socket(STALE_PID);
	/* A file that only looks like a socket name is left alone. */
	char other[128];
	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	FILE *f = fopen(other, "w");
	fclose(f);

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int n = ctl_list(out, err, sizeof(err));
	fclose(out);
	cr_assert_eq(n, 1, "listed %d: %s", n, err);
	char want[64];
	snprintf(want, sizeof(want), "%d  ", (int)getpid());
	cr_assert(!strncmp(text, want, strlen(want)), "list: %s", text);
	/* (Criterion's worker renames itself, so only its presence is checked.) */
	cr_assert_gt(len, strlen(want) + 1, "the command line is shown: %s", text);
	cr_assert_eq(text[len - 1], '\n');
	cr_assert_eq(strchr(text, '\n'), text + len - 1, "one line: %s", text);
	free(text);
	cr_assert_neq(lstat(stale, &st), 0, "stale socket kept by ctl_list");
	cr_assert_eq(lstat(other, &st), 0);

	/* pid 0 with a stale socket around: the live one is used. */
	make_stale_socket(STALE_PID);
	struct hstate h = {0};
	struct client *c = round_trip(s, &h, 0, "status");
	cr_assert_eq(c->rc, 0, "%s", c->err);
	free(c->text);
	ctl_server_close(s);
}

Test(ctl, two_sessions_need_a_pid)
{
	struct ctl_server *s = open_server();
	int ready[2], go[2];
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(go), 0);
	pid_t child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		char err[256];
		struct ctl_server *cs = ctl_server_open(err, sizeof(err));
		char r = cs ? 'r' : 'x';
		if (write(ready[1], &r, 1) != 1)
			_exit(1);
		char g;
		/* Serve until told to stop. */
		struct hstate h = {0};
		for (;;) {
			struct pollfd p = {.fd = go[0], .events = POLLIN};
			if (poll(&p, 1, 20) > 0 && read(go[0], &g, 1) >= 0)
				break;
			if (cs)
				ctl_server_service(cs, handler, &h);
		}
		ctl_server_close(cs);
		_exit(0);
	}
	char r = 0;
	cr_assert_eq(read(ready[0], &r, 1), 1);
	cr_assert_eq(r, 'r', "the child could not open its server");

	char err[256] = "", want[256];
	cr_assert_eq(ctl_send(0, "status", NULL, err, sizeof(err)), -1);
	pid_t lo = getpid() < child ? getpid() : child, hi = getpid() < child ? child : getpid();
	snprintf(want, sizeof(want),
		 "2 sonde sessions are running (PIDs %d, %d): name one, e.g. sonde ctl %d status",
		 (int)lo, (int)hi, (int)lo);
	cr_assert_str_eq(err, want);

	FILE *null = fopen("/dev/null", "w");
	cr_assert_eq(ctl_list(null, err, sizeof(err)), 2);
	fclose(null);

	/* Named, the child's session answers (it services itself). */
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rc = ctl_send(child, "hello", out, err, sizeof(err));
	fclose(out);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(text, "got [hello] 5\n");
	free(text);

	cr_assert_eq(write(go[1], "g", 1), 1);
	int status;
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The child removed its socket: one session again. */
	struct hstate h = {0};
	struct client *c = round_trip(s, &h, 0, "status");
	cr_assert_eq(c->rc, 0, "%s", c->err);
	free(c->text);
	ctl_server_close(s);
}

/* ---- sonde ctl ---- */

struct cmd_run {
	int argc;
	char **argv;
	int rc;
	atomic_bool done;
	pthread_t th;
};

static void *cmd_main(void *arg)
{
	struct cmd_run *r = arg;
	r->rc = cmd_ctl(r->argc, r->argv);
	atomic_store(&r->done, true);
	return NULL;
}

static int run_cmd(struct ctl_server *s, struct hstate *h, int argc, char **argv)
{
	struct cmd_run r = {.argc = argc, .argv = argv};
	atomic_init(&r.done, false);
	cr_assert_eq(pthread_create(&r.th, NULL, cmd_main, &r), 0);
	serve_until(s, h, &r.done, 5000);
	pthread_join(r.th, NULL);
	return r.rc;
}

Test(ctl, cmd_ctl_quotes_words_and_exits)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	char *a1[] = {"ctl", pid, "trace", "a b", "", "x\"y\\z", "#c", "back\\slash", "tab\there"};
	cr_assert_eq(run_cmd(s, &h, 9, a1), 0);
	cr_assert_str_eq(h.last, "trace \"a b\" \"\" \"x\\\"y\\\\z\" \"#c\" back\\slash \"tab\there\"");
	/* The command language reads the words back. */
	struct command cmd;
	char err[256];
	cr_assert_eq(command_parse("trace \"x\\\"y\\\\z\"", &cmd, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(cmd.arg, "x\"y\\z");

	char *a2[] = {"ctl", "fail"}; /* no SESSION: the only one */
	cr_assert_eq(run_cmd(s, &h, 2, a2), 1);
	cr_assert_str_eq(h.last, "fail");
	char *a3[] = {"ctl", "--", "status"};
	cr_assert_eq(run_cmd(s, &h, 3, a3), 0);
	cr_assert_str_eq(h.last, "status");
	int calls = h.calls;

	/* Usage errors: 2, nothing sent. */
	char *u1[] = {"ctl"};
	char *u2[] = {"ctl", "--list", "x"};
	char *u3[] = {"ctl", "--bogus"};
	char *u4[] = {"ctl", pid};
	char *u5[] = {"ctl", "0", "status"};
	char *u6[] = {"ctl", "trace", "a\nb"};
	cr_assert_eq(cmd_ctl(1, u1), 2);
	cr_assert_eq(cmd_ctl(3, u2), 2);
	cr_assert_eq(cmd_ctl(2, u3), 2);
	cr_assert_eq(cmd_ctl(2, u4), 2);
	cr_assert_eq(cmd_ctl(3, u5), 2);
	cr_assert_eq(cmd_ctl(3, u6), 2);
	char *help[] = {"ctl", "--help"};
	cr_assert_eq(cmd_ctl(2, help), 0);
	cr_assert_eq(h.calls, calls);

	/* No such session: 1. */
	char *n1[] = {"ctl", "4194999", "status"};
	cr_assert_eq(cmd_ctl(3, n1), 1);
	char *l1[] = {"ctl", "--list"};
	cr_assert_eq(cmd_ctl(2, l1), 0);
	ctl_server_close(s);
}

/* One argument holding spaces is the command line as typed (bpftrace -e
 * style): sent as it is, not quoted into one word. */
Test(ctl, cmd_ctl_one_argument_is_the_line)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	char *a1[] = {"ctl", "trace handle_request"};
	cr_assert_eq(run_cmd(s, &h, 2, a1), 0);
	cr_assert_str_eq(h.last, "trace handle_request");
	char *a2[] = {"ctl", pid, "slow  \"a b\"\tp99"};
	cr_assert_eq(run_cmd(s, &h, 3, a2), 0);
	cr_assert_str_eq(h.last, "slow  \"a b\"\tp99");
	char *a3[] = {"ctl", "--", "fail "};
	cr_assert_eq(run_cmd(s, &h, 3, a3), 0); /* "fail " is not "fail" */
	cr_assert_str_eq(h.last, "fail ");
	/* Two words, one with a space: quoted as before. */
	char *a4[] = {"ctl", "trace", "a b"};
	cr_assert_eq(run_cmd(s, &h, 3, a4), 0);
	cr_assert_str_eq(h.last, "trace \"a b\"");
	/* One word without spaces: as before too. */
	char *a5[] = {"ctl", "fail"};
	cr_assert_eq(run_cmd(s, &h, 2, a5), 1);
	cr_assert_str_eq(h.last, "fail");
	/* Still one line. */
	int calls = h.calls;
	char *u1[] = {"ctl", "trace a\nb"};
	cr_assert_eq(cmd_ctl(2, u1), 2);
	cr_assert_eq(h.calls, calls);
	ctl_server_close(s);
}

static void setup_stdout(void)
{
	setup();
	cr_redirect_stdout();
}

/* --json prints the answer as the session sent it; without it, the text. */
Test(ctl, cmd_ctl_json_prints_the_answer, .init = setup_stdout)
{
	struct ctl_server *s = open_server();
	struct hstate h = {0};
	char *a1[] = {"ctl", "--json", "withdata"};
	cr_assert_eq(run_cmd(s, &h, 3, a1), 0);
	char *a2[] = {"ctl", "--json", "fail"};
	cr_assert_eq(run_cmd(s, &h, 3, a2), 1);
	char *a3[] = {"ctl", "withdata"};
	cr_assert_eq(run_cmd(s, &h, 2, a3), 0);
	fflush(stdout);
	cr_assert_stdout_eq_str("{\"ok\":true,\"text\":\"two \\\"quoted\\\" words\\n\","
				"\"data\":{\"n\":1,\"s\":\"x\"}}\n"
				"{\"ok\":false,\"error\":\"no such thing: fail\"}\n"
				"two \"quoted\" words\n");
	ctl_server_close(s);
}
