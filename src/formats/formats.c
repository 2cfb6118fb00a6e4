#define _GNU_SOURCE
#include "formats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrometrace.h"
#include "filebuf.h"
#include "folded.h"
#include "nflx.h"
#include "outfile.h"
#include "perfscript.h"
#include "pprof.h"
#include "recording.h"
#include "speedscope.h"
#include "util.h"

static const struct {
	enum format f;
	const char *name, *alias;
} names[] = {
	{FORMAT_RECORDING, "sonde", "recording"}, {FORMAT_PERF_SCRIPT, "perf-script", "perf"},
	{FORMAT_FOLDED, "folded", "collapsed"},   {FORMAT_PPROF, "pprof", NULL},
	{FORMAT_NFLX, "nflx", "nflxprofile"},     {FORMAT_SPEEDSCOPE, "speedscope", NULL},
	{FORMAT_CHROME, "chrome", "perfetto"},
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

const char *format_name(enum format f)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (names[i].f == f)
			return names[i].name;
	return "unknown";
}

enum format format_parse(const char *name)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (!strcmp(name, names[i].name) || (names[i].alias && !strcmp(name, names[i].alias)))
			return names[i].f;
	return FORMAT_UNKNOWN;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

enum format format_from_output_name(const char *path)
{
	static const struct {
		const char *suffix;
		enum format f;
	} by_suffix[] = {
		{".sonde", FORMAT_RECORDING},       {".folded", FORMAT_FOLDED},
		{".collapsed", FORMAT_FOLDED},      {".pb.gz", FORMAT_PPROF},
		{".pprof", FORMAT_PPROF},           {".pb", FORMAT_PPROF},
		{".nflx", FORMAT_NFLX},             {".nflxprofile", FORMAT_NFLX},
		{".speedscope.json", FORMAT_SPEEDSCOPE}, {".trace.json", FORMAT_CHROME},
		{".chrome.json", FORMAT_CHROME},    {".perfetto.json", FORMAT_CHROME},
	};
	for (size_t i = 0; i < sizeof(by_suffix) / sizeof(by_suffix[0]); i++)
		if (ends_with(path, by_suffix[i].suffix))
			return by_suffix[i].f;
	return FORMAT_UNKNOWN;
}

/* An input opened for reading: its format, detected from the head (or
 * forced), and for the formats read whole, the whole of it. */
struct input {
	const char *path;
	struct infile in;
	enum format f;
	struct filebuf whole; /* pprof and nflx only */
};

/* Text detection looks at whole lines: a head cut mid-line loses its last. */
static size_t whole_lines(const uint8_t *head, size_t len, bool complete)
{
	if (complete)
		return len;
	const uint8_t *nl = memrchr(head, '\n', len);
	return nl ? (size_t)(nl - head) + 1 : 0;
}

static enum format detect_binary(const uint8_t *data, size_t len)
{
	if (nflx_detect(data, len))
		return FORMAT_NFLX;
	if (pprof_detect(data, len))
		return FORMAT_PPROF;
	return FORMAT_UNKNOWN;
}

/* From the head only, except a protobuf format in an input longer than its
 * head: the head says whether it may be one, and only then is the input
 * read whole (capped) to be sure. */
static int detect(struct input *x, char *err, size_t errlen)
{
	const uint8_t *head;
	size_t len;
	bool complete;
	char inner[256];
	if (infile_head(&x->in, &head, &len, &complete, inner, sizeof(inner))) {
		snprintf(err, errlen, "%s: %s", x->path, inner);
		return -1;
	}
	size_t text = whole_lines(head, len, complete);
	if (len >= 16 && memcmp(head, "SQLite format 3", 16) == 0)
		x->f = FORMAT_RECORDING;
	else if (perfscript_detect((const char *)head, text))
		x->f = FORMAT_PERF_SCRIPT;
	else if (folded_detect((const char *)head, text))
		x->f = FORMAT_FOLDED;
	else if (complete)
		x->f = detect_binary(head, len);
	else if (nflx_detect_head(head, len) || pprof_detect_head(head, len)) {
		if (filebuf_from_infile(&x->in, "pprof and nflxprofile", &x->whole, inner,
					sizeof(inner))) {
			snprintf(err, errlen, "%s: %s", x->path, inner);
			return -1;
		}
		x->f = detect_binary(x->whole.data, x->whole.len);
	}
	return 0;
}

static void input_close(struct input *x)
{
	infile_close(&x->in);
	filebuf_free(&x->whole);
}

/* Opens `path` and finds its format (`forced`, or detected). Returns 0, or
 * -1 with err (unreadable, unrecognized). */
static int input_open(struct input *x, const char *path, enum format forced, char *err,
		      size_t errlen)
{
	memset(x, 0, sizeof(*x));
	x->path = path;
	if (infile_open(&x->in, path, err, errlen))
		return -1;
	x->f = forced;
	if (forced)
		return 0;
	int rc = detect(x, err, errlen);
	if (!rc && x->f == FORMAT_UNKNOWN) {
		snprintf(err, errlen,
			 "%s: unrecognized format (sonde reads sonde recordings, perf script, folded "
			 "stacks, pprof and nflxprofile; force one with --from)",
			 path);
		rc = -1;
	}
	if (rc)
		input_close(x);
	return rc;
}

/* The input whole (pprof, nflx), if detection did not read it already. */
static int input_whole(struct input *x, char *err, size_t errlen)
{
	if (x->whole.data)
		return 0;
	char inner[256];
	if (filebuf_from_infile(&x->in, format_name(x->f), &x->whole, inner, sizeof(inner))) {
		snprintf(err, errlen, "%s: %s", x->path, inner);
		return -1;
	}
	return 0;
}

static struct profile *parse(struct input *x, char *err, size_t errlen)
{
	char inner[512] = "";
	struct profile *p = NULL;
	switch (x->f) {
	case FORMAT_RECORDING: {
		const uint8_t *head; /* read when the format was forced, for in.gzip */
		size_t len;
		if (infile_head(&x->in, &head, &len, NULL, inner, sizeof(inner)) == 0 && x->in.gzip) {
			snprintf(err, errlen, "%s: a gzipped recording: gunzip it first", x->path);
			return NULL;
		}
		if (strcmp(x->path, "-") == 0) {
			snprintf(err, errlen, "a recording cannot be read from standard input: give "
					      "its file name");
			return NULL;
		}
		return recording_load(x->path, err, errlen);
	}
	case FORMAT_PERF_SCRIPT:
		p = perfscript_read_lines(&x->in, inner, sizeof(inner));
		break;
	case FORMAT_FOLDED:
		p = folded_read_lines(&x->in, inner, sizeof(inner));
		break;
	case FORMAT_PPROF:
		if (input_whole(x, err, errlen))
			return NULL;
		p = pprof_read(x->whole.data, x->whole.len, inner, sizeof(inner));
		break;
	case FORMAT_NFLX:
		if (input_whole(x, err, errlen))
			return NULL;
		p = nflx_read(x->whole.data, x->whole.len, inner, sizeof(inner));
		break;
	default:
		snprintf(err, errlen, "sonde cannot read %s files (%s)", format_name(x->f), x->path);
		return NULL;
	}
	if (!p)
		snprintf(err, errlen, "%s: not a valid %s file: %s", x->path, format_name(x->f), inner);
	return p;
}

struct profile *formats_load(const char *path, enum format forced, enum format *detected,
			     char *err, size_t errlen)
{
	struct input x;
	if (input_open(&x, path, forced, err, errlen))
		return NULL;
	if (detected)
		*detected = x.f;
	struct profile *p = parse(&x, err, errlen);
	input_close(&x);
	return p;
}

static int write_folded(FILE *f, struct profile *p, const struct folded_modes *m)
{
	enum flame_root root = m->tid ? FLAME_ROOT_TID : m->pid ? FLAME_ROOT_PID : FLAME_ROOT_COMM;
	struct flame_tree *t = profile_flame(p, NULL, root);
	unsigned kinds = FOLDED_ANNOTATE_INLINED;
	if (m->kernel)
		kinds |= FOLDED_ANNOTATE_KERNEL;
	if (m->jit)
		kinds |= FOLDED_ANNOTATE_JIT;
	int rc = folded_write_kinds(f, t, kinds);
	flame_free(t);
	return rc;
}

static int write_profile(FILE *f, struct profile *p, enum format to, const char *in,
			 const struct folded_modes *m)
{
	switch (to) {
	case FORMAT_FOLDED:
		return write_folded(f, p, m);
	case FORMAT_PPROF:
		return pprof_write(f, p, NULL);
	case FORMAT_NFLX:
		return nflx_write(f, p);
	case FORMAT_SPEEDSCOPE:
		return speedscope_write(f, p, in);
	case FORMAT_CHROME:
		return chrometrace_write(f, p);
	default:
		return -1;
	}
}

/* perf script -> folded keeps stackcollapse-perf.pl's exact rules. */
static int collapse_perf(struct input *x, FILE *out, const struct folded_modes *m, char *err,
			 size_t errlen)
{
	struct collapse_options o = {
		.pid = m->pid, .tid = m->tid, .kernel = m->kernel, .jit = m->jit, .addrs = m->addrs,
		.event = m->event,
	};
	char inner[512];
	int rc = perfscript_collapse_lines(&x->in, &o, out, inner, sizeof(inner));
	if (rc)
		snprintf(err, errlen, "%s: %s", x->path, inner);
	return rc;
}

/* The input is read once (it may be standard input). */
int formats_convert(const char *in, enum format from, const char *out, enum format to,
		    const struct folded_modes *modes, char *err, size_t errlen)
{
	static const struct folded_modes none = {0};
	if (!modes)
		modes = &none;
	struct input x;
	if (input_open(&x, in, from, err, errlen))
		return -1;
	bool collapse = x.f == FORMAT_PERF_SCRIPT && to == FORMAT_FOLDED;
	struct profile *p = NULL;
	int rc = -1;
	if (!collapse && !(p = parse(&x, err, errlen)))
		goto out;
	/* Other formats cannot tell sonde's own samples apart: leave them out,
	 * as every view does. A recording keeps everything. */
	if (p && to != FORMAT_RECORDING && !modes->show_overhead)
		profile_drop_overhead(p);
	if (to == FORMAT_RECORDING) {
		rc = recording_save(p, out, err, errlen);
		goto out;
	}
	struct outfile o;
	if (outfile_open(&o, out, err, errlen))
		goto out;
	errno = 0;
	rc = collapse ? collapse_perf(&x, o.f, modes, err, errlen)
		      : write_profile(o.f, p, to, in, modes);
	if (rc) {
		/* errno tells why when the stream failed (a full disk), or when the
		 * counts do not fit the format. */
		int e = errno;
		if (*err) {
			/* the writer said why */
		} else if (ferror(o.f)) {
			snprintf(err, errlen, "writing %s failed%s%s", out, e ? ": " : "",
				 e ? strerror(e) : "");
		} else if (e == EOVERFLOW) {
			snprintf(err, errlen,
				 "cannot write %s: the sample weights in nanoseconds (weight x "
				 "sampling interval) are more than %s can hold",
				 out, format_name(to));
		} else {
			snprintf(err, errlen, "writing %s failed", out);
		}
		outfile_abort(&o);
	} else {
		rc = outfile_commit(&o, err, errlen);
	}
out:
	profile_free(p);
	input_close(&x);
	return rc;
}
