// urdf_scan.h: checks over a whole URDF document before and after it is imported (urdf_scan.c):
// xacro sources are refused, and what the importer does not use is named in warnings.
#ifndef PT_URDF_SCAN_H
#define PT_URDF_SCAN_H

#include <libxml/tree.h>

#include "partita.h"

// PT_EPARSE with `SOURCE:LINE: robot: this is a xacro file ...` if any element is in the
// xacro namespace (or named `xacro:...`) or any attribute holds `${` or `$(`; else PT_OK.
int pt_urdf_refuse_xacro(const xmlNode *robot, const char *source, pt_error *err);

// One warning line in s->warnings per kind of element or attribute the importer does not use
// (`<gazebo>`, `<joint><safety_controller>`, `<limit velocity>`, ...), with its count and the
// line of the first. <visual> and <material> are not reported (they are for viewers).
// PT_ENOMEM or PT_OK.
int pt_urdf_warn_unused(const xmlNode *robot, const char *source, pt_spec *s);

// <transmission> elements (urdf_transmission.c): each SimpleTransmission of a moving joint sets
// the gear of that joint's actuator (joint effort = reduction x input) and divides its limit
// by |reduction|; other types and transmissions of joints that do not move are named in
// warnings. PT_EPARSE for a reduction that is not one finite non-zero number.
int pt_urdf_transmissions(const xmlNode *robot, const char *source, pt_spec *s, pt_error *err);

#endif
