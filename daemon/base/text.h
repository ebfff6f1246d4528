// text.h: client text echoed in replies and logs. Protobuf strings must be UTF-8 (Python's
// protobuf refuses to decode a reply otherwise), and a client's bytes, or a name cut in the
// middle of a character by a "%.100s", are not: what goes out is checked or repaired here.
#ifndef PD_TEXT_H
#define PD_TEXT_H

#include <stddef.h>

// Length in bytes of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one
// (stray continuation byte, overlong form, surrogate, beyond U+10FFFF, cut short by NUL).
int text_utf8_len(const char *s);
// 1 when s is valid UTF-8.
int text_is_utf8(const char *s);
// 1 when s is valid UTF-8 without control characters (names).
int text_is_clean(const char *s);
// Copies s into out (cap > 0 bytes): whole characters only, every byte that does not start a
// valid character replaced by '?'. Returns out.
const char *text_sanitize(char *out, size_t cap, const char *s);

// 1 when given equals secret, in time that depends only on the secret's length, so response
// times do not reveal how much of a guess was right.
int text_equal_secret(const char *given, const char *secret);

#endif
