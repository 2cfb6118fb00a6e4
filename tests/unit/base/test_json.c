/* json: the reader (every type, nesting, escapes and surrogate pairs to
 * UTF-8, exact error messages for malformed texts, the depth limit, never
 * reading past the length given) and the writers read back by it (strings
 * with control characters, numbers, null for NaN). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static struct json_value *parse(const char *text)
{
	char err[256] = "";
	struct json_value *v = json_parse(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(v, "%s: %s", text, err);
	return v;
}

static void expect_error(const char *text, size_t len, const char *want)
{
	char err[256] = "";
	struct json_value *v = json_parse(text, len, err, sizeof(err));
	cr_assert_null(v, "parsed: %s", text);
	cr_assert_str_eq(err, want, "for %s", text);
}

Test(json, every_type_and_json_get)
{
	struct json_value *v = parse(" {\"ok\":true,\"no\":false,\"n\":-12.5e1,\"z\":0,\"s\":\"a b\","
				     "\"none\":null,\"a\":[1,[2,{}],\"x\"],\"o\":{\"k\":\"v\"}}\n");
	cr_assert_eq(v->type, JSON_OBJECT);
	cr_assert_eq(v->n, 8);
	const struct json_value *x = json_get(v, "ok");
	cr_assert(x && x->type == JSON_BOOL && x->boolean);
	x = json_get(v, "no");
	cr_assert(x && x->type == JSON_BOOL && !x->boolean);
	x = json_get(v, "n");
	cr_assert(x && x->type == JSON_NUMBER && x->number == -125.0);
	x = json_get(v, "z");
	cr_assert(x && x->type == JSON_NUMBER && x->number == 0);
	x = json_get(v, "s");
	cr_assert(x && x->type == JSON_STRING);
	cr_assert_str_eq(x->string, "a b");
	cr_assert_eq(x->len, 3);
	cr_assert_eq(json_get(v, "none")->type, JSON_NULL);
	x = json_get(v, "a");
	cr_assert(x && x->type == JSON_ARRAY && x->n == 3);
	cr_assert_eq(x->items[0].number, 1);
	cr_assert_eq(x->items[1].type, JSON_ARRAY);
	cr_assert_eq(x->items[1].items[1].type, JSON_OBJECT);
	cr_assert_eq(x->items[1].items[1].n, 0);
	cr_assert_str_eq(x->items[2].string, "x");
	cr_assert_str_eq(json_get(json_get(v, "o"), "k")->string, "v");
	cr_assert_null(json_get(v, "missing"));
	cr_assert_null(json_get(x, "k"), "an array has no members");
	cr_assert_null(json_get(NULL, "k"));
	json_free(v);
}

Test(json, escapes_decode_to_utf8)
{
	struct json_value *v = parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\u20AC \\ud83d\\ude00\"");
	cr_assert_str_eq(v->string, "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	cr_assert_eq(v->len, strlen(v->string));
	json_free(v);
}

Test(json, malformed_texts_exact_errors)
{
	expect_error("", 0, "bad JSON at byte 0: expected a value");
	expect_error("{\"a\":1} x", 9, "bad JSON at byte 8: more after the value");
	expect_error("\"abc", 4, "bad JSON at byte 1: unterminated string");
	expect_error("01", 2, "bad JSON at byte 2: malformed number");
	expect_error("1.", 2, "bad JSON at byte 2: malformed number");
	expect_error("[1,]", 4, "bad JSON at byte 3: expected a value");
	expect_error("{\"a\" 1}", 7, "bad JSON at byte 5: expected ':' after a member name");
	expect_error("{1:2}", 5, "bad JSON at byte 1: expected a member name");
	expect_error("[1 2]", 5, "bad JSON at byte 3: expected ',' or ']'");
	expect_error("tru", 3, "bad JSON at byte 0: expected a value");
	expect_error("\"\\x\"", 4, "bad JSON at byte 2: bad escape in a string");
	expect_error("\"\\u00\"", 6, "bad JSON at byte 3: bad \\u escape");
	expect_error("\"\\udc00\"", 8, "bad JSON at byte 7: lone low surrogate");
	expect_error("\"\\ud800x\"", 9, "bad JSON at byte 7: high surrogate without its low half");
	expect_error("\"\\u0000\"", 8, "bad JSON at byte 7: \\u0000 in a string");
	expect_error("\"a\nb\"", 5, "bad JSON at byte 2: control character in a string");
	/* The length is the end: "true" cut to "tr", a string to its quote. */
	expect_error("true", 2, "bad JSON at byte 0: expected a value");
	expect_error("\"ab\"", 3, "bad JSON at byte 1: unterminated string");
}

Test(json, depth_limit)
{
	char deep[2 * (JSON_MAX_DEPTH + 1) + 1];
	for (int i = 0; i < JSON_MAX_DEPTH; i++) {
		deep[i] = '[';
		deep[2 * JSON_MAX_DEPTH - 1 - i] = ']';
	}
	deep[2 * JSON_MAX_DEPTH] = 0;
	json_free(parse(deep)); /* 64 levels: fine */
	for (int i = 0; i <= JSON_MAX_DEPTH; i++) {
		deep[i] = '[';
		deep[2 * JSON_MAX_DEPTH + 1 - i] = ']';
	}
	deep[2 * JSON_MAX_DEPTH + 2] = 0;
	expect_error(deep, strlen(deep), "bad JSON at byte 64: nested too deep");
}

Test(json, writers_read_back)
{
	const char *s = "ctl \x01 \x7f \"q\" \\ \n\t \xc3\xa9 \xc2\x9b";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	fputc('[', f);
	json_write_string(f, s);
	fputc(',', f);
	json_write_number(f, 3);
	fputc(',', f);
	json_write_number(f, -2.5);
	fputc(',', f);
	json_write_number(f, 1e15);
	fputc(',', f);
	json_write_number(f, NAN);
	fputc(',', f);
	json_write_number(f, INFINITY);
	fputc(']', f);
	fclose(f);
	cr_assert_str_eq(text, "[\"ctl \\u0001 \\u007f \\\"q\\\" \\\\ \\n\\t \xc3\xa9 \\u009b\","
			       "3,-2.5,1000000000000000,null,null]");
	struct json_value *v = parse(text);
	cr_assert_eq(v->n, 6);
	cr_assert_str_eq(v->items[0].string, s);
	cr_assert_eq(v->items[1].number, 3);
	cr_assert_eq(v->items[2].number, -2.5);
	cr_assert_eq(v->items[3].number, 1e15);
	cr_assert_eq(v->items[4].type, JSON_NULL);
	json_free(v);
	free(text);
}

/* json_write_value writes back what sonde's writers wrote (numbers with
 * json_write_number's digits), and json_equal tells values apart by type,
 * value, element and member (names and order). */
Test(json, write_value_and_equal)
{
	const char *text = "{\"a\":[1,-2.5,0.333333,1000000000000000,null,true,false],"
			   "\"b\":{\"s\":\"\\u00e9 \\\"q\\\"\\n\"},\"c\":[],\"d\":{}}";
	struct json_value *v = parse(text);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	json_write_value(f, v);
	fclose(f);
	cr_assert_str_eq(out, "{\"a\":[1,-2.5,0.333333,1000000000000000,null,true,false],"
			      "\"b\":{\"s\":\"\xc3\xa9 \\\"q\\\"\\n\"},\"c\":[],\"d\":{}}");
	struct json_value *w = parse(out);
	cr_assert(json_equal(v, w));
	static const char *const other[] = {
		"{\"a\":[1,-2.5,0.333333,1000000000000000,null,true,true],\"b\":{\"s\":\"\\u00e9 \\\"q\\\"\\n\"},\"c\":[],\"d\":{}}",
		"{\"a\":[1,-2.5,0.333333,1000000000000000,null,true,false],\"b\":{\"s\":\"\\u00e9 \\\"q\\\"\"},\"c\":[],\"d\":{}}",
		"{\"a\":[1,-2.5,0.333333,1000000000000000,null,true,false],\"b\":{\"t\":\"\\u00e9 \\\"q\\\"\\n\"},\"c\":[],\"d\":{}}",
		"{\"b\":{\"s\":\"\\u00e9 \\\"q\\\"\\n\"},\"a\":[1,-2.5,0.333333,1000000000000000,null,true,false],\"c\":[],\"d\":{}}",
		"{\"a\":[1,-2.5,0.333333,1000000000000000,null,true,false],\"b\":{\"s\":\"\\u00e9 \\\"q\\\"\\n\"},\"c\":[],\"d\":[]}",
		"{\"a\":[1,-2.5,0.333333,1000000000000000,null,true],\"b\":{\"s\":\"\\u00e9 \\\"q\\\"\\n\"},\"c\":[],\"d\":{}}",
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(*other); i++) {
		struct json_value *o = parse(other[i]);
		cr_assert(!json_equal(v, o), "%s equals %s", other[i], text);
		json_free(o);
	}
	json_free(w);
	json_free(v);
	free(out);
}
