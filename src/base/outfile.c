#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "errbuf.h"
#include "util.h"

/* ---- the stream: counts on after a failed write -------------------------- */

/* What the writer's FILE writes into. A failed write (a full disk) is kept,
 * not returned: the writer goes on, so the size the whole output needed is
 * known when the failure is reported at commit. */
struct outfile_sink {
	int fd;
	uint64_t offered; /* bytes the writer gave, written or not */
	int error;        /* the first write's errno, 0 while all went well */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct outfile_sink *s = cookie;
	s->offered += n;
	for (size_t done = 0; !s->error && done < n;) {
		ssize_t w = write(s->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			s->error = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	return (ssize_t)n; /* accepted either way */
}

static int sink_close(void *cookie)
{
	struct outfile_sink *s = cookie;
	if (close(s->fd) < 0 && !s->error)
		s->error = errno;
	return 0;
}

/* Wraps fd (taken over, closed on failure) into o->f. */
static int stream_open(struct outfile *o, int fd, char *err, size_t errlen)
{
	o->sink = xcalloc(1, sizeof(*o->sink));
	o->sink->fd = fd;
	o->f = fopencookie(o->sink, "w",
			   (cookie_io_functions_t){.write = sink_write, .close = sink_close});
	if (!o->f) {
		errbuf_set(err, errlen, "cannot write %s: %s", o->path, strerror(errno));
		close(fd);
		return -1;
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

/* ---- temporary files removed by a signal that ends the process ---------- */

/* A fixed table, so the handler never meets memory being reallocated; more
 * outputs than this at once is a bug, refused at open. */
#define MAX_TEMPS 32

static _Atomic(const char *) temps[MAX_TEMPS];
static int ntemps; /* changed with the signals below blocked */

static const int cleanup_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGXFSZ};
#define NSIGNALS (sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))
static bool installed[NSIGNALS];

static void remove_temps_and_die(int sig)
{
	for (size_t i = 0; i < MAX_TEMPS; i++) {
		const char *t = atomic_load(&temps[i]);
		if (t)
			unlink(t);
	}
	/* Die of the signal as if it had never been caught: the parent sees the
	 * same status. It is blocked while this runs, so it lands on return. */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void block_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&set, cleanup_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* A handler goes only where the default action (ending the process) is in
 * place: a program that handles a signal itself (a live session stops and
 * saves) goes on writing, and commits or aborts as usual. */
static int temp_register(const char *tmp)
{
	sigset_t old;
	block_signals(&old);
	int rc = -1;
	for (size_t i = 0; i < MAX_TEMPS && rc; i++) {
		if (atomic_load(&temps[i]))
			continue;
		atomic_store(&temps[i], tmp);
		rc = 0;
	}
	if (rc == 0 && ntemps++ == 0) {
		for (size_t i = 0; i < NSIGNALS; i++) {
			struct sigaction cur;
			sigaction(cleanup_signals[i], NULL, &cur);
			installed[i] = !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
			if (installed[i]) {
				struct sigaction sa = {.sa_handler = remove_temps_and_die};
				sigaction(cleanup_signals[i], &sa, NULL);
			}
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void temp_unregister(const char *tmp)
{
	sigset_t old;
	block_signals(&old);
	for (size_t i = 0; i < MAX_TEMPS; i++) {
		if (atomic_load(&temps[i]) != tmp)
			continue;
		atomic_store(&temps[i], NULL);
		if (--ntemps == 0) {
			/* Back to the default, unless the program set its own since. */
			struct sigaction dfl = {.sa_handler = SIG_DFL}, cur;
			for (size_t k = 0; k < NSIGNALS; k++) {
				if (!installed[k])
					continue;
				sigaction(cleanup_signals[k], NULL, &cur);
				if (!(cur.sa_flags & SA_SIGINFO) &&
				    cur.sa_handler == remove_temps_and_die)
					sigaction(cleanup_signals[k], &dfl, NULL);
			}
		}
		break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- where a path leads --------------------------------------------------- */

enum dest {
	DEST_STDOUT,  /* "-" */
	DEST_REPLACE, /* nothing or a regular file: temporary file, rename */
	DEST_THROUGH, /* device, FIFO, socket (directly or through a link) */
};

static const char *node_kind(mode_t m)
{
	return S_ISCHR(m)    ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

static int refuse_link(const char *path, char *err, size_t errlen)
{
	char *target = realpath(path, NULL);
	if (target) {
		errbuf_set(err, errlen,
			   "cannot write %s: it is a symbolic link to the file %s (outputs never "
			   "go through a link to a file); write to that path or remove the link",
			   path, target);
		free(target);
		return -1;
	}
	char to[PATH_MAX];
	ssize_t n = readlink(path, to, sizeof(to) - 1);
	to[n > 0 ? n : 0] = 0;
	errbuf_set(err, errlen,
		   "cannot write %s: it is a symbolic link to %s, which does not exist; write to "
		   "that path or remove the link",
		   path, to);
	return -1;
}

static int resolve(const char *path, enum dest *dest, mode_t *mode, char *err, size_t errlen)
{
	*mode = 0;
	if (strcmp(path, "-") == 0) {
		*dest = DEST_STDOUT;
		return 0;
	}
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT) { /* a missing directory shows when the temp file is made */
			*dest = DEST_REPLACE;
			return 0;
		}
		errbuf_set(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		if (stat(path, &st) < 0) {
			if (errno == ENOENT)
				return refuse_link(path, err, errlen);
			errbuf_set(err, errlen, "cannot write %s: %s", path, strerror(errno));
			return -1;
		}
		if (S_ISREG(st.st_mode))
			return refuse_link(path, err, errlen);
	}
	if (S_ISDIR(st.st_mode)) {
		errbuf_set(err, errlen, "cannot write %s: it is a directory (give a file name)", path);
		return -1;
	}
	*dest = S_ISREG(st.st_mode) ? DEST_REPLACE : DEST_THROUGH;
	*mode = st.st_mode;
	return 0;
}

/* ---- opening ---------------------------------------------------------------- */

/* Random letters for the temporary name: unpredictable, so nobody can plant
 * anything there in advance (O_EXCL would refuse it anyway, but a planted
 * name would make every attempt fail). */
static void random_suffix(char *out, size_t n)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[32];
	if (n > sizeof(rnd))
		n = sizeof(rnd);
	if (getrandom(rnd, n, GRND_NONBLOCK) != (ssize_t)n) {
		/* No entropy source yet (early boot): still unique per attempt. */
		static unsigned counter;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t seed[3] = {(uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30),
				    (uint64_t)getpid(), counter++};
		uint64_t h = hash_bytes(seed, sizeof(seed), 0);
		for (size_t i = 0; i < n; i++, h = h >> 5 | h << 59)
			rnd[i] = (unsigned char)h;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = alphabet[rnd[i] % (sizeof(alphabet) - 1)];
	out[n] = 0;
}

#define TEMP_ATTEMPTS 100

/* Creates PATH.tmp.<random> and registers it for removal on a signal.
 * Returns its fd (o->tmp and its identity set), or -1 with err. */
static int temp_create(struct outfile *o, char *err, size_t errlen)
{
	for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
		char suffix[13];
		random_suffix(suffix, sizeof(suffix) - 1);
		char *tmp = xasprintf("%s.tmp.%s", o->path, suffix);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0) {
			int e = errno;
			free(tmp);
			if (e == EEXIST)
				continue;
			errbuf_set(err, errlen, "cannot write %s: %s (choose another path)", o->path,
				   strerror(e));
			return -1;
		}
		struct stat st;
		const char *why = fstat(fd, &st) < 0	  ? strerror(errno)
				  : temp_register(tmp) < 0 ? "too many outputs open at once"
							   : NULL;
		if (why) {
			errbuf_set(err, errlen, "cannot write %s: %s", o->path, why);
			close(fd);
			unlink(tmp);
			free(tmp);
			return -1;
		}
		o->tmp = tmp;
		o->tmp_dev = st.st_dev;
		o->tmp_ino = st.st_ino;
		return fd;
	}
	errbuf_set(err, errlen, "cannot write %s: no free temporary name beside it", o->path);
	return -1;
}

static void release(struct outfile *o)
{
	free(o->sink);
	if (o->tmp)
		temp_unregister(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}

/* Opens the existing node itself, for writing through: no O_CREAT, no
 * O_TRUNC. It must still not be a regular file (it may have been replaced
 * since it was looked at). */
static int open_through(struct outfile *o, char *err, size_t errlen)
{
	int fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set(err, errlen, "cannot write %s: %s", o->path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		errbuf_set(err, errlen, "cannot write %s: it changed while being opened", o->path);
		close(fd);
		return -1;
	}
	return fd;
}

static int refuse_not_regular(const char *path, const char *what, enum dest dest, mode_t mode,
			      char *err, size_t errlen)
{
	if (dest == DEST_STDOUT)
		errbuf_set(err, errlen, "cannot write %s to standard output: give a file name",
			   what);
	else
		errbuf_set(err, errlen, "cannot write %s: it is %s, and %s needs a regular file",
			   path, node_kind(mode), what);
	return -1;
}

/* what: NULL for any destination, else only one that is replaced. */
static int open_output(struct outfile *o, const char *path, const char *what, char *err,
		       size_t errlen)
{
	memset(o, 0, sizeof(*o));
	enum dest dest;
	mode_t mode;
	if (resolve(path, &dest, &mode, err, errlen))
		return -1;
	if (what && dest != DEST_REPLACE)
		return refuse_not_regular(path, what, dest, mode, err, errlen);
	o->path = xstrdup(path);
	if (dest == DEST_STDOUT) {
		o->f = stdout;
		return 0;
	}
	int fd = dest == DEST_THROUGH ? open_through(o, err, errlen) : temp_create(o, err, errlen);
	if (fd < 0 || stream_open(o, fd, err, errlen)) {
		if (fd >= 0 && o->tmp)
			unlink(o->tmp);
		release(o);
		return -1;
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
	return open_output(o, path, NULL, err, errlen);
}

int outfile_open_regular(struct outfile *o, const char *path, const char *what, char *err,
			 size_t errlen)
{
	return open_output(o, path, what, err, errlen);
}

int outfile_check_regular(const char *path, const char *what, char *err, size_t errlen)
{
	struct outfile o;
	if (outfile_open_regular(&o, path, what, err, errlen))
		return -1;
	outfile_abort(&o);
	return 0;
}

int outfile_write_regular(const char *path, const char *what, const void *data, size_t len,
			  char *err, size_t errlen)
{
	struct outfile o;
	if (outfile_open_regular(&o, path, what, err, errlen))
		return -1;
	fwrite(data, 1, len, o.f);
	return outfile_commit(&o, err, errlen);
}

const char *outfile_size_text(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= (uint64_t)1 << 30)
		snprintf(buf, size, "%.1f GB", (double)bytes / (double)(1u << 30));
	else if (bytes >= (uint64_t)1 << 20)
		snprintf(buf, size, "%.1f MB", (double)bytes / (double)(1u << 20));
	else if (bytes >= 1024)
		snprintf(buf, size, "%.1f kB", (double)bytes / 1024.0);
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

/* ---- finishing ---------------------------------------------------------------- */

static bool temp_is_ours(const struct outfile *o)
{
	struct stat st;
	return lstat(o->tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == o->tmp_dev &&
	       st.st_ino == o->tmp_ino;
}

/* Why a write failed. For a file being replaced that ran out of room (a full
 * disk, a quota, a file size limit), with what it needed: the size of the
 * whole output and the room on the destination's filesystem. A device
 * written through (/dev/full) has no size to speak of. */
static void write_failed(const struct outfile *o, int error, char *err, size_t errlen)
{
	if (!o->tmp || (error != ENOSPC && error != EDQUOT && error != EFBIG)) {
		errbuf_set(err, errlen, "writing %s failed: %s", o->path, strerror(error));
		return;
	}
	char need[32], room[32];
	char *dir = xstrdup(o->path);
	struct statvfs vfs; /* a file size limit (EFBIG) is not about room */
	bool known = error != EFBIG && statvfs(dirname(dir), &vfs) == 0;
	uint64_t free_bytes = known ? (uint64_t)vfs.f_bavail * vfs.f_frsize : 0;
	errbuf_set(err, errlen, "cannot write %s: %s: it needs %s%s%s%s", o->path,
		   strerror(error), outfile_size_text(o->sink->offered, need, sizeof(need)),
		   known ? " and its filesystem has " : "",
		   known ? outfile_size_text(free_bytes, room, sizeof(room)) : "",
		   known ? " free" : "");
	free(dir);
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	if (o->f == stdout) {
		int rc = 0;
		if (fflush(o->f) != 0 || ferror(o->f)) {
			errbuf_set(err, errlen, "writing to standard output failed: %s",
				   strerror(errno));
			rc = -1;
		}
		release(o);
		return rc;
	}
	/* Everything into the sink, which keeps the first error; the file is
	 * still open, so the temporary name is checked while its inode cannot
	 * be reused. */
	errno = 0;
	bool stream_bad = fflush(o->f) != 0 || ferror(o->f);
	int stream_errno = errno;
	bool swapped = o->tmp && !o->sink->error && !stream_bad && !temp_is_ours(o);
	fclose(o->f); /* closes the sink's fd; a failed close is kept as its error */
	o->f = NULL;
	if (swapped) {
		errbuf_set(err, errlen,
			   "cannot move output into place at %s: its temporary file %s was "
			   "replaced while being written",
			   o->path, o->tmp);
		release(o); /* not ours any more: left alone */
		return -1;
	}
	int rc = 0;
	if (o->sink->error || stream_bad) {
		if (o->tmp)
			unlink(o->tmp); /* first: the room it took is free again */
		if (o->sink->error)
			write_failed(o, o->sink->error, err, errlen);
		else
			errbuf_set(err, errlen, "writing %s failed%s%s", o->path,
				   stream_errno ? ": " : "", stream_errno ? strerror(stream_errno) : "");
		rc = -1;
	} else if (o->tmp && rename(o->tmp, o->path) < 0) {
		errbuf_set(err, errlen, "cannot move output into place at %s: %s", o->path,
			   strerror(errno));
		unlink(o->tmp);
		rc = -1;
	}
	release(o);
	return rc;
}

void outfile_abort(struct outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}

/* ---- gzip mode ------------------------------------------------------------ */

struct gzip_sink {
	z_stream z;
	FILE *under;
	bool failed;
	uint8_t chunk[1 << 16]; /* what deflate gives, on its way to under */
};

/* Feeds bytes to the gzip stream and writes what comes out. */
static int gzip_feed(struct gzip_sink *g, const uint8_t *data, size_t len, int flush)
{
	do {
		size_t piece = len > (1u << 30) ? (1u << 30) : len;
		g->z.next_in = (Bytef *)(uintptr_t)data;
		g->z.avail_in = (uInt)piece;
		if (piece) /* data may be NULL when len is 0 */
			data += piece;
		len -= piece;
		int mode = len ? Z_NO_FLUSH : flush;
		do {
			g->z.next_out = g->chunk;
			g->z.avail_out = sizeof(g->chunk);
			if (deflate(&g->z, mode) == Z_STREAM_ERROR)
				return -1;
			size_t have = sizeof(g->chunk) - g->z.avail_out;
			if (have && fwrite(g->chunk, 1, have, g->under) != have)
				return -1;
		} while (g->z.avail_out == 0);
	} while (len);
	return 0;
}

/* A failure is kept for the close, not returned: glibc's stdio does not
 * recover from a cookie write that fails (as with the sink above). */
static ssize_t gzip_write(void *cookie, const char *buf, size_t n)
{
	struct gzip_sink *g = cookie;
	if (!g->failed && gzip_feed(g, (const uint8_t *)buf, n, Z_NO_FLUSH))
		g->failed = true;
	return (ssize_t)n; /* accepted either way */
}

static int gzip_close(void *cookie)
{
	struct gzip_sink *g = cookie;
	bool ok = !g->failed && gzip_feed(g, NULL, 0, Z_FINISH) == 0;
	deflateEnd(&g->z);
	free(g);
	return ok ? 0 : -1;
}

FILE *outfile_gzip(FILE *under)
{
	struct gzip_sink *g = xcalloc(1, sizeof(*g));
	g->under = under;
	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return NULL;
	}
	FILE *f = fopencookie(g, "w", (cookie_io_functions_t){.write = gzip_write, .close = gzip_close});
	if (!f) {
		deflateEnd(&g->z);
		free(g);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	return f;
}
