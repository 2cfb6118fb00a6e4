/* detacher — the helper process that closes uprobe fds. The contract and
 * the why are in detacher.h. */
#define _GNU_SOURCE
#include "detacher.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define FDS_PER_MESSAGE 64

struct detacher {
	int sock;
	pid_t pid;
};

static void close_all_but(int keep)
{
	if (keep > 0 && close_range(0, (unsigned)keep - 1, 0) != 0)
		for (int fd = 0; fd < keep; fd++)
			close(fd);
	if (close_range((unsigned)keep + 1, ~0u, 0) != 0)
		for (int fd = keep + 1; fd < 65536; fd++)
			close(fd);
}

/* The helper: async-signal-safe calls only (it is a fork of a process that
 * may have had other threads). */
static void __attribute__((noreturn)) helper_main(int sock)
{
	/* Ignored signals are never fatal, so nothing but a SIGKILL aimed at
	 * this process can interrupt a removal. Its own process group: a
	 * terminal's Ctrl-C or a kill of sonde's group does not reach it. */
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};
	struct sigaction ign = {.sa_handler = SIG_IGN};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &ign, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_NAME, "sonde-detach", 0, 0, 0);
	/* Not sonde's terminal or pipes (whoever reads sonde's output sees its
	 * end when sonde ends), nor its maps and probes. */
	close_all_but(sock);
	for (;;) {
		char byte;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * FDS_PER_MESSAGE)];
		} ctl;
		struct iovec iov = {&byte, 1};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctl.buf,
				   .msg_controllen = sizeof(ctl.buf)};
		ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) /* sonde closed its end (or died): all given */
			break;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int fds[FDS_PER_MESSAGE];
			memcpy(fds, CMSG_DATA(c), k * sizeof(int));
			for (size_t i = 0; i < k; i++)
				close(fds[i]); /* the last reference: the kernel removes the uprobe */
		}
	}
	_exit(0);
}

struct detacher *detacher_start(char *err, size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		errbuf_set(err, errlen, "cannot create the detacher's socket: %s", strerror(errno));
		return NULL;
	}
	/* Blocked until the helper has ignored them: no handler of sonde's may
	 * run in the helper. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1]);
	}
	int fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		errbuf_set(err, errlen, "cannot start the detacher process: %s",
			   strerror(fork_errno));
		return NULL;
	}
	struct detacher *d = xcalloc(1, sizeof(*d));
	d->sock = sv[0];
	d->pid = pid;
	return d;
}

int detacher_give(struct detacher *d, const int *fds, size_t n)
{
	if (!d)
		return n ? -1 : 0;
	for (size_t off = 0; off < n; off += FDS_PER_MESSAGE) {
		size_t k = n - off < FDS_PER_MESSAGE ? n - off : FDS_PER_MESSAGE;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * FDS_PER_MESSAGE)];
		} ctl;
		memset(&ctl, 0, sizeof(ctl));
		char byte = 0;
		struct iovec iov = {&byte, 1};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctl.buf,
				   .msg_controllen = CMSG_SPACE(sizeof(int) * k)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * k);
		memcpy(CMSG_DATA(c), fds + off, sizeof(int) * k);
		ssize_t r;
		do
			r = sendmsg(d->sock, &m, MSG_NOSIGNAL);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return -1;
	}
	return 0;
}

pid_t detacher_pid(const struct detacher *d)
{
	return d ? d->pid : -1;
}

void detacher_finish(struct detacher *d)
{
	if (!d)
		return;
	close(d->sock);
	while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(d);
}
