/* ctl — the control socket of a live session, and its client (see ctl.h).
 *
 * Server: a non-blocking listening socket and at most CTL_MAX_CLIENTS
 * connections, each with a buffer for its one request line. Everything is
 * driven by ctl_server_service(), which the session's event loop calls when
 * one of ctl_server_fds() is readable (and now and then, so that silent
 * clients time out): ctl_server_attach registers them there. Answers are
 * produced by the handler into memory streams, put in one JSON object, and
 * written with a bounded wait: a client that reads nothing for
 * CTL_WRITE_STALL_MS is dropped, and no answer takes more than
 * CTL_WRITE_TOTAL_MS; a client that does not read is never waited for.
 *
 * Client: finds the session's socket (by PID, or the only one running),
 * writes the line, reads the whole answer until the server closes, and
 * decodes it. */
#define _GNU_SOURCE
#include "ctl.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "errbuf.h"
#include "json.h"
#include "order.h"
#include "util.h"

#define CTL_WRITE_STALL_MS 200     /* a client that takes nothing this long is dropped */
#define CTL_WRITE_TOTAL_MS 1000    /* longest an answer may take to be written */
#define CTL_CONNECT_TIMEOUT_S 5    /* client: connect (listen backlog full) */
#define CTL_ANSWER_TIMEOUT_MS 30000 /* client: a command like `save` may take a while */
#define CTL_ANSWER_MAX (64u << 20)  /* client: refuse answers larger than this */
#define CTL_BUF_SIZE (COMMAND_LINE_MAX + 2) /* a line and its "\r\n" */
#define CTL_SERVICE_MS 100        /* attached: how often silent clients are checked */

struct ctl_client {
	int fd;
	uint64_t start_ms; /* when it was accepted (CLOCK_MONOTONIC) */
	size_t len;
	char buf[CTL_BUF_SIZE];
};

struct ctl_server {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev; /* the socket file we bound, so close removes only it */
	ino_t ino;
	size_t nclients;
	struct ctl_client *clients[CTL_MAX_CLIENTS];
	/* Attached to a loop (ctl_server_attach): the fds watched there. */
	struct loop *loop;
	ctl_handler_fn fn;
	void *fn_arg;
	int timer;
	int watched[CTL_MAX_CLIENTS + 1];
	size_t nwatched;
};

static uint64_t now_ms(void)
{
	return monotonic_ns() / 1000000u;
}


/* ---- the session directory ------------------------------------------------ */

/* Where sessions live, before any check: see ctl.h. */
static int dir_candidate(char *buf, size_t size, bool use_env, bool *from_env, char *err,
			 size_t errlen)
{
	const char *env = use_env ? getenv("SONDE_RUNTIME_DIR") : NULL;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;
	*from_env = false;
	if (env && *env) {
		*from_env = true;
		n = snprintf(buf, size, "%s", env);
	} else if (xdg && *xdg) {
		n = snprintf(buf, size, "%s/sonde", xdg);
	} else if (geteuid() == 0) {
		n = snprintf(buf, size, "/run/sonde");
	} else {
		n = snprintf(buf, size, "/tmp/sonde-%u", (unsigned)geteuid());
	}
	if (n < 0 || (size_t)n >= size) {
		errbuf_set(err, errlen,
			"session directory path is too long: set SONDE_RUNTIME_DIR to a shorter "
			"directory");
		return -1;
	}
	/* Trailing slashes would only make socket paths longer. */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	return 0;
}

int ctl_session_dir(char *buf, size_t size, char *err, size_t errlen)
{
	bool from_env;
	if (dir_candidate(buf, size, true, &from_env, err, errlen))
		return -1;
	const char *fix = from_env ? "or set SONDE_RUNTIME_DIR to a directory of your own"
				   : "or set SONDE_RUNTIME_DIR to a directory of your own (mode 0700)";
	if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
		errbuf_set(err, errlen, "cannot create session directory %s: %s (%s)", buf,
			strerror(errno),
			from_env ? "create it with mode 0700 or set SONDE_RUNTIME_DIR to another "
				   "directory"
				 : "set SONDE_RUNTIME_DIR to a directory of your own");
		return -1;
	}
	struct stat st;
	if (lstat(buf, &st) != 0) {
		errbuf_set(err, errlen, "cannot check session directory %s: %s (%s)", buf,
			strerror(errno), fix);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		errbuf_set(err, errlen,
			"session directory %s is not a directory (%s): remove it, %s", buf,
			S_ISLNK(st.st_mode) ? "a symbolic link" : "a file is in the way", fix);
		return -1;
	}
	/* A directory every user may write to (/tmp, /var/tmp, /dev/shm: sticky
	 * or world-writable) is shared by design: neither chmod nor removing it
	 * is the fix, another directory is. */
	if ((st.st_mode & (S_ISVTX | S_IWOTH)) != 0) {
		char def[PATH_MAX] = "";
		bool unused;
		char ignored[8];
		if (from_env && dir_candidate(def, sizeof(def), false, &unused, ignored,
					      sizeof(ignored)) != 0)
			def[0] = 0;
		errbuf_set(err, errlen,
			"session directory %s is shared with other users (mode %04o): set "
			"SONDE_RUNTIME_DIR to a private directory of your own (mkdir -m 700 DIR)%s%s",
			buf, (unsigned)(st.st_mode & 07777), def[0] ? ", or unset it to use " : "",
			def);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		errbuf_set(err, errlen,
			"session directory %s belongs to uid %u, not to you (uid %u): %s", buf,
			(unsigned)st.st_uid, (unsigned)geteuid(),
			from_env ? "set SONDE_RUNTIME_DIR to a directory of your own"
				 : "remove it, or set SONDE_RUNTIME_DIR to a directory of your own "
				   "(mode 0700)");
		return -1;
	}
	if (st.st_mode & 077) {
		errbuf_set(err, errlen,
			"session directory %s is open to other users (mode %04o): run chmod 700 %s, %s",
			buf, (unsigned)(st.st_mode & 07777), buf, fix);
		return -1;
	}
	return 0;
}

/* DIR/PID.sock into sa. */
static int socket_addr(const char *dir, pid_t pid, struct sockaddr_un *sa, char *err,
		       size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	int n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%d.sock", dir, (int)pid);
	if (n < 0 || (size_t)n >= sizeof(sa->sun_path)) {
		errbuf_set(err, errlen,
			"session socket path %s/%d.sock is too long for a unix socket (at most %zu "
			"bytes): set SONDE_RUNTIME_DIR to a shorter directory",
			dir, (int)pid, sizeof(sa->sun_path) - 1);
		return -1;
	}
	return 0;
}

static bool pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* ---- server ----------------------------------------------------------------- */

struct ctl_server *ctl_server_open(char *err, size_t errlen)
{
	char dir[PATH_MAX];
	if (ctl_session_dir(dir, sizeof(dir), err, errlen))
		return NULL;
	struct sockaddr_un sa;
	if (socket_addr(dir, getpid(), &sa, err, errlen))
		return NULL;

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_set(err, errlen, "cannot create the control socket: %s", strerror(errno));
		return NULL;
	}
	/* A socket named after our PID was left by a dead process that had the
	 * same PID (or by a session in another PID namespace sharing the
	 * directory, which would still be listening). */
	struct stat st;
	if (lstat(sa.sun_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			errbuf_set(err, errlen,
				"%s exists and is not a socket: remove it and start again",
				sa.sun_path);
			close(fd);
			return NULL;
		}
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		bool listening = probe >= 0 &&
				 (connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
				  errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS);
		if (listening) {
			close(probe);
			errbuf_set(err, errlen,
				"another session is listening at %s: stop it, or set "
				"SONDE_RUNTIME_DIR to another directory",
				sa.sun_path);
			close(fd);
			return NULL;
		}
		if (probe >= 0)
			close(probe);
		unlink(sa.sun_path);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		errbuf_set(err, errlen, "cannot bind the control socket %s: %s", sa.sun_path,
			strerror(errno));
		close(fd);
		return NULL;
	}
	/* The directory is 0700, so nobody else can reach the socket in the
	 * moment between bind (mode from the umask) and chmod. */
	if (chmod(sa.sun_path, 0600) != 0 || lstat(sa.sun_path, &st) != 0) {
		errbuf_set(err, errlen, "cannot set the mode of the control socket %s: %s",
			sa.sun_path, strerror(errno));
		unlink(sa.sun_path);
		close(fd);
		return NULL;
	}
	if (listen(fd, 64) != 0) {
		errbuf_set(err, errlen, "cannot listen on the control socket %s: %s", sa.sun_path,
			strerror(errno));
		unlink(sa.sun_path);
		close(fd);
		return NULL;
	}
	struct ctl_server *s = xcalloc(1, sizeof(*s));
	s->fd = fd;
	memcpy(s->path, sa.sun_path, sizeof(s->path));
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return s;
}

const char *ctl_server_path(const struct ctl_server *s)
{
	return s->path;
}

size_t ctl_server_fds(const struct ctl_server *s, int *fds, size_t max)
{
	size_t n = 0;
	/* When full, new connections wait in the backlog: polling the listening
	 * socket then would only spin. */
	if (s->nclients < CTL_MAX_CLIENTS && n < max)
		fds[n++] = s->fd;
	for (size_t i = 0; i < s->nclients && n < max; i++)
		fds[n++] = s->clients[i]->fd;
	return n;
}

/* Writes all of buf; false when the client did not take it (gone, or not
 * reading). Waits at most `stall_ms` for the client to make room, and at
 * most `total_ms` in all. */
static bool send_all(int fd, const char *buf, size_t len, uint64_t stall_ms, uint64_t total_ms)
{
	size_t off = 0;
	uint64_t start = now_ms();
	uint64_t deadline = start + stall_ms;
	while (off < len) {
		ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			off += (size_t)w;
			/* Progress: the client reads; give it another stall period. */
			deadline = now_ms() + stall_ms;
			if (deadline > start + total_ms)
				deadline = start + total_ms;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return false;
		uint64_t now = now_ms();
		if (now >= deadline) {
			errno = ETIMEDOUT;
			return false;
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int r = poll(&p, 1, (int)(deadline - now));
		if (r < 0 && errno != EINTR)
			return false;
	}
	return true;
}

/* The answer (see ctl.h) as one malloc'd string with its final newline.
 * text is NUL-terminated; a success's text gets a final newline, an error's
 * loses it. data is one JSON value (dlen 0: none). NULL when out of memory. */
static char *answer_build(bool ok, char *text, size_t len, const char *data, size_t dlen,
			  size_t *mlenp)
{
	char *msg = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&msg, &mlen);
	if (!f)
		return NULL;
	if (ok) {
		fputs("{\"ok\":true,\"text\":", f);
		char *t = len > 0 && text[len - 1] != '\n' ? xasprintf("%s\n", text) : NULL;
		json_write_string(f, t ? t : text);
		free(t);
	} else {
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
			text[--len] = 0;
		fputs("{\"ok\":false,\"error\":", f);
		json_write_string(f, text);
	}
	if (dlen) {
		fputs(",\"data\":", f);
		fwrite(data, 1, dlen, f);
	}
	fputs("}\n", f);
	if (fclose(f) != 0) {
		free(msg);
		return NULL;
	}
	*mlenp = mlen;
	return msg;
}

static char *answer_error(size_t *mlen, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *answer_error(size_t *mlen, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text))
		n = sizeof(text) - 1;
	return answer_build(false, text, (size_t)n, NULL, 0, mlen);
}

char *ctl_answer(ctl_handler_fn fn, void *arg, const char *line, size_t linelen, size_t *mlen,
		 bool *ok)
{
	*ok = false;
	if (linelen > 0 && line[linelen - 1] == '\r')
		linelen--;
	if (linelen > COMMAND_LINE_MAX)
		return answer_error(mlen, "command line too long: at most %d bytes",
				    COMMAND_LINE_MAX);
	if (memchr(line, 0, linelen))
		return answer_error(mlen, "command line holds a NUL byte");
	char *copy = xmalloc(linelen + 1);
	memcpy(copy, line, linelen);
	copy[linelen] = 0;
	char *text = NULL, *data = NULL;
	size_t len = 0, dlen = 0;
	FILE *out = open_memstream(&text, &len);
	FILE *dout = out ? open_memstream(&data, &dlen) : NULL;
	if (!dout) {
		if (out)
			fclose(out);
		free(text);
		free(copy);
		return answer_error(mlen, "cannot run the command: %s", strerror(errno));
	}
	int rc = fn(arg, copy, out, dout);
	free(copy);
	bool closed = fclose(out) == 0;
	closed = fclose(dout) == 0 && closed;
	char *msg;
	if (!closed) {
		msg = answer_error(mlen, "cannot run the command: out of memory for its answer");
	} else {
		msg = answer_build(rc == 0, text, len, data, dlen, mlen);
		*ok = msg && rc == 0;
	}
	free(text);
	free(data);
	return msg;
}

/* Sends an answer (NULL: none could be built; the client sees the
 * connection close) and frees it. */
static void answer_send(struct ctl_client *c, char *msg, size_t mlen)
{
	if (msg)
		send_all(c->fd, msg, mlen, CTL_WRITE_STALL_MS, CTL_WRITE_TOTAL_MS);
	free(msg);
}

static void run_request(struct ctl_client *c, size_t linelen, ctl_handler_fn fn, void *arg)
{
	size_t mlen = 0;
	bool ok;
	char *msg = ctl_answer(fn, arg, c->buf, linelen, &mlen, &ok);
	answer_send(c, msg, mlen);
}

static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t l = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) != 0)
		return false;
	return cred.uid == geteuid() || cred.uid == 0;
}

static void accept_clients(struct ctl_server *s)
{
	while (s->nclients < CTL_MAX_CLIENTS) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			return; /* EAGAIN, or out of descriptors: retried next time */
		}
		struct ctl_client *c = xmalloc(sizeof(*c));
		c->fd = fd;
		c->start_ms = now_ms();
		c->len = 0;
		if (!peer_allowed(fd)) {
			size_t mlen = 0;
			char *msg = answer_error(&mlen, "permission denied: only the session's "
							"owner can steer it");
			answer_send(c, msg, mlen);
			close(fd);
			free(c);
			continue;
		}
		s->clients[s->nclients++] = c;
	}
}

/* Reads what the client sent; runs its request when complete. Returns true
 * when the client is done with (answered or gone). */
static bool service_client(struct ctl_client *c, ctl_handler_fn fn, void *arg, uint64_t now)
{
	bool eof = false;
	for (;;) {
		if (c->len == sizeof(c->buf))
			break;
		ssize_t r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (r > 0) {
			char *nl = memchr(c->buf + c->len, '\n', (size_t)r);
			c->len += (size_t)r;
			if (nl) {
				run_request(c, (size_t)(nl - c->buf), fn, arg);
				return true;
			}
			continue;
		}
		if (r == 0) {
			eof = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		return true; /* connection error: nobody to answer */
	}
	size_t mlen = 0;
	if (c->len == sizeof(c->buf)) {
		char *msg = answer_error(&mlen, "command line too long: at most %d bytes",
					 COMMAND_LINE_MAX);
		answer_send(c, msg, mlen);
		return true;
	}
	if (eof) {
		/* The client closed its side: a last line without its newline is
		 * still a request; nothing at all is no request. */
		if (c->len == 0)
			return true;
		run_request(c, c->len, fn, arg);
		return true;
	}
	if (now - c->start_ms >= CTL_CLIENT_TIMEOUT_MS) {
		char *msg = answer_error(&mlen,
					 "timed out: no complete command line within %d ms (send "
					 "one line ending in a newline)",
					 CTL_CLIENT_TIMEOUT_MS);
		answer_send(c, msg, mlen);
		return true;
	}
	return false;
}

void ctl_server_service(struct ctl_server *s, ctl_handler_fn fn, void *arg)
{
	accept_clients(s);
	size_t kept = 0;
	for (size_t i = 0; i < s->nclients; i++) {
		struct ctl_client *c = s->clients[i];
		if (service_client(c, fn, arg, now_ms())) {
			close(c->fd);
			free(c);
		} else {
			s->clients[kept++] = c;
		}
	}
	s->nclients = kept;
	/* Slots freed: take in what waited in the backlog. */
	if (kept < CTL_MAX_CLIENTS)
		accept_clients(s);
}

/* Attached: the loop watches exactly the fds the server waits on now. Fds
 * of clients just closed may have been reused by clients just accepted, so
 * every one is registered anew. */
static void on_ready(void *arg);

static void sync_watches(struct ctl_server *s)
{
	for (size_t i = 0; i < s->nwatched; i++)
		loop_remove_fd(s->loop, s->watched[i]);
	s->nwatched = ctl_server_fds(s, s->watched, CTL_MAX_CLIENTS + 1);
	char err[256];
	for (size_t i = 0; i < s->nwatched; i++)
		if (loop_add_fd(s->loop, s->watched[i], on_ready, s, err, sizeof(err)))
			loop_fail(s->loop, "control socket: %s", err);
}

static void on_ready(void *arg)
{
	struct ctl_server *s = arg;
	ctl_server_service(s, s->fn, s->fn_arg);
	sync_watches(s);
}

static void on_timer(void *arg)
{
	struct ctl_server *s = arg;
	if (s->nclients)
		on_ready(s);
	loop_timer_in(s->loop, s->timer, CTL_SERVICE_MS / 1000.0);
}

int ctl_server_attach(struct ctl_server *s, struct loop *lp, ctl_handler_fn fn, void *arg,
		      char *err, size_t errlen)
{
	s->loop = lp;
	s->fn = fn;
	s->fn_arg = arg;
	s->nwatched = ctl_server_fds(s, s->watched, CTL_MAX_CLIENTS + 1);
	for (size_t i = 0; i < s->nwatched; i++) {
		if (loop_add_fd(lp, s->watched[i], on_ready, s, err, errlen)) {
			s->nwatched = i;
			return -1;
		}
	}
	s->timer = loop_timer_new(lp, on_timer, s);
	loop_timer_in(lp, s->timer, CTL_SERVICE_MS / 1000.0);
	return 0;
}

void ctl_server_close(struct ctl_server *s)
{
	if (!s)
		return;
	if (s->loop) {
		for (size_t i = 0; i < s->nwatched; i++)
			loop_remove_fd(s->loop, s->watched[i]);
		loop_timer_cancel(s->loop, s->timer);
	}
	for (size_t i = 0; i < s->nclients; i++) {
		close(s->clients[i]->fd);
		free(s->clients[i]);
	}
	close(s->fd);
	struct stat st;
	if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
	free(s);
}

/* ---- client ------------------------------------------------------------------ */

/* "123.sock" -> 123; 0 for anything else. */
static pid_t sock_name_pid(const char *name)
{
	const char *p = name;
	long v = 0;
	if (!isdigit((unsigned char)*p))
		return 0;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return 0;
	}
	if (strcmp(p, ".sock") != 0 || v <= 0)
		return 0;
	return (pid_t)v;
}

/* The PIDs of the live sessions in dir, ascending; sockets of dead PIDs are
 * removed. Returns the count (*pids malloc'd), or -1 with err. */
static int scan_sessions(const char *dir, pid_t **pids, char *err, size_t errlen)
{
	*pids = NULL;
	DIR *d = opendir(dir);
	if (!d) {
		errbuf_set(err, errlen, "cannot read session directory %s: %s", dir, strerror(errno));
		return -1;
	}
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = sock_name_pid(e->d_name);
		if (!pid)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		if (!pid_alive(pid)) {
			unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		grow_array((void **)pids, &cap, n + 1, sizeof(**pids));
		(*pids)[n++] = pid;
	}
	closedir(d);
	if (n > 1)
		qsort(*pids, n, sizeof(**pids), order_pid);
	return (int)n;
}

int ctl_list(FILE *out, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	if (ctl_session_dir(dir, sizeof(dir), err, errlen))
		return -1;
	pid_t *pids;
	int n = scan_sessions(dir, &pids, err, errlen);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char path[64], cmd[1024];
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pids[i]);
		size_t len = 0;
		FILE *f = fopen(path, "re");
		if (f) {
			len = fread(cmd, 1, sizeof(cmd) - 1, f);
			fclose(f);
		}
		while (len > 0 && cmd[len - 1] == 0)
			len--;
		for (size_t k = 0; k < len; k++)
			if (cmd[k] == 0 || cmd[k] == '\n' || cmd[k] == '\t')
				cmd[k] = ' ';
		cmd[len] = 0;
		fprintf(out, "%d  %s\n", (int)pids[i], len ? cmd : "?");
	}
	free(pids);
	return n;
}

/* Picks the session for pid 0: the only one running. */
static pid_t only_session(const char *dir, char *err, size_t errlen)
{
	pid_t *pids;
	int n = scan_sessions(dir, &pids, err, errlen);
	if (n < 0)
		return 0;
	pid_t pid = 0;
	if (n == 0) {
		errbuf_set(err, errlen, "no sonde session is running (start one with sonde top)");
	} else if (n == 1) {
		pid = pids[0];
	} else {
		char list[256];
		size_t off = 0;
		list[0] = 0;
		for (int i = 0; i < n && off < sizeof(list); i++) {
			int w = snprintf(list + off, sizeof(list) - off, "%s%d", i ? ", " : "",
					 (int)pids[i]);
			if (w < 0)
				break;
			off += (size_t)w;
		}
		if (off >= sizeof(list))
			snprintf(list + sizeof(list) - 5, 5, ", ..");
		errbuf_set(err, errlen,
			"%d sonde sessions are running (PIDs %s): name one, e.g. sonde ctl %d "
			"status",
			n, list, (int)pids[0]);
	}
	free(pids);
	return pid;
}

/* Reads until EOF or the deadline; the whole answer in *buf (NUL-terminated). */
static int read_answer(int fd, pid_t pid, char **buf, size_t *len, char *err, size_t errlen)
{
	size_t cap = 4096, n = 0;
	char *b = xmalloc(cap);
	uint64_t deadline = now_ms() + CTL_ANSWER_TIMEOUT_MS;
	for (;;) {
		if (n + 1 >= cap) {
			if (cap >= CTL_ANSWER_MAX) {
				errbuf_set(err, errlen, "session %d sent an answer larger than %u MB",
					(int)pid, CTL_ANSWER_MAX >> 20);
				free(b);
				return -1;
			}
			cap *= 2;
			b = xrealloc(b, cap);
		}
		ssize_t r = recv(fd, b + n, cap - n - 1, MSG_DONTWAIT);
		if (r > 0) {
			n += (size_t)r;
			continue;
		}
		if (r == 0)
			break;
		if (errno == EINTR)
			continue;
		/* The server closed with bytes of ours unread: what it sent came
		 * first, then the reset. */
		if (errno == ECONNRESET && n > 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			errbuf_set(err, errlen, "cannot read the answer of session %d: %s", (int)pid,
				strerror(errno));
			free(b);
			return -1;
		}
		uint64_t now = now_ms();
		if (now >= deadline) {
			errbuf_set(err, errlen, "session %d did not answer within %d s", (int)pid,
				CTL_ANSWER_TIMEOUT_MS / 1000);
			free(b);
			return -1;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)(deadline - now)) < 0 && errno != EINTR) {
			errbuf_set(err, errlen, "cannot wait for session %d: %s", (int)pid,
				strerror(errno));
			free(b);
			return -1;
		}
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* ctl_request, with the session's PID (when found for pid 0) in *pidp. */
static int request(pid_t *pidp, const char *line, char **answer, size_t *answer_len, char *err,
		   size_t errlen)
{
	pid_t pid = *pidp;
	size_t linelen = strlen(line);
	if (linelen > 0 && line[linelen - 1] == '\n')
		linelen--;
	if (memchr(line, '\n', linelen)) {
		errbuf_set(err, errlen, "a command is one line: it cannot hold a line break");
		return -1;
	}
	if (linelen > COMMAND_LINE_MAX) {
		errbuf_set(err, errlen, "command too long: %zu bytes, at most %d", linelen,
			COMMAND_LINE_MAX);
		return -1;
	}
	if (pid < 0) {
		errbuf_set(err, errlen, "bad session PID %d", (int)pid);
		return -1;
	}
	char dir[PATH_MAX];
	if (ctl_session_dir(dir, sizeof(dir), err, errlen))
		return -1;
	if (pid == 0) {
		pid = only_session(dir, err, errlen);
		if (!pid)
			return -1;
	}
	struct sockaddr_un sa;
	if (socket_addr(dir, pid, &sa, err, errlen))
		return -1;
	struct stat st;
	if (lstat(sa.sun_path, &st) != 0 || !S_ISSOCK(st.st_mode)) {
		errbuf_set(err, errlen,
			"no sonde session with PID %d (sonde ctl --list shows the running ones)",
			(int)pid);
		return -1;
	}
	if (!pid_alive(pid)) {
		unlink(sa.sun_path);
		errbuf_set(err, errlen,
			"no sonde session with PID %d: it has exited (sonde ctl --list shows the "
			"running ones)",
			(int)pid);
		return -1;
	}

	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errbuf_set(err, errlen, "cannot create a socket: %s", strerror(errno));
		return -1;
	}
	struct timeval tv = {.tv_sec = CTL_CONNECT_TIMEOUT_S};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		if (e == ECONNREFUSED) {
			/* Nobody listens: the PID was reused by another process. */
			unlink(sa.sun_path);
			errbuf_set(err, errlen,
				"no sonde session with PID %d: its socket was stale and is removed "
				"(sonde ctl --list shows the running ones)",
				(int)pid);
		} else if (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS) {
			errbuf_set(err, errlen, "session %d is too busy to take a connection (%d s)",
				(int)pid, CTL_CONNECT_TIMEOUT_S);
		} else {
			errbuf_set(err, errlen, "cannot connect to session %d at %s: %s", (int)pid,
				sa.sun_path, strerror(e));
		}
		return -1;
	}
	char *msg = xmalloc(linelen + 1);
	memcpy(msg, line, linelen);
	msg[linelen] = '\n';
	bool sent = send_all(fd, msg, linelen + 1, CTL_CONNECT_TIMEOUT_S * 1000,
			     CTL_CONNECT_TIMEOUT_S * 1000);
	free(msg);
	if (!sent) {
		errbuf_set(err, errlen, "cannot send the command to session %d: %s", (int)pid,
			strerror(errno));
		close(fd);
		return -1;
	}
	shutdown(fd, SHUT_WR);
	*pidp = pid;
	int rc = read_answer(fd, pid, answer, answer_len, err, errlen);
	close(fd);
	if (rc == 0 && *answer_len == 0) {
		free(*answer);
		errbuf_set(err, errlen, "session %d sent no answer (it closed the connection)", (int)pid);
		return -1;
	}
	return rc;
}

int ctl_request(pid_t pid, const char *line, char **answer, size_t *len, char *err,
		size_t errlen)
{
	return request(&pid, line, answer, len, err, errlen);
}

int ctl_send(pid_t pid, const char *line, FILE *out, char *err, size_t errlen)
{
	char *ans, why[256];
	size_t alen;
	if (request(&pid, line, &ans, &alen, err, errlen))
		return -1;
	struct json_value *v = json_parse(ans, alen, why, sizeof(why));
	free(ans);
	const struct json_value *ok = json_get(v, "ok");
	const struct json_value *text = json_get(v, ok && ok->boolean ? "text" : "error");
	if (!v || !ok || ok->type != JSON_BOOL || (text && text->type != JSON_STRING)) {
		errbuf_set(err, errlen, "session %d sent a malformed answer (%s)", (int)pid,
			   !v ? why : "not an object with \"ok\"");
		json_free(v);
		return -1;
	}
	if (out && text)
		fwrite(text->string, 1, text->len, out);
	int rc = ok->boolean ? 0 : 1;
	if (out && rc)
		fputc('\n', out);
	json_free(v);
	return rc;
}
