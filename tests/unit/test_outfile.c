/* Unit tests for outfile: a write that fails half-way (here a file size
 * limit, as a full disk does) leaves no file and says which file, why, and
 * how much the whole output needed; the same for a recording built in
 * memory, which can then be written elsewhere. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "profile.h"
#include "recording.h"

static char dir[] = "/tmp/sonde-unit-outfile-XXXXXX";

static void limit_file_size(rlim_t bytes)
{
	signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
	struct rlimit rl;
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = bytes < rl.rlim_max ? bytes : rl.rlim_max; /* the soft limit only */
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static size_t files_in_dir(void)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	cr_assert_eq(fscanf(p, "%zu", &n), 1);
	pclose(p);
	return n;
}

Test(outfile, a_failed_write_says_what_it_needed)
{
	cr_assert_not_null(mkdtemp(dir));
	limit_file_size(64 << 10);
	char path[512], err[512] = "";
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	struct outfile o;
	cr_assert_eq(outfile_open(&o, path, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 200000; i++) /* 200,000 bytes: past the limit */
		fputc('x', o.f);
	cr_assert_not(ferror(o.f), "the writer is not stopped: the size is counted");
	cr_assert_eq(outfile_commit(&o, err, sizeof(err)), -1);
	char want[600];
	snprintf(want, sizeof(want), "cannot write %s: File too large: it needs 195.3 kB", path);
	cr_assert_str_eq(err, want);
	cr_assert_not(exists(path));
	cr_assert_eq(files_in_dir(), 0, "the temporary file is gone too");
	rmdir(dir);
}

Test(outfile, a_recording_that_did_not_fit_is_written_elsewhere)
{
	cr_assert_not_null(mkdtemp(dir));
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
	char path[512], want[600], need[32];
	snprintf(path, sizeof(path), "%s/run.sonde", dir);
	cr_assert_eq(recording_image_write(img, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot write %s: File too large: it needs %s", path,
		 outfile_size_text(size, need, sizeof(need)));
	cr_assert_str_eq(err, want);
	cr_assert_not(exists(path));
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), -1);
	cr_assert_str_eq(err, want, "recording_save says the same");

	/* the image survives: written once there is room, it is the recording */
	limit_file_size(RLIM_INFINITY);
	cr_assert_eq(recording_image_write(img, path, err, sizeof(err)), 0, "%s", err);
	struct profile *q = recording_load(path, err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 20000);
	profile_free(q);
	recording_image_free(img);
	profile_free(p);
	unlink(path);
	rmdir(dir);
}

Test(outfile, sizes_for_messages)
{
	char b[32];
	cr_assert_str_eq(outfile_size_text(512, b, sizeof(b)), "512 bytes");
	cr_assert_str_eq(outfile_size_text(200000, b, sizeof(b)), "195.3 kB");
	cr_assert_str_eq(outfile_size_text(52428800, b, sizeof(b)), "50.0 MB");
	cr_assert_str_eq(outfile_size_text(3ull << 30, b, sizeof(b)), "3.0 GB");
}
