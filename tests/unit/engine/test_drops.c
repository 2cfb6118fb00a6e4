/* Unit tests for drops: the kernel's counters as the summary and the live
 * status show them, built from the one table in sonde_abi.h; every existing
 * counter keeps its meta key and its words. */
#include <criterion/criterion.h>
#include <string.h>

#include "drops.h"
#include "sonde_abi.h"

static struct engine_stats sample_stats(void)
{
	struct engine_stats es = {0};
	es.count[SONDE_CNT_LOST_SAMPLES] = 3;
	es.count[SONDE_CNT_LOST_SPANS] = 5;
	es.count[SONDE_CNT_LOST_TASK] = 7;
	es.count[SONDE_CNT_SPAN_OVERFLOW] = 11;
	es.count[SONDE_CNT_SPAN_ORPHAN] = 13;
	es.count[SONDE_CNT_THREADS_FULL] = 17;
	es.count[SONDE_CNT_TARGETS_FULL] = 19;
	es.count[SONDE_CNT_END_COMPLETE] = 23;
	es.count[SONDE_CNT_END_NO_TABLE] = 29;
	es.count[SONDE_CNT_END_TABLE_MISS] = 31;
	es.count[SONDE_CNT_END_READ_FAULT] = 37;
	es.count[SONDE_CNT_END_DEPTH] = 41;
	es.count[SONDE_CNT_END_UNSUPPORTED] = 43;
	es.count[SONDE_CNT_TABLE_MISS] = 47;
	es.count[SONDE_CNT_LOST_VALUES] = 53;
	es.count[SONDE_CNT_FETCH_FAULT] = 59;
	es.count[SONDE_CNT_FILE_FOUND] = 61;
	es.count[SONDE_CNT_LOST_OFFCPU] = 67;
	es.count[SONDE_CNT_OFFCPU_FULL] = 71;
	es.count[SONDE_CNT_OFFCPU_SHORT] = 73;
	es.count[SONDE_CNT_LOST_THREADS] = 79;
	es.count[SONDE_CNT_TSTATE_FULL] = 83;
	es.count[SONDE_CNT_PY_COMPLETE] = 89;
	es.count[SONDE_CNT_PY_CUT] = 97;
	es.count[SONDE_CNT_PY_NO_THREAD] = 101;
	es.count[SONDE_CNT_PY_NO_FRAME] = 103;
	return es;
}

Test(drops, members_and_indices_are_the_same_counters)
{
	struct engine_stats es = sample_stats();
	cr_assert_eq(es.count[SONDE_CNT_LOST_SAMPLES], 3);
	cr_assert_eq(es.count[SONDE_CNT_LOST_SPANS], 5);
	cr_assert_eq(es.count[SONDE_CNT_LOST_TASK], 7);
	cr_assert_eq(es.count[SONDE_CNT_SPAN_OVERFLOW], 11);
	cr_assert_eq(es.count[SONDE_CNT_SPAN_ORPHAN], 13);
	cr_assert_eq(es.count[SONDE_CNT_THREADS_FULL], 17);
	cr_assert_eq(es.count[SONDE_CNT_TARGETS_FULL], 19);
	cr_assert_eq(es.count[SONDE_CNT_END_COMPLETE], 23);
	cr_assert_eq(es.count[SONDE_CNT_END_COMPLETE + SONDE_END_NO_TABLE], 29);
	cr_assert_eq(es.count[SONDE_CNT_END_COMPLETE + SONDE_END_TABLE_MISS], 31);
	cr_assert_eq(es.count[SONDE_CNT_END_COMPLETE + SONDE_END_READ_FAULT], 37);
	cr_assert_eq(es.count[SONDE_CNT_END_COMPLETE + SONDE_END_DEPTH], 41);
	cr_assert_eq(es.count[SONDE_CNT_END_COMPLETE + SONDE_END_UNSUPPORTED], 43);
	cr_assert_eq(es.count[SONDE_CNT_TABLE_MISS], 47);
	cr_assert_eq(es.count[SONDE_CNT_LOST_VALUES], 53);
	cr_assert_eq(es.count[SONDE_CNT_FETCH_FAULT], 59);
	cr_assert_eq(es.count[SONDE_CNT_FILE_FOUND], 61);
	cr_assert_eq(es.count[SONDE_CNT_LOST_OFFCPU], 67);
	cr_assert_eq(es.count[SONDE_CNT_OFFCPU_FULL], 71);
	cr_assert_eq(es.count[SONDE_CNT_OFFCPU_SHORT], 73);
	cr_assert_eq(es.count[SONDE_CNT_LOST_THREADS], 79);
	cr_assert_eq(es.count[SONDE_CNT_TSTATE_FULL], 83);
	cr_assert_eq(es.count[SONDE_CNT_PY_COMPLETE], 89);
	cr_assert_eq(es.count[SONDE_CNT_PY_CUT], 97);
	cr_assert_eq(es.count[SONDE_CNT_PY_NO_THREAD], 101);
	cr_assert_eq(es.count[SONDE_CNT_PY_NO_FRAME], 103);
	cr_assert_eq(SONDE_CNT_NUM, 26);
}

Test(drops, meta_keys_stay)
{
	cr_assert_str_eq(drops_key(SONDE_CNT_LOST_SAMPLES), "lost_samples");
	cr_assert_str_eq(drops_key(SONDE_CNT_LOST_TASK), "lost_task_events");
	cr_assert_str_eq(drops_key(SONDE_CNT_LOST_SPANS), "lost_spans");
	cr_assert_str_eq(drops_key(SONDE_CNT_SPAN_OVERFLOW), "span_depth_overflow");
	cr_assert_str_eq(drops_key(SONDE_CNT_SPAN_ORPHAN), "span_orphans");
	cr_assert_str_eq(drops_key(SONDE_CNT_THREADS_FULL), "threads_full");
	cr_assert_str_eq(drops_key(SONDE_CNT_TARGETS_FULL), "children_not_followed");
	cr_assert_str_eq(drops_key(SONDE_CNT_END_COMPLETE), "stacks_complete");
	cr_assert_str_eq(drops_key(SONDE_CNT_END_READ_FAULT), "stacks_end_read_fault");
	cr_assert_str_eq(drops_key(SONDE_CNT_TABLE_MISS), "unwind_table_misses");
	cr_assert_str_eq(drops_key(SONDE_CNT_LOST_VALUES), "lost_values");
	cr_assert_str_eq(drops_key(SONDE_CNT_FETCH_FAULT), "fetch_faults");
	cr_assert_str_eq(drops_key(SONDE_CNT_FILE_FOUND), "unwind_found_by_file");
	cr_assert_str_eq(drops_key(SONDE_CNT_LOST_THREADS), "lost_thread_states");
	cr_assert_str_eq(drops_key(SONDE_CNT_TSTATE_FULL), "thread_states_full");
	cr_assert_str_eq(drops_key(SONDE_CNT_PY_COMPLETE), "python_stacks_complete");
	cr_assert_str_eq(drops_key(SONDE_CNT_PY_NO_THREAD), "python_no_thread_state");
	cr_assert_str_eq(drops_key(SONDE_CNT_PY_NO_FRAME), "py_calls_without_frame");
	cr_assert_str_eq(drops_key(SONDE_CNT_NUM), "");
}

Test(drops, the_sentences_list_their_counters)
{
	struct engine_stats es = sample_stats();
	char buf[256];
	cr_assert_str_eq(drops_list(&es, DROPS_LOST, buf, sizeof(buf)),
			 "3 samples, 5 calls, 7 process events, 53 captured values, 79 thread states, "
			 "67 off-CPU intervals");
	cr_assert_str_eq(drops_list(&es, DROPS_MISSES, buf, sizeof(buf)), "47 table misses, 61 found by file in the kernel");
	cr_assert_str_eq(drops_list(&es, DROPS_VALUES, buf, sizeof(buf)),
			 "59 failed reads of captured values");
	cr_assert_str_eq(drops_list(&es, DROPS_OFFCPU, buf, sizeof(buf)),
			 "71 not kept (switched-out thread map full), 73 shorter than --min-block");
	cr_assert_str_eq(drops_list(&es, DROPS_UNTIMED, buf, sizeof(buf)),
			 "11 calls nested too deep, 13 without return, 17 with no thread slot, 103 "
			 "Python calls whose frame could not be read");
	cr_assert_str_eq(drops_list(&es, DROPS_CHILDREN, buf, sizeof(buf)),
			 "19 child processes not followed (target map full), 83 threads without a state "
			 "(thread-state map full)");
	cr_assert_str_eq(drops_list(&es, DROPS_UNWIND, buf, sizeof(buf)),
			 "23 complete, 29 no table, 31 table miss, 37 read fault, 41 depth limit, "
			 "43 unsupported rule or bad frame");
	cr_assert_str_eq(drops_list(&es, DROPS_PYTHON, buf, sizeof(buf)),
			 "89 complete, 97 cut (unreadable frame or depth limit), 101 of threads without "
			 "a Python thread state");
	/* a short buffer cuts the list, never overruns */
	char small[12];
	cr_assert_str_eq(drops_list(&es, DROPS_LOST, small, sizeof(small)), "3 samples, ");
}

Test(drops, sums_by_sentence_and_for_the_live_status)
{
	struct engine_stats es = sample_stats();
	cr_assert_eq(drops_sum(&es, DROPS_LOST, false), 3 + 5 + 7 + 53 + 79 + 67);
	cr_assert_eq(drops_sum(&es, DROPS_OFFCPU, false), 71 + 73);
	/* intervals shorter than --min-block are left out by design: no drop */
	cr_assert_eq(drops_sum(&es, DROPS_OFFCPU, true), 71);
	cr_assert_eq(drops_sum(&es, DROPS_UNTIMED, false), 11 + 13 + 17 + 103);
	/* calls without a return are untimed but not a drop of the live status */
	cr_assert_eq(drops_sum(&es, DROPS_UNTIMED, true), 11 + 17 + 103);
	cr_assert_eq(drops_sum(&es, DROPS_CHILDREN, false), 19 + 83);
	cr_assert_eq(drops_sum(&es, DROPS_ANY, true),
		     3 + 5 + 7 + 11 + 17 + 19 + 53 + 79 + 83 + 67 + 71 + 103);
	cr_assert_eq(drops_sum(&es, DROPS_ANY, false),
		     3 + 5 + 7 + 11 + 13 + 17 + 19 + 23 + 29 + 31 + 37 + 41 + 43 + 47 + 53 + 59 + 61 + 79 +
			     83 + 67 + 71 + 73 + 89 + 97 + 101 + 103);
}
