#!/usr/bin/env python3
"""json_suite.py DIR: write the malformed-JSON corpus (t/0820-json-suite.bats)
into DIR, one file per case, in the manner of JSONTestSuite:

  y_NAME.json  must be accepted
  n_NAME.json  must be rejected, as a clean error
  i_NAME.json  either (what JSON leaves to the implementation); never a
               crash, a hang or a partial write
  b_NAME.json  over a documented bound of heartwood's reader (nesting
               deeper than 128, a line over 8 MiB): rejected

Each case is one JSON Lines record: the text and a newline, unless the
case is about the line itself.  The corpus is defined here rather than
stored as files so invalid bytes stay readable in review; the deep and
long cases are built at their full size."""
import os
import sys

NL = b"\n"

# accepted: every kind of value, every escape, edges of numbers and UTF-8
Y = {
    "object_empty": b"{}",
    "array_empty": b"[]",
    "array_of_empty": b"[[]]",
    "object_in_array": b"[{}]",
    "nested_objects": b'{"a":{"b":{"c":{}}}}',
    "array_ints": b"[1,2,3]",
    "array_literals": b"[null,true,false]",
    "empty_key": b'{"":0}',
    "two_members": b'{"a":1,"b":2}',
    "members_unsorted": b'{"b":1,"a":2}',
    "keys_differ_in_case": b'{"a":1,"A":2}',
    "space_around": b" [ 1 , 2 ] ",
    "tab_around": b"\t{}\t",
    "cr_as_space": b"[\r1\r]",
    "crlf_line_end": b'{"a":1}\r',
    "space_in_object": b'{ "a" : 1 , "b" : [ ] }',
    "top_zero": b"0",
    "top_negative_zero": b"-0",
    "top_string": b'"x"',
    "top_null": b"null",
    "top_true": b"true",
    "top_false": b"false",
    "int": b"123",
    "negative_int": b"-123",
    "int64_max": b"9223372036854775807",
    "int64_min": b"-9223372036854775808",
    "past_uint64": b"18446744073709551616",
    "int_30_digits": b"123456789012345678901234567890",
    "float": b"1.5",
    "negative_float_exp": b"-1.5e-3",
    "exp_upper": b"1E2",
    "exp_plus": b"1e+2",
    "exp_minus": b"1e-2",
    "zero_point_zero": b"0.0",
    "negative_zero_float": b"-0.0",
    "zero_exp": b"0e0",
    "float_1e308": b"1e308",
    "float_long_fraction": b"0.1234567890123456789012345678901234567890",
    "float_in_object": b'{"p":0.25,"q":[1e-5,2.5E+3]}',
    "string_empty": b'""',
    "escape_quote": b'"\\""',
    "escape_backslash": b'"\\\\"',
    "escape_slash": b'"\\/"',
    "escape_controls": b'"\\b\\f\\n\\r\\t"',
    "escape_nul": b'"\\u0000"',
    "escape_nul_inside": b'"a\\u0000b"',
    "escape_latin": b'"\\u00e9"',
    "escape_upper_hex": b'"\\u00E9"',
    "escape_ascii": b'"\\u0061"',
    "escape_pair": b'"\\ud83d\\ude00"',
    "escape_pair_upper": b'"\\uD83D\\uDE00"',
    "escape_last_pair": b'"\\udbff\\udfff"',
    "escape_ffff": b'"\\uffff"',
    "escape_line_separators": b'"\\u2028\\u2029"',
    "raw_latin": '"é"'.encode(),
    "raw_three_byte": '"€"'.encode(),
    "raw_four_byte": '"😀"'.encode(),
    "raw_line_separator": '"\u2028"'.encode(),
    "raw_del": b'"\x7f"',
    "raw_last_code_point": b'"\xf4\x8f\xbf\xbf"',
    "raw_noncharacter": b'"\xef\xbf\xbf"',
    "key_escaped": b'{"\\u0061b":1}',
    "key_nul": b'{"\\u0000":1}',
    "key_non_ascii": '{"é":1,"e":2}'.encode(),
    "long_string": b'"' + b"x" * 10000 + b'"',
    "nested_100": b"[" * 100 + b"]" * 100,
    "nested_128": b"[" * 128 + b"]" * 128,
    "nested_objects_100": b'{"a":' * 100 + b"{}" + b"}" * 100,
    "wide_array": b"[" + b",".join([b"0"] * 10000) + b"]",
    "many_keys": b"{" + b",".join(b'"k%d":%d' % (i, i)
                                 for i in range(2000)) + b"}",
    "two_lines": b'{"a":1}\n[2]',
}

# rejected: broken structure, literals, numbers, strings, UTF-8, keys
N = {
    "open_array": b"[",
    "close_array": b"]",
    "open_object": b"{",
    "close_object": b"}",
    "trailing_comma_array": b"[1,]",
    "leading_comma_array": b"[,1]",
    "double_comma": b"[1,,2]",
    "double_comma_strings": b'["a",,"b"]',
    "missing_comma": b"[1 2]",
    "semicolon": b"[1;2]",
    "key_only": b'{"a"}',
    "key_colon_only": b'{"a":}',
    "trailing_comma_object": b'{"a":1,}',
    "comma_only_object": b"{,}",
    "missing_colon": b'{"a" 1}',
    "missing_member_comma": b'{"a":1 "b":2}',
    "member_semicolon": b'{"a":1;"b":2}',
    "number_key": b"{1:1}",
    "single_quoted_key": b"{'a':1}",
    "bare_key": b"{a:1}",
    "extra_close_array": b"[1]]",
    "extra_close_object": b'{"a":1}}',
    "garbage_after": b"[1]x",
    "two_objects": b"{}{}",
    "two_arrays": b"[][]",
    "two_values": b"1 2",
    "mismatched_close": b'{"a":[}',
    "crossed": b"[{]}",
    "empty_line": b"",
    "blank_line": b"   ",
    "block_comment": b"/* c */ []",
    "line_comment": b"[] // c",
    "hash_comment": b"[1] #",
    "tru": b"tru",
    "True": b"True",
    "NULL": b"NULL",
    "nul": b"nul",
    "falsey": b"falsey",
    "nan": b"NaN",
    "nan_in_array": b"[nan]",
    "infinity": b"Infinity",
    "minus_infinity": b"-Infinity",
    "undefined": b"undefined",
    "leading_zero": b"01",
    "negative_leading_zero": b"-01",
    "plus_sign": b"+1",
    "leading_point": b".5",
    "trailing_point": b"5.",
    "point_exp": b"1.e3",
    "bare_exp": b"1e",
    "exp_sign_only": b"1e+",
    "minus_only": b"-",
    "double_minus": b"--1",
    "hex": b"0x10",
    "underscore": b"1_000",
    "two_points": b"1.5.5",
    "zero_bare_exp": b"0e",
    "minus_space": b"- 1",
    "exp_overflow": b"1e999",
    "negative_exp_overflow": b"-1e999",
    "overflow_in_array": b"[1e1000]",
    "arabic_digit": "\u0661".encode(),
    "fullwidth_digit": "\uff10".encode(),
    "comma_decimal": b"1,5",
    "unterminated_string": b'"abc',
    "unterminated_in_array": b'["abc]',
    "escape_x": b'"\\x41"',
    "escape_a": b'"\\a"',
    "escape_short_u": b'"\\u12"',
    "escape_bad_hex": b'"\\u12g4"',
    "escape_capital_u": b'"\\U0041"',
    "escape_at_end": b'"\\"',
    "escape_backslash_end": b'"a\\',
    "escape_space": b'"\\ "',
    "single_quoted": b"'single'",
    "raw_tab": b'"a\tb"',
    "raw_control": b'"a\x01b"',
    "raw_nul": b'"a\x00b"',
    "raw_escape_char": b'"\x1b"',
    "raw_cr_in_string": b'"a\rb"',
    "utf8_ff": b'"\xff"',
    "utf8_fe": b'"\xfe"',
    "utf8_lone_continuation": b'"\x80"',
    "utf8_overlong_2": b'"\xc0\xaf"',
    "utf8_overlong_2_nul": b'"\xc0\x80"',
    "utf8_overlong_3": b'"\xe0\x80\xaf"',
    "utf8_overlong_4": b'"\xf0\x80\x80\xaf"',
    "utf8_raw_high_surrogate": b'"\xed\xa0\x80"',
    "utf8_raw_low_surrogate": b'"\xed\xbf\xbf"',
    "utf8_raw_pair": b'"\xed\xa0\xbd\xed\xb8\x80"',
    "utf8_past_10ffff": b'"\xf4\x90\x80\x80"',
    "utf8_five_byte": b'"\xf8\x88\x80\x80\x80"',
    "utf8_six_byte": b'"\xfc\x84\x80\x80\x80\x80"',
    "utf8_truncated_2": b'"\xc3"',
    "utf8_truncated_3": b'"\xe2\x82"',
    "utf8_truncated_4": b'"\xf0\x9f\x98"',
    "utf8_bad_continuation": b'"\xc3\x28"',
    "utf8_outside_string": b"[\xff]",
    "utf8_in_key": b'{"\xff":1}',
    "latin1_text": b'"caf\xe9"',
    "utf16_text": '"x"'.encode("utf-16-le"),
    "duplicate_key": b'{"a":1,"a":2}',
    "duplicate_key_nested": b'{"a":1,"b":{"c":1,"c":2}}',
    "duplicate_key_escaped": b'{"a":1,"\\u0061":2}',
    "second_line_bad": b'{"a":1}\n{"a":',
    "no_final_newline": None,     # written below without its newline
    "cut_mid_record": None,
}

# either: what JSON leaves open; heartwood's choice is recorded, not pinned
I = {
    "escape_lone_high_surrogate": b'"\\ud800"',
    "escape_lone_low_surrogate": b'"\\udc00"',
    "escape_two_high_surrogates": b'"\\ud800\\ud800"',
    "escape_high_then_letter": b'"\\ud800x"',
    "escape_high_then_escape": b'"\\ud800\\u0041"',
    "escape_reversed_pair": b'"\\ude00\\ud83d"',
    "escape_high_at_end": b'"\\udbff"',
    "bom": b"\xef\xbb\xbf{}",
    "underflow": b"1e-400",
    "huge_negative_exp": b"123e-10000000",
    "int_1000_digits": b"1" * 1000,
    "float_1000_digits": b"0." + b"1" * 1000,
    "big_exp_zero": b"0e99999999",
}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: json_suite.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def put(name, data):
        with open(os.path.join(out, name + ".json"), "wb") as f:
            f.write(data)

    for prefix, cases in (("y_", Y), ("n_", N), ("i_", I)):
        for name, text in cases.items():
            if text is not None:
                put(prefix + name, text + NL)
    put("n_no_final_newline", b'{"a":1}')
    put("n_cut_mid_record", b'{"a":1}\n{"b":[1,2')
    put("b_nested_arrays_129", b"[" * 129 + b"]" * 129 + NL)
    put("b_nested_arrays_100000", b"[" * 100000 + b"]" * 100000 + NL)
    put("b_nested_objects_100000",
        b'{"a":' * 100000 + b"0" + b"}" * 100000 + NL)
    put("b_open_arrays_100000", b"[" * 100000 + NL)
    put("b_line_over_8_mib", b'"' + b"x" * (8 << 20) + b'"' + NL)


main()
