// urdf_transmission.c: URDF <transmission> reductions as actuator gears (docs/urdf.md).
//
// A SimpleTransmission couples one actuator to one joint through a mechanical reduction r:
// joint effort = r x actuator effort. Both of ROS's spellings are read:
//   <transmission name type="...SimpleTransmission"> <joint name/> <actuator name/>
//     <mechanicalReduction>r</mechanicalReduction> </transmission>
//   <transmission name> <type>.../SimpleTransmission</type> <joint name>...</joint>
//     <actuator name><mechanicalReduction>r</mechanicalReduction></actuator> </transmission>
// The joint's actuator (named after the joint) then takes the actuator effort as its input,
// with gear r, and its `<limit effort>` (the joint's) becomes the input limit effort / |r|.
// Other transmission types, and transmissions of joints that do not move, are named in
// warnings (one per kind).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_scan.h"
#include "urdf_xml.h"

// Skipped transmissions, one warning per kind: a type, or "no actuated joint".
typedef struct {
  char kind[96];
  int line, count;
} skipped;

#define MAX_SKIP 16

static void skip(skipped *k, int *n, const char *kind, int line) {
  for (int i = 0; i < *n; i++)
    if (strcmp(k[i].kind, kind) == 0) {
      k[i].count++;
      return;
    }
  if (*n == MAX_SKIP) return;
  snprintf(k[*n].kind, sizeof(k[*n].kind), "%s", kind);
  k[*n].line = line;
  k[(*n)++].count = 1;
}

int pt_urdf_transmissions(const xmlNode *robot, const char *source, pt_spec *s, pt_error *err) {
  skipped sk[MAX_SKIP];
  int nsk = 0, rc = PT_OK;
  for (const xmlNode *t = robot->children; t && !rc; t = t->next) {
    if (!uxml_is(t, "transmission")) continue;
    const int line = uxml_line(t);
    xmlChar *name = xmlGetProp(t, (const xmlChar *)"name");
    xmlChar *type = xmlGetProp(t, (const xmlChar *)"type");
    const xmlNode *te = uxml_child(t, "type", NULL);
    if (!type && te) type = xmlNodeGetContent(te);
    char tn[128] = "";
    if (type) {  // trimmed: <type> text may carry white space around it
      const char *b = (const char *)type;
      while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r') b++;
      snprintf(tn, sizeof(tn), "%s", b);
      size_t n = strlen(tn);
      while (n > 0 && (tn[n - 1] == ' ' || tn[n - 1] == '\t' || tn[n - 1] == '\n' ||
                       tn[n - 1] == '\r'))
        tn[--n] = '\0';
    }
    const char *nm = name ? (const char *)name : "";
    const size_t tl = strlen(tn), sl = strlen("SimpleTransmission");
    const int simple = tl >= sl && strcmp(tn + tl - sl, "SimpleTransmission") == 0;
    const xmlNode *jn = uxml_child(t, "joint", NULL), *an = uxml_child(t, "actuator", NULL);
    const xmlNode *red = uxml_child(t, "mechanicalReduction", NULL);
    if (!red) red = uxml_child(an, "mechanicalReduction", NULL);
    xmlChar *joint = jn ? xmlGetProp(jn, (const xmlChar *)"name") : NULL;
    pt_spec_actuator *a = NULL;
    for (int i = 0; joint && i < s->nactuator && !a; i++)
      if ((s->actuators[i].type == PT_ACT_JOINT_TORQUE ||
           s->actuators[i].type == PT_ACT_JOINT_FORCE) &&
          strcmp(s->actuators[i].joint, (const char *)joint) == 0)
        a = &s->actuators[i];
    double r = 1;
    char kind[96];
    if (!simple) {
      snprintf(kind, sizeof(kind), "of type \"%.60s\"", tn);
      skip(sk, &nsk, kind, line);
    } else if (!a) {
      skip(sk, &nsk, "of a joint that does not move (fixed, or no such joint)", line);
    } else if (!red || uxml_text_number(red, &r) || r == 0) {
      rc = pt_error_set(err, PT_EPARSE,
                        "%s:%d: transmission \"%.60s\": <mechanicalReduction> must be one finite "
                        "non-zero number", source, red ? uxml_line(red) : line, nm);
    } else {
      a->gear = r;
      if (a->limit > 0) a->limit /= fabs(r);  // the joint's effort limit, at the motor
    }
    xmlFree(joint);
    xmlFree(type);
    xmlFree(name);
  }
  for (int i = 0; i < nsk && !rc; i++) {
    int w = sk[i].count == 1
                ? pt_spec_warn(s, "%s:%d: ignored <transmission> %s: only a SimpleTransmission "
                                  "of a moving joint becomes an actuator gear",
                               source, sk[i].line, sk[i].kind)
                : pt_spec_warn(s, "%s:%d: ignored <transmission> %s (%d times, the first here): "
                                  "only a SimpleTransmission of a moving joint becomes an "
                                  "actuator gear",
                               source, sk[i].line, sk[i].kind, sk[i].count);
    if (w) rc = pt_error_set(err, PT_ENOMEM, "%s: out of memory", source);
  }
  return rc;
}
