// text.c: UTF-8 checks and repairs of client text (text.h).
#include "base/text.h"

#include <string.h>

int text_utf8_len(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  unsigned c = p[0];
  if (c < 0x80)
    return c ? 1 : 0;
  int n;
  unsigned min, cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2, min = 0x80, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, min = 0x800, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;   // also stops at the terminating NUL
    cp = (cp << 6) | (p[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

static int is_control(const char *s) { return (unsigned char)*s < 0x20 || *s == 0x7f; }

int text_is_utf8(const char *s) {
  for (int n; *s; s += n)
    if ((n = text_utf8_len(s)) == 0)
      return 0;
  return 1;
}

int text_is_clean(const char *s) {
  for (int n; *s; s += n)
    if ((n = text_utf8_len(s)) == 0 || is_control(s))
      return 0;
  return 1;
}

const char *text_sanitize(char *out, size_t cap, const char *s) {
  size_t o = 0;
  while (*s) {
    int n = text_utf8_len(s);
    size_t k = n ? (size_t)n : 1;
    if (o + k >= cap)
      break;
    if (n)
      memcpy(out + o, s, k);
    else
      out[o] = '?';
    o += k;
    s += k;
  }
  out[o] = '\0';
  return out;
}

int text_equal_secret(const char *given, const char *secret) {
  size_t n = strlen(secret), g = strnlen(given, n + 1);
  unsigned diff = (unsigned)(g != n);
  for (size_t i = 0; i < n; i++)
    diff |= (unsigned char)secret[i] ^ (unsigned char)(i < g ? given[i] : 0);
  return diff == 0;
}
