/* Unit tests for recordids: the probe a span or values record belongs to,
 * NO_PROBE for records of other kinds and for short ones. */
#include <criterion/criterion.h>

#include "recordids.h"
#include "sonde_abi.h"

Test(recordids, a_span_names_its_probe)
{
	struct sonde_span s = {.hdr.kind = SONDE_REC_SPAN, .probe = 7, .span_id = 42};
	cr_expect_eq(record_probe(&s, sizeof(s)), 7);
}

Test(recordids, values_name_their_probe)
{
	struct sonde_values v = {.hdr.kind = SONDE_REC_VALUES, .probe = 3, .nvalues = 1};
	cr_expect_eq(record_probe(&v, sizeof(v)), 3);
}

Test(recordids, other_kinds_name_no_probe)
{
	struct sonde_sample s = {.hdr.kind = SONDE_REC_SAMPLE, .nspans = 1, .span_probes = {7}};
	cr_expect_eq(record_probe(&s, sizeof(s)), NO_PROBE,
		     "a sample's calls in flight are not the record's own probe");
	struct sonde_thread_sample t = {.hdr.kind = SONDE_REC_THREAD, .nspans = 1,
					.span_probes = {7}};
	cr_expect_eq(record_probe(&t, sizeof(t)), NO_PROBE);
}

Test(recordids, a_short_record_names_no_probe)
{
	struct sonde_span s = {.hdr.kind = SONDE_REC_SPAN, .probe = 7};
	cr_expect_eq(record_probe(&s, sizeof(s) - 1), NO_PROBE);
	cr_expect_eq(record_probe(&s, sizeof(s.hdr) - 1), NO_PROBE);
}
