#include "formats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "outfile.h"
#include "util.h"

static void input_close(struct format_input *x)
{
	infile_close(&x->in);
	filebuf_free(&x->whole);
}

/* Opens `path` and finds its format (`forced`, or detected) into *f.
 * Returns 0, or -1 with err (unreadable, unrecognized). */
static int input_open(struct format_input *x, const char *path, const struct format_entry *forced,
		      const struct format_entry **f, char *err, size_t errlen)
{
	memset(x, 0, sizeof(*x));
	x->path = path;
	if (infile_open(&x->in, path, err, errlen))
		return -1;
	*f = forced;
	if (forced)
		return 0;
	int rc = registry_detect(x, f, err, errlen);
	if (!rc && !*f) {
		char readable[256];
		registry_list_readable(readable, sizeof(readable));
		errbuf_set(err, errlen,
			   "%s: unrecognized format (sonde reads %s; force one with --from)", path,
			   readable);
		rc = -1;
	}
	if (rc)
		input_close(x);
	return rc;
}

/* The input whole, if detection did not read it already. */
static int input_whole(struct format_input *x, const struct format_entry *f, char *err,
		       size_t errlen)
{
	if (x->whole.data)
		return 0;
	char inner[256];
	if (filebuf_from_infile(&x->in, f->name, &x->whole, inner, sizeof(inner))) {
		errbuf_set(err, errlen, "%s: %s", x->path, inner);
		return -1;
	}
	return 0;
}

static struct profile *parse(struct format_input *x, const struct format_entry *f, char *err,
			     size_t errlen)
{
	if (!registry_can_read(f)) {
		errbuf_set(err, errlen, "sonde cannot read %s files (%s)", f->name, x->path);
		return NULL;
	}
	if (f->read_input)
		return f->read_input(x, err, errlen);
	char inner[512] = "";
	struct profile *p;
	if (f->read_lines) {
		p = f->read_lines(&x->in, inner, sizeof(inner));
	} else {
		if (input_whole(x, f, err, errlen))
			return NULL;
		p = f->read_whole(x->whole.data, x->whole.len, inner, sizeof(inner));
	}
	if (!p)
		errbuf_set(err, errlen, "%s: not a valid %s file: %s", x->path, f->name, inner);
	return p;
}

struct profile *formats_load(const char *path, const struct format_entry *forced,
			     const struct format_entry **detected, char *err, size_t errlen)
{
	struct format_input x;
	const struct format_entry *f;
	if (input_open(&x, path, forced, &f, err, errlen))
		return NULL;
	if (detected)
		*detected = f;
	struct profile *p = parse(&x, f, err, errlen);
	input_close(&x);
	return p;
}

/* Writes p (or, for a direct conversion, the input streamed) to `out`
 * through an outfile: committed when complete, removed otherwise. */
static int write_output(struct format_input *x, const struct format_conversion *c,
			struct profile *p, char *err, size_t errlen)
{
	const char *out = c->out;
	const struct format_entry *to = c->to;
	struct outfile o;
	if (outfile_open(&o, out, err, errlen))
		return -1;
	errno = 0;
	int rc;
	if (p) {
		struct format_write_options wo = {.input = x->path, .modes = c->modes};
		rc = to->write(o.f, p, &wo);
	} else {
		char inner[512];
		rc = c->from->direct(&x->in, o.f, c, inner, sizeof(inner));
		if (rc)
			errbuf_set(err, errlen, "%s: %s", x->path, inner);
	}
	if (rc) {
		/* errno tells why when the stream failed (a full disk), or when the
		 * counts do not fit the format. */
		int e = errno;
		if (*err) {
			/* the writer said why */
		} else if (ferror(o.f)) {
			errbuf_set(err, errlen, "writing %s failed%s%s", out, e ? ": " : "",
				   e ? strerror(e) : "");
		} else if (e == EOVERFLOW) {
			errbuf_set(err, errlen,
				   "cannot write %s: the sample weights in nanoseconds (weight x "
				   "sampling interval) are more than %s can hold",
				   out, to->name);
		} else {
			errbuf_set(err, errlen, "writing %s failed", out);
		}
		outfile_abort(&o);
		return rc;
	}
	return outfile_commit(&o, err, errlen);
}

/* Keeps the on-CPU samples of one event: `event`, or the main one; says in
 * note how many of others were left out. Returns 0, or -1 with err. */
static int keep_one_event(struct profile *p, const char *event, char *note, size_t notelen,
			  char *err, size_t errlen)
{
	uint32_t ev = p->main_event;
	if (event && event[0]) {
		struct view v = {.event = event};
		if (view_set_event(&v, p, err, errlen))
			return -1;
		ev = v.event_plus1 - 1;
	}
	if (ev == UINT32_MAX)
		return 0;
	size_t dropped = profile_keep_event(p, ev);
	if (dropped && note && notelen) {
		size_t k = strlen(note);
		snprintf(note + k, notelen - k,
			 "%s%zu samples of other events than %s left out (--event picks one)",
			 k ? "; " : "", dropped, p->events[ev]);
	}
	return 0;
}

/* The input is read once (it may be standard input). */
int formats_convert(const struct format_conversion *conv, char *err, size_t errlen)
{
	struct format_conversion c = *conv;
	const struct format_entry *from = c.from, *to = c.to;
	const char *in = c.in, *out = c.out;
	char *note = c.note;
	size_t notelen = c.notelen;
	if (note && notelen)
		note[0] = 0;
	static const struct folded_modes none = {0};
	if (!c.modes)
		c.modes = &none;
	const struct folded_modes *modes = c.modes;
	if (!registry_can_write(to)) {
		errbuf_set(err, errlen, "sonde cannot write %s files (%s)", to->name, out);
		return -1;
	}
	struct format_input x;
	if (input_open(&x, in, from, &from, err, errlen))
		return -1;
	c.from = from; /* as detected */
	bool direct = from->direct && from->direct_to == to && to->write && !modes->time;
	struct profile *p = NULL;
	int rc = -1;
	if (!direct && !(p = parse(&x, from, err, errlen)))
		goto out;
	if (p && note && notelen)
		profile_input_note(p, note, notelen);
	/* Weights of different events do not add up: one event's samples go
	 * out (the first, or --event's), as stackcollapse-perf.pl keeps the
	 * first. A recording keeps everything. */
	if (p && !to->marks_overhead && keep_one_event(p, modes->event, note, notelen, err, errlen))
		goto out;
	/* Other formats cannot tell sonde's own samples apart: leave them out,
	 * as every view does. A recording keeps everything. */
	if (p && !to->marks_overhead && !modes->show_overhead)
		profile_drop_overhead(p);
	/* Off-CPU intervals weigh nanoseconds: other formats get the time the
	 * user asked for, in microseconds, or on-CPU samples alone. A
	 * recording keeps everything unless asked. */
	if (p && (modes->time || (!to->marks_overhead && (p->offcpu_event != UINT32_MAX || p->waker_event != UINT32_MAX))) &&
	    view_profile_rewrite(p, modes->time, modes->time ? 1000 : 1, err, errlen))
		goto out;
	rc = to->save ? to->save(p, out, err, errlen)
		      : write_output(&x, &c, p, err, errlen);
out:
	profile_free(p);
	input_close(&x);
	return rc;
}
