/* outfile: a regular destination is replaced atomically through a fresh
 * temporary file (a link planted at the old predictable temporary name is
 * not followed; no temporary file is left after commit, abort or a signal
 * that ends the process); devices, FIFOs and links to them are written
 * through and stay what they were (a /dev/full node reports its ENOSPC);
 * links to files, dangling links and directories are refused with one line;
 * the regular-only variant (recordings) refuses anything but a regular file;
 * a temporary file that was swapped is not renamed into place. A write that
 * fails half-way (here a file size limit, as a full disk does) leaves no
 * file and says which file, why, and how much the whole output needed; the
 * same for a recording built in memory, which can then be written
 * elsewhere. Gzip mode: what is written comes back whole through infile's
 * gunzip, in pieces large and small; a destination that refuses the bytes
 * makes the close fail. Every test works in a fresh directory. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "folded.h"
#include "infile.h"
#include "outfile.h"
#include "profile.h"
#include "recording.h"
#include "viewtree.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/sonde-outfile-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(outfile, .init = setup, .fini = teardown, .timeout = 30);

static char *in_dir(const char *name)
{
	static char buf[4][256];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
	return b;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot read %s", path);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Names in the test directory (besides "." and ".."), as one sorted line. */
static char *listing(void)
{
	static char buf[4096];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	cr_assert_geq(n, 0);
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			strcat(buf, names[i]->d_name);
			strcat(buf, " ");
		}
		free(names[i]);
	}
	free(names);
	return buf;
}

static mode_t type_of(const char *path)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st.st_mode & S_IFMT;
}

Test(outfile, replaces_a_regular_file_through_a_temporary_one)
{
	char *out = in_dir("out.txt");
	write_text(out, "old\n");
	struct outfile o;
	char err[512] = "";
	cr_assert_eq(outfile_open(&o, out, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(o.tmp);
	cr_assert_eq(strncmp(o.tmp, out, strlen(out)), 0);
	cr_assert_eq(strncmp(o.tmp + strlen(out), ".tmp.", 5), 0, "%s", o.tmp);
	cr_assert_eq(type_of(o.tmp), S_IFREG);
	fputs("new\n", o.f);
	cr_assert_str_eq(read_text(out), "old\n"); /* untouched until commit */
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(read_text(out), "new\n");
	cr_assert_str_eq(listing(), "out.txt ");
}

Test(outfile, temporary_names_are_not_predictable)
{
	struct outfile a, b;
	char err[512];
	cr_assert_eq(outfile_open(&a, in_dir("x"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(outfile_open(&b, in_dir("x"), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_neq(a.tmp, b.tmp);
	char pid_name[300];
	snprintf(pid_name, sizeof(pid_name), "%s.tmp.%d", in_dir("x"), (int)getpid());
	cr_assert_str_neq(a.tmp, pid_name);
	outfile_abort(&a);
	outfile_abort(&b);
	cr_assert_str_eq(listing(), "");
}

/* Another user plants OUT.tmp.<pid> -> a file only root may write: the
 * output must not land in that file. */
Test(outfile, a_link_planted_at_the_temporary_name_is_not_followed)
{
	char *victim = in_dir("victim");
	write_text(victim, "secret\n");
	chmod(victim, 0600);
	char planted[300];
	snprintf(planted, sizeof(planted), "%s.tmp.%d", in_dir("out.svg"), (int)getpid());
	cr_assert_eq(symlink(victim, planted), 0);
	struct outfile o;
	char err[512];
	cr_assert_eq(outfile_open(&o, in_dir("out.svg"), err, sizeof(err)), 0, "%s", err);
	fputs("<svg/>\n", o.f);
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(read_text(victim), "secret\n");
	cr_assert_str_eq(read_text(in_dir("out.svg")), "<svg/>\n");
	cr_assert_eq(type_of(planted), S_IFLNK);
}

Test(outfile, abort_leaves_nothing)
{
	struct outfile o;
	char err[512];
	cr_assert_eq(outfile_open(&o, in_dir("out"), err, sizeof(err)), 0, "%s", err);
	fputs("partial", o.f);
	outfile_abort(&o);
	cr_assert_str_eq(listing(), "");
}

Test(outfile, a_fifo_is_written_through_and_stays_a_fifo)
{
	char *fifo = in_dir("fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so opening for writing goes on */
	cr_assert_geq(rd, 0);
	struct outfile o;
	char err[512];
	cr_assert_eq(outfile_open(&o, fifo, err, sizeof(err)), 0, "%s", err);
	cr_assert_null(o.tmp);
	fputs("through\n", o.f);
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), 0, "%s", err);
	char got[64] = "";
	cr_assert_eq(read(rd, got, sizeof(got) - 1), 8);
	cr_assert_str_eq(got, "through\n");
	close(rd);
	cr_assert_eq(type_of(fifo), S_IFIFO);
	cr_assert_str_eq(listing(), "fifo ");
}

/* /dev/stdout is a link to /proc/self/fd/1: a link to a FIFO (or a pipe, a
 * terminal) is written through too, and the link stays. */
Test(outfile, a_link_to_a_fifo_is_written_through)
{
	char *fifo = in_dir("fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(symlink("fifo", in_dir("out")), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	cr_assert_geq(rd, 0);
	struct outfile o;
	char err[512];
	cr_assert_eq(outfile_open(&o, in_dir("out"), err, sizeof(err)), 0, "%s", err);
	fputs("via link\n", o.f);
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), 0, "%s", err);
	char got[64] = "";
	cr_assert_eq(read(rd, got, sizeof(got) - 1), 9);
	close(rd);
	cr_assert_eq(type_of(in_dir("out")), S_IFLNK);
	cr_assert_eq(type_of(fifo), S_IFIFO);
}

/* Device nodes of our own (never the machine's /dev): null takes anything,
 * full fails every write with ENOSPC; both stay devices. */
static bool make_device(const char *path, unsigned minor)
{
	return mknod(path, S_IFCHR | 0666, makedev(1, minor)) == 0;
}

Test(outfile, devices_are_written_through_and_stay_devices)
{
	if (!make_device(in_dir("null"), 3) || !make_device(in_dir("full"), 7))
		cr_skip_test("cannot make device nodes here (needs root): %s", strerror(errno));
	struct outfile o;
	char err[512] = "";
	cr_assert_eq(outfile_open(&o, in_dir("null"), err, sizeof(err)), 0, "%s", err);
	fputs("discarded\n", o.f);
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(type_of(in_dir("null")), S_IFCHR);

	cr_assert_eq(outfile_open(&o, in_dir("full"), err, sizeof(err)), 0, "%s", err);
	fputs("no room\n", o.f);
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), -1);
	char want[300];
	snprintf(want, sizeof(want), "writing %s failed: %s", in_dir("full"), strerror(ENOSPC));
	cr_assert_str_eq(err, want);
	cr_assert_eq(type_of(in_dir("full")), S_IFCHR);
	cr_assert_str_eq(listing(), "full null ");
}

Test(outfile, a_link_to_a_file_is_refused_and_left_alone)
{
	write_text(in_dir("real"), "kept\n");
	cr_assert_eq(symlink("real", in_dir("link")), 0);
	struct outfile o;
	char err[512] = "";
	cr_assert_eq(outfile_open(&o, in_dir("link"), err, sizeof(err)), -1);
	char want[600];
	char *real = realpath(in_dir("real"), NULL);
	snprintf(want, sizeof(want),
		 "cannot write %s: it is a symbolic link to the file %s (outputs never go "
		 "through a link to a file); write to that path or remove the link",
		 in_dir("link"), real);
	free(real);
	cr_assert_str_eq(err, want);
	cr_assert_eq(type_of(in_dir("link")), S_IFLNK);
	cr_assert_str_eq(read_text(in_dir("real")), "kept\n");
	cr_assert_str_eq(listing(), "link real ");
}

Test(outfile, a_dangling_link_and_a_directory_are_refused)
{
	cr_assert_eq(symlink("nothing-here", in_dir("dangling")), 0);
	cr_assert_eq(mkdir(in_dir("sub"), 0700), 0);
	struct outfile o;
	char err[512] = "", want[600];
	cr_assert_eq(outfile_open(&o, in_dir("dangling"), err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "cannot write %s: it is a symbolic link to nothing-here, which does not exist; "
		 "write to that path or remove the link",
		 in_dir("dangling"));
	cr_assert_str_eq(err, want);
	cr_assert_eq(outfile_open(&o, in_dir("sub"), err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot write %s: it is a directory (give a file name)",
		 in_dir("sub"));
	cr_assert_str_eq(err, want);
	cr_assert_eq(type_of(in_dir("dangling")), S_IFLNK);
	cr_assert_str_eq(listing(), "dangling sub ");
}

/* A child opens an output, says so, and waits to be killed by `sig`. */
static void killed_while_writing(int sig)
{
	int ready[2];
	cr_assert_eq(pipe(ready), 0);
	char *out = in_dir("out.svg");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(sig, SIG_DFL);
		struct outfile o;
		char err[512];
		if (outfile_open(&o, out, err, sizeof(err)))
			_exit(2);
		fputs("<svg>", o.f);
		fflush(o.f);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		pause();
		_exit(4);
	}
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1);
	char *before = listing();
	cr_assert_eq(strncmp(before, "out.svg.tmp.", 12), 0, "%s", before);
	kill(pid, sig);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == sig, "status %#x", status);
	cr_assert_str_eq(listing(), "", "%s left behind by signal %d", listing(), sig);
	close(ready[0]);
	close(ready[1]);
}

Test(outfile, sigterm_while_writing_removes_the_temporary_file)
{
	killed_while_writing(SIGTERM);
}

Test(outfile, sigint_while_writing_removes_the_temporary_file)
{
	killed_while_writing(SIGINT);
}

Test(outfile, sighup_while_writing_removes_the_temporary_file)
{
	killed_while_writing(SIGHUP);
}

static volatile sig_atomic_t got_signal;
static void note_signal(int sig)
{
	got_signal = sig;
}

/* A program that handles the signal itself (a live session stops and then
 * saves) keeps its handler: the output is finished and committed. */
Test(outfile, a_program_s_own_handler_is_kept)
{
	struct sigaction sa = {.sa_handler = note_signal}, old;
	sigaction(SIGTERM, &sa, &old);
	struct outfile o;
	char err[512];
	cr_assert_eq(outfile_open(&o, in_dir("out"), err, sizeof(err)), 0, "%s", err);
	raise(SIGTERM);
	cr_assert_eq(got_signal, SIGTERM);
	fputs("done\n", o.f);
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(read_text(in_dir("out")), "done\n");
	struct sigaction now;
	sigaction(SIGTERM, NULL, &now);
	cr_assert_eq(now.sa_handler, note_signal);
	sigaction(SIGTERM, &old, NULL);
}

Test(outfile, handlers_are_restored_after_the_last_output)
{
	signal(SIGHUP, SIG_DFL);
	struct outfile a, b;
	char err[512];
	cr_assert_eq(outfile_open(&a, in_dir("a"), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(outfile_open(&b, in_dir("b"), err, sizeof(err)), 0, "%s", err);
	struct sigaction now;
	sigaction(SIGHUP, NULL, &now);
	cr_assert_neq(now.sa_handler, SIG_DFL);
	outfile_abort(&a);
	sigaction(SIGHUP, NULL, &now);
	cr_assert_neq(now.sa_handler, SIG_DFL); /* b is still being written */
	cr_assert_eq(outfile_commit(&b, err, sizeof(err)), 0, "%s", err);
	sigaction(SIGHUP, NULL, &now);
	cr_assert_eq(now.sa_handler, SIG_DFL);
}

Test(outfile, regular_only_outputs_need_a_regular_file)
{
	cr_assert_eq(mkfifo(in_dir("fifo"), 0600), 0);
	struct outfile o;
	char err[512] = "", want[600];
	cr_assert_eq(outfile_open_regular(&o, "-", "a test database", err, sizeof(err)), -1);
	cr_assert_str_eq(err, "cannot write a test database to standard output: give a file name");
	cr_assert_eq(outfile_open_regular(&o, in_dir("fifo"), "a test database", err, sizeof(err)),
		     -1);
	snprintf(want, sizeof(want),
		 "cannot write %s: it is a FIFO, and a test database needs a regular file",
		 in_dir("fifo"));
	cr_assert_str_eq(err, want);
	cr_assert_eq(outfile_check_regular(in_dir("db"), "a test database", err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_str_eq(listing(), "fifo ");
}

/* If the temporary file's name was made to lead elsewhere while the output
 * was written, nothing is renamed into place. */
Test(outfile, a_swapped_temporary_file_is_not_moved_into_place)
{
	struct outfile o;
	char err[512] = "";
	cr_assert_eq(outfile_open_regular(&o, in_dir("db"), "a test database", err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(type_of(o.tmp), S_IFREG);
	fputs("ours\n", o.f);
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s", o.tmp);
	cr_assert_eq(unlink(tmp), 0);
	write_text(tmp, "someone else's\n");
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), -1);
	cr_assert(strstr(err, "was replaced while being written"), "%s", err);
	cr_assert_eq(access(in_dir("db"), F_OK), -1);
	cr_assert_str_eq(read_text(tmp), "someone else's\n", "left alone");
}

static struct profile *small_profile(void)
{
	static const char text[] = "p;a;b 3\np;a;c 2\n";
	char err[256];
	struct profile *p = folded_read(text, sizeof(text) - 1, err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	return p;
}

Test(outfile, recordings_refuse_links_and_devices_and_leave_no_temporary_file)
{
	struct profile *p = small_profile();
	write_text(in_dir("real.sonde"), "kept\n");
	cr_assert_eq(symlink("real.sonde", in_dir("link.sonde")), 0);
	cr_assert_eq(mkfifo(in_dir("fifo"), 0600), 0);
	char err[512] = "";
	cr_assert_eq(recording_save(p, in_dir("link.sonde"), err, sizeof(err)), -1);
	cr_assert(strstr(err, "is a symbolic link to the file"), "%s", err);
	cr_assert_eq(recording_save(p, in_dir("fifo"), err, sizeof(err)), -1);
	cr_assert(strstr(err, "it is a FIFO, and a recording (an SQLite database) needs a regular "
			      "file"),
		  "%s", err);
	cr_assert_str_eq(read_text(in_dir("real.sonde")), "kept\n");
	cr_assert_eq(recording_save(p, in_dir("ok.sonde"), err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(listing(), "fifo link.sonde ok.sonde real.sonde ");
	struct profile *q = recording_load(in_dir("ok.sonde"), err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 2);
	cr_assert_eq(viewtree_total_weight(q, NULL), 5);
	profile_free(q);
	profile_free(p);
}

static void limit_file_size(rlim_t bytes)
{
	signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
	struct rlimit rl;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = bytes < rl.rlim_max ? bytes : rl.rlim_max; /* the soft limit only */
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

Test(outfile, a_failed_write_says_what_it_needed)
{
	limit_file_size(64 << 10);
	char *path = in_dir("out.txt"), err[512] = "";
	struct outfile o;
	cr_assert_eq(outfile_open(&o, path, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 200000; i++) /* 200,000 bytes: past the limit */
		fputc('x', o.f);
	cr_assert_not(ferror(o.f), "the writer is not stopped: the size is counted");
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), -1);
	char want[600];
	snprintf(want, sizeof(want), "cannot write %s: File too large: it needs 195.3 kB", path);
	cr_assert_str_eq(err, want);
	cr_assert_str_eq(listing(), "", "no file, the temporary one gone too");
}

Test(outfile, a_recording_that_did_not_fit_is_written_elsewhere)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t t = profile_thread_intern(p, 1, 1, "prog");
	for (int i = 0; i < 20000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "function_%d", i);
		uint32_t f = frames_intern(p->frames, name, "/bin/x", "x.c", (uint32_t)i, FRAME_USER);
		struct sample s = {.time_ns = (uint64_t)i, .weight = 1, .thread = t,
				   .stack = profile_stack_intern(p, &f, 1)};
		profile_add_sample(p, &s, NULL, 0);
	}
	char err[512] = "";
	struct recording_image *img = recording_build(p, err, sizeof(err));
	cr_assert_not_null(img, "%s", err);
	size_t size = recording_image_size(img);
	cr_assert_gt(size, 256 << 10);

	limit_file_size(256 << 10);
	char *path = in_dir("run.sonde"), want[600], need[32];
	cr_assert_eq(recording_image_write(img, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot write %s: File too large: it needs %s", path,
		 outfile_size_text(size, need, sizeof(need)));
	cr_assert_str_eq(err, want);
	cr_assert_str_eq(listing(), "");
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), -1);
	cr_assert_str_eq(err, want, "recording_save says the same");

	/* the image survives: written once there is room, it is the recording */
	limit_file_size(RLIM_INFINITY);
	cr_assert_eq(recording_image_write(img, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(listing(), "run.sonde ");
	struct profile *q = recording_load(path, err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 20000);
	profile_free(q);
	recording_image_free(img);
	profile_free(p);
}

Test(outfile, sizes_for_messages)
{
	char b[32];
	cr_assert_str_eq(outfile_size_text(512, b, sizeof(b)), "512 bytes");
	cr_assert_str_eq(outfile_size_text(200000, b, sizeof(b)), "195.3 kB");
	cr_assert_str_eq(outfile_size_text(52428800, b, sizeof(b)), "50.0 MB");
	cr_assert_str_eq(outfile_size_text(3ull << 30, b, sizeof(b)), "3.0 GB");
}

Test(outfile, gzip_mode_round_trips_and_reports_a_failed_destination)
{
	/* 3 MB of varied text, written in pieces of 1 byte to 1 MB. */
	size_t len = 3u << 20, done = 0, piece = 1;
	char *text = malloc(len);
	for (size_t i = 0; i < len; i++)
		text[i] = (char)('a' + (i * 7919 + i / 4096) % 26);
	char *packed = NULL;
	size_t packed_len = 0;
	FILE *mem = open_memstream(&packed, &packed_len);
	FILE *gz = outfile_gzip(mem);
	cr_assert_not_null(gz);
	while (done < len) {
		size_t n = piece < len - done ? piece : len - done;
		cr_assert_eq(fwrite(text + done, 1, n, gz), n);
		done += n;
		piece = piece >= (1u << 20) ? 1 : piece * 3;
	}
	cr_assert_eq(fclose(gz), 0);
	cr_assert_eq(fclose(mem), 0);
	cr_assert_lt(packed_len, len / 4, "gzip mode wrote %zu bytes for %zu", packed_len, len);

	struct infile in;
	char err[256];
	uint8_t *back;
	size_t back_len;
	infile_from_memory(&in, packed, packed_len);
	cr_assert_eq(infile_read_all(&in, &(struct infile_limit){len + 1, "test"},
				     &back, &back_len, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert(in.gzip);
	cr_assert_eq(back_len, len);
	cr_assert_eq(memcmp(back, text, len), 0);
	infile_close(&in);
	free(back);
	free(packed);

	/* /dev/full, unbuffered: the first bytes out of zlib fail. */
	FILE *full = fopen("/dev/full", "w");
	cr_assert_not_null(full);
	setvbuf(full, NULL, _IONBF, 0);
	gz = outfile_gzip(full);
	cr_assert_not_null(gz);
	fwrite(text, 1, len, gz);
	cr_assert_eq(fclose(gz), EOF);
	fclose(full);
	free(text);
}
