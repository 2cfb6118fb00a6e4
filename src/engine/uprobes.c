/* uprobes — sonde's uprobes, attached and removed in helper processes. The
 * contract and the why are in uprobes.h. */
#define _GNU_SOURCE
#include "uprobes.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errbuf.h"
#include "util.h"

#define FDS_PER_MESSAGE 64

struct helper {
	int sock; /* sonde's end of a SOCK_SEQPACKET pair */
	pid_t pid;
};

struct uprobes {
	struct helper attacher, detacher;
};

/* One attach request (the program's fd rides along as SCM_RIGHTS); sent
 * up to its n-th entry. */
struct attach_request {
	int32_t pid;
	uint8_t retprobe;
	uint8_t multi;
	uint32_t n;
	char binary[PATH_MAX];
	struct {
		uint64_t offset, cookie, ref_ctr;
	} at[UPROBES_MAX_BATCH];
};

static size_t request_size(uint32_t n)
{
	return offsetof(struct attach_request, at) + n * sizeof(((struct attach_request *)0)->at[0]);
}

/* --- the work itself (in a helper, or in sonde when none runs) ----------- */

/* The kernel's uprobe PMU: its perf type and the config bit of a return
 * probe (sysfs, as perf and libbpf read them). 0, or an errno. */
static int uprobe_pmu(int *type, int *retprobe_bit)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (!f)
		return errno ? errno : ENOENT;
	int ok = fscanf(f, "%d", type) == 1;
	fclose(f);
	f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "re");
	if (!f)
		return errno ? errno : ENOENT;
	ok = ok && fscanf(f, "config:%d", retprobe_bit) == 1;
	fclose(f);
	return ok ? 0 : EINVAL;
}

/* BPF_LINK_CREATE's attributes for a uprobe_multi link (uapi linux/bpf.h
 * of Linux 6.6; Debian 12's headers and libbpf 1.1 predate it). */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};
_Static_assert(offsetof(struct uprobe_multi_attr, path) == 16, "link_create's union");
_Static_assert(offsetof(struct uprobe_multi_attr, pid) == 56, "uprobe_multi.pid");
#define UPROBE_MULTI_RETURN 1u /* BPF_F_UPROBE_MULTI_RETURN */
#define BPF_LINK_CREATE_CMD 28  /* BPF_LINK_CREATE */

static int link_uprobe_multi(const struct uprobes_attach_opts *o)
{
	struct uprobe_multi_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)o->prog_fd;
	a.attach_type = UPROBES_MULTI_ATTACH_TYPE;
	a.path = (uint64_t)(uintptr_t)o->binary;
	a.offsets = (uint64_t)(uintptr_t)o->file_offsets;
	a.cookies = (uint64_t)(uintptr_t)o->cookies;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)o->ref_ctr_offsets;
	a.cnt = (uint32_t)o->n;
	a.multi_flags = o->retprobe ? UPROBE_MULTI_RETURN : 0;
	a.pid = o->pid < 0 ? 0 : (uint32_t)o->pid;
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE_CMD, &a, sizeof(a));
}

bool uprobes_multi_available(char *why, size_t whylen)
{
	const char *env = getenv("SONDE_UPROBE_MULTI");
	if (env && strcmp(env, "0") == 0) {
		errbuf_set(why, whylen, "SONDE_UPROBE_MULTI=0");
		return false;
	}
	/* Linux 6.6 to 6.10 have the links, but their PID filter takes one
	 * thread, not the process (fixed in 6.11, "bpf: fix multi-uprobe PID
	 * filtering logic"): a per-process probe would miss the other threads. */
	struct utsname u;
	int major = 0, minor = 0;
	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 6 || (major == 6 && minor < 11))) {
		errbuf_set(why, whylen, "Linux %d.%d's uprobe_multi links filter a PID by thread",
			   major, minor);
		return false;
	}
	/* As libbpf asks: a program of that type loads, and a link on "/"
	 * fails for being no regular file (EBADF), not for an unknown type. */
	struct bpf_insn ret0[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .expected_attach_type = UPROBES_MULTI_ATTACH_TYPE);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", ret0, 2, &lo);
	if (prog < 0) {
		errbuf_set(why, whylen, "the kernel loads no uprobe_multi program: %s",
			   strerror(errno));
		return false;
	}
	uint64_t zero = 0;
	struct uprobes_attach_opts probe = {
		.prog_fd = prog, .binary = "/", .file_offsets = &zero, .n = 1, .pid = -1};
	int link = link_uprobe_multi(&probe);
	int e = errno;
	if (link >= 0)
		close(link);
	close(prog);
	if (link >= 0 || e != EBADF) {
		errbuf_set(why, whylen, "the kernel has no uprobe_multi links (%s)",
			   link >= 0 ? "a link on / was made" : strerror(e));
		return false;
	}
	return true;
}

/* Opens the uprobe and links the program to it. Returns the link fd, or
 * -errno. */
static int attach_here(int prog_fd, const struct attach_request *r)
{
	if (r->multi) {
		uint64_t *offsets = xmalloc(r->n * sizeof(*offsets));
		uint64_t *cookies = xmalloc(r->n * sizeof(*cookies));
		uint64_t *refs = xmalloc(r->n * sizeof(*refs));
		bool any_ref = false;
		for (uint32_t i = 0; i < r->n; i++) {
			offsets[i] = r->at[i].offset;
			cookies[i] = r->at[i].cookie;
			refs[i] = r->at[i].ref_ctr;
			any_ref |= refs[i] != 0;
		}
		struct uprobes_attach_opts o = {.prog_fd = prog_fd,
						.binary = r->binary,
						.file_offsets = offsets,
						.cookies = cookies,
						.ref_ctr_offsets = any_ref ? refs : NULL,
						.n = r->n,
						.pid = r->pid,
						.retprobe = r->retprobe,
						.multi = true};
		int link = link_uprobe_multi(&o);
		int e = errno;
		free(offsets);
		free(cookies);
		free(refs);
		return link < 0 ? -e : link;
	}
	if (r->n != 1)
		return -EINVAL;
	int type, bit;
	int e = uprobe_pmu(&type, &bit);
	if (e)
		return -e;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	/* The uprobe PMU's ref_ctr_offset is config bits 32-63 (its sysfs
	 * format, as perf and libbpf use it). */
	attr.config = (r->retprobe ? 1ull << bit : 0) | r->at[0].ref_ctr << 32;
	attr.config1 = (uint64_t)(uintptr_t)r->binary; /* uprobe_path */
	attr.config2 = r->at[0].offset;                 /* probe_offset */
	/* Every process: a per-CPU event, any CPU will do (uprobes fire on all). */
	int pfd = (int)syscall(__NR_perf_event_open, &attr, r->pid < 0 ? -1 : r->pid,
			       r->pid < 0 ? 0 : -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	LIBBPF_OPTS(bpf_link_create_opts, opts, .perf_event.bpf_cookie = r->at[0].cookie);
	int link = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &opts);
	if (link < 0) {
		e = errno;
		close(pfd);
		return -e;
	}
	if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		e = errno;
		close(pfd);
		close(link);
		return -e;
	}
	close(pfd); /* the link holds the event */
	return link;
}

/* --- messages ------------------------------------------------------------- */

/* Sends data with up to FDS_PER_MESSAGE fds. Returns 0 or -1 (errno). */
static int send_with_fds(int sock, const void *data, size_t len, const int *fds, size_t nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FDS_PER_MESSAGE)];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec iov = {(void *)data, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	ssize_t r;
	do
		r = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -1 : 0;
}

/* Receives one message into data (at most len bytes) and its fds (at most
 * FDS_PER_MESSAGE, count in *nfds). Returns its length, 0 at the end, -1
 * on error. */
static ssize_t recv_with_fds(int sock, void *data, size_t len, int *fds, size_t *nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FDS_PER_MESSAGE)];
	} ctl;
	struct iovec iov = {data, len};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	ssize_t r;
	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	*nfds = 0;
	if (r < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		memcpy(fds + *nfds, CMSG_DATA(c), k * sizeof(int));
		*nfds += k;
	}
	return r;
}

/* --- the helpers ------------------------------------------------------------ */

static void close_all_but(int keep)
{
	if (keep > 0 && close_range(0, (unsigned)keep - 1, 0) != 0)
		for (int fd = 0; fd < keep; fd++)
			close(fd);
	if (close_range((unsigned)keep + 1, ~0u, 0) != 0)
		for (int fd = keep + 1; fd < 65536; fd++)
			close(fd);
}

/* Attaches on request, answers {errno} with the link fd. */
static void attacher_loop(int sock)
{
	static struct attach_request r;
	int fds[FDS_PER_MESSAGE];
	size_t nfds;
	for (;;) {
		ssize_t n = recv_with_fds(sock, &r, sizeof(r), fds, &nfds);
		if (n <= 0)
			return;
		int32_t answer = EPROTO;
		int link = -1;
		if ((size_t)n >= request_size(0) && r.n >= 1 && r.n <= UPROBES_MAX_BATCH &&
		    (size_t)n == request_size(r.n) && nfds == 1) {
			r.binary[sizeof(r.binary) - 1] = '\0';
			link = attach_here(fds[0], &r);
			answer = link < 0 ? -link : 0;
		}
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		/* Given, or (sonde is gone) closed here: which removes it. */
		send_with_fds(sock, &answer, sizeof(answer), &link, link < 0 ? 0 : 1);
		if (link >= 0)
			close(link);
	}
}

/* The detacher's queue: a thread takes in what sonde sends at once (the
 * socket holds only a few messages, net.unix.max_dgram_qlen, and sonde
 * must never wait for room), the main thread closes. */
struct close_queue {
	pthread_mutex_t mu;
	pthread_cond_t more;
	int sock;
	int *fds;
	size_t head, n, cap;
	bool end; /* sonde closed its end, or died: all given */
};

static void *take_in(void *arg)
{
	struct close_queue *q = arg;
	for (;;) {
		char byte;
		int fds[FDS_PER_MESSAGE];
		size_t nfds;
		ssize_t r = recv_with_fds(q->sock, &byte, 1, fds, &nfds);
		pthread_mutex_lock(&q->mu);
		if (r > 0) {
			grow_array((void **)&q->fds, &q->cap, q->n + nfds, sizeof(*q->fds));
			memcpy(q->fds + q->n, fds, nfds * sizeof(*fds));
			q->n += nfds;
		} else {
			q->end = true;
		}
		pthread_cond_signal(&q->more);
		pthread_mutex_unlock(&q->mu);
		if (r <= 0)
			return NULL;
	}
}

/* Closes what it is given: the last references, so the kernel removes the
 * uprobes here, ~0.2 s each, in order. */
static void detacher_loop(int sock)
{
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) { /* room for every fd given */
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	struct close_queue q = {.mu = PTHREAD_MUTEX_INITIALIZER,
				.more = PTHREAD_COND_INITIALIZER,
				.sock = sock};
	pthread_t t;
	if (pthread_create(&t, NULL, take_in, &q) != 0) { /* then one at a time */
		take_in(&q);
		for (size_t i = 0; i < q.n; i++)
			close(q.fds[i]);
		return;
	}
	pthread_mutex_lock(&q.mu);
	for (;;) {
		while (q.head == q.n && !q.end)
			pthread_cond_wait(&q.more, &q.mu);
		if (q.head == q.n)
			break;
		int fd = q.fds[q.head++];
		pthread_mutex_unlock(&q.mu);
		close(fd);
		pthread_mutex_lock(&q.mu);
	}
	pthread_mutex_unlock(&q.mu);
	pthread_join(t, NULL);
}

static void __attribute__((noreturn)) helper_main(int sock, const char *name,
						  void (*loop)(int sock))
{
	/* Ignored signals are never fatal: only a SIGKILL aimed at this
	 * process can interrupt its work. */
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};
	struct sigaction ign = {.sa_handler = SIG_IGN};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &ign, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	/* Not sonde's terminal or pipes (whoever reads sonde's output sees its
	 * end when sonde ends), nor its maps or probes. */
	close_all_but(sock);
	loop(sock);
	_exit(0);
}

static int helper_start(struct helper *h, const char *name, void (*loop)(int sock), char *err,
			size_t errlen)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		errbuf_set(err, errlen, "cannot create a socket for %s: %s", name, strerror(errno));
		return -1;
	}
	/* Blocked until the helper has ignored them: no handler of sonde's
	 * runs in it. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1], name, loop);
	}
	int fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		errbuf_set(err, errlen, "cannot start %s: %s", name, strerror(fork_errno));
		return -1;
	}
	h->sock = sv[0];
	h->pid = pid;
	return 0;
}

static void helper_end(struct helper *h)
{
	close(h->sock);
	while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* --- the interface ---------------------------------------------------------- */

struct uprobes *uprobes_start(char *err, size_t errlen)
{
	struct uprobes *u = xcalloc(1, sizeof(*u));
	if (helper_start(&u->detacher, "sonde-detach", detacher_loop, err, errlen)) {
		free(u);
		return NULL;
	}
	if (helper_start(&u->attacher, "sonde-attach", attacher_loop, err, errlen)) {
		helper_end(&u->detacher);
		free(u);
		return NULL;
	}
	return u;
}

/* An attach error as text: the kernel's own errno 524 (ENOTSUPP, which
 * strerror does not know) is the uprobes refusing the instruction at the
 * address when the file is mapped. */
static const char *attach_error(int e)
{
	if (e == 524)
		return "the kernel's uprobes do not support the instruction at that address "
		       "(ENOTSUPP)";
	return strerror(e);
}

int uprobes_attach(struct uprobes *u, const struct uprobes_attach_opts *o, char *why,
		   size_t whylen)
{
	static struct attach_request r;
	memset(&r, 0, request_size(0));
	if (strlen(o->binary) >= sizeof(r.binary)) {
		errbuf_set(why, whylen, "%s", strerror(ENAMETOOLONG));
		return -1;
	}
	size_t n = o->n;
	if (n == 0 || n > UPROBES_MAX_BATCH || (!o->multi && n != 1)) {
		errbuf_set(why, whylen, "%zu uprobes in one link (%d at most)", n,
			   o->multi ? UPROBES_MAX_BATCH : 1);
		return -1;
	}
	strcpy(r.binary, o->binary);
	r.n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		r.at[i].offset = o->file_offsets[i];
		r.at[i].cookie = o->cookies ? o->cookies[i] : 0;
		r.at[i].ref_ctr = o->ref_ctr_offsets ? o->ref_ctr_offsets[i] : 0;
	}
	r.pid = o->pid;
	r.retprobe = o->retprobe;
	r.multi = o->multi;
	int prog_fd = o->prog_fd;
	if (!u) {
		int link = attach_here(prog_fd, &r);
		if (link < 0)
			errbuf_set(why, whylen, "%s", attach_error(-link));
		return link < 0 ? -1 : link;
	}
	int32_t answer;
	int fds[FDS_PER_MESSAGE];
	size_t nfds = 0;
	if (send_with_fds(u->attacher.sock, &r, request_size(r.n), &prog_fd, 1) != 0 ||
	    recv_with_fds(u->attacher.sock, &answer, sizeof(answer), fds, &nfds) !=
		    (ssize_t)sizeof(answer)) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		errbuf_set(why, whylen, "sonde's attach helper (PID %d) is gone",
			   (int)u->attacher.pid);
		return -1;
	}
	if (answer != 0 || nfds != 1) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		errbuf_set(why, whylen, "%s", attach_error(answer ? answer : EPROTO));
		return -1;
	}
	return fds[0];
}

void uprobes_remove(struct uprobes *u, const int *fds, size_t n)
{
	for (size_t off = 0; off < n; off += FDS_PER_MESSAGE) {
		size_t k = n - off < FDS_PER_MESSAGE ? n - off : FDS_PER_MESSAGE;
		char byte = 0;
		/* Not handed over (no helper, or it was killed): this close is
		 * the last one and the removal happens here. */
		if (u)
			send_with_fds(u->detacher.sock, &byte, 1, fds + off, k);
		for (size_t i = 0; i < k; i++)
			close(fds[off + i]);
	}
}

void uprobes_finish(struct uprobes *u)
{
	if (!u)
		return;
	helper_end(&u->attacher);
	helper_end(&u->detacher);
	free(u);
}
