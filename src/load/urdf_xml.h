// urdf_xml.h: the small libxml2 helpers the URDF importer's files share (urdf_xml.c):
// load_urdf.c (links, joints), visual_urdf.c (visuals), urdf_scan.c (whole-document checks)
// and urdf_transmission.c (transmissions).
#ifndef PT_URDF_XML_H
#define PT_URDF_XML_H

#include <libxml/tree.h>

// The source line of a node, 0 if libxml2 does not know it (or it is out of int range).
int uxml_line(const xmlNode *n);

// 1 if n is an element called `name`.
int uxml_is(const xmlNode *n, const char *name);

// The first child element of n called `name`, NULL if none (or n is NULL); *count, if count is
// not NULL, gets how many there are.
xmlNode *uxml_child(const xmlNode *n, const char *name, int *count);

// Exactly n finite numbers separated by white space, with white space allowed around them.
// 0 ok, -1 otherwise (out may be partly written).
int uxml_numbers(const char *s, double *out, int n);

// An element's text content as one finite number (white space around it allowed). 0 ok,
// -1 otherwise (*out unchanged).
int uxml_text_number(const xmlNode *e, double *out);

#endif
