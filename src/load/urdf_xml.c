// urdf_xml.c: see urdf_xml.h.
#include "urdf_xml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int uxml_line(const xmlNode *n) {
  long l = xmlGetLineNo(n);
  return l > 0 && l < 1000000000 ? (int)l : 0;
}

int uxml_is(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

xmlNode *uxml_child(const xmlNode *n, const char *name, int *count) {
  xmlNode *first = NULL;
  int k = 0;
  for (xmlNode *c = n ? n->children : NULL; c; c = c->next) {
    if (!uxml_is(c, name)) continue;
    if (!first) first = c;
    k++;
  }
  if (count) *count = k;
  return first;
}

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int uxml_numbers(const char *s, double *out, int n) {
  const char *c = s;
  for (int i = 0; i < n; i++) {
    char *end;
    while (is_space(*c)) c++;
    if (!*c) return -1;
    double v = strtod(c, &end);
    if (end == c || !isfinite(v)) return -1;
    out[i] = v;
    c = end;
    if (*c && !is_space(*c)) return -1;   // "1,2" or "1-2" is not two numbers
  }
  while (is_space(*c)) c++;
  return *c ? -1 : 0;
}

int uxml_text_number(const xmlNode *e, double *out) {
  xmlChar *v = xmlNodeGetContent(e);
  if (!v) return -1;
  double x;
  int rc = uxml_numbers((const char *)v, &x, 1);
  xmlFree(v);
  if (rc == 0) *out = x;
  return rc;
}
