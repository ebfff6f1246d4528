// ptb_reply.h: the parts of the analyses' replies built from engine results: joint reactions,
// the reactions of held limits, note lines, matrices and name lists. Every part is malloc'd
// so that the reply holding it is released with protobuf_c_message_free_unpacked().
#ifndef PTB_REPLY_H
#define PTB_REPLY_H

#include <stddef.h>

#include "partita.h"
#include "partita.pb-c.h"
#include "pt_linearize.h"

// Reaction messages of every joint (njoint x 6: force, torque). NULL when out of memory.
Partita__V1__Reaction **ptb_reactions(const pt_model *m, const double *reaction);

// The reactions of the limits held (held[j] != 0), by joint name. 0, or -1 out of memory
// (the caller's message owns what was built either way).
int ptb_limit_values(const pt_model *m, const int *held, const double *reaction,
                     Partita__V1__NamedValue ***out, size_t *n);

// '\n'-terminated lines as strings, one a line. 0, or -1 out of memory (as above).
int ptb_lines(const char *text, char ***out, size_t *n);

// A rows x cols row-major matrix; NULL when out of memory.
Partita__V1__Matrix *ptb_matrix(const double *a, int rows, int cols);

// A strdup'd copy of n names; NULL when out of memory.
char **ptb_names(char (*names)[PT_LIN_NAME_MAX], int n);

#endif
