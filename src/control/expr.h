// expr.h: formulas of the control elements (`expression`, `ode` derivatives), parsed once at
// load into postfix code, evaluated without allocation, differentiated exactly (forward mode).
//
// Grammar (usual precedence, `^` right-associative and above unary minus: -x^2 = -(x^2)):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := ('-' | '+') unary | power
//   power   := primary ('^' unary)?
//   primary := NUMBER | NAME | FUNC '(' expr (',' expr)* ')' | '(' expr ')'
// NAME is a signal (letters, digits, '_' and '.', not starting with a digit), `t` (time) or
// `pi`; FUNC is one of sin cos tan exp log sqrt abs tanh (one argument), atan2 min max (two).
#ifndef PT_EXPR_H
#define PT_EXPR_H

#include <stddef.h>

#define PT_EXPR_MAX_TEXT 65536   // bytes of one formula
#define PT_EXPR_MAX_NEST 200     // nested parentheses, calls and unary operators

typedef enum {
  PT_OP_CONST = 0,  // push konst[arg]
  PT_OP_VAR,        // push the signal of reference slot arg (ref[arg])
  PT_OP_TIME,       // push t
  PT_OP_NEG,
  PT_OP_ADD, PT_OP_SUB, PT_OP_MUL, PT_OP_DIV, PT_OP_POW,
  PT_OP_SIN, PT_OP_COS, PT_OP_TAN, PT_OP_EXP, PT_OP_LOG, PT_OP_SQRT, PT_OP_ABS, PT_OP_TANH,
  PT_OP_ATAN2, PT_OP_MIN, PT_OP_MAX,
  PT_OP_COUNT
} pt_expr_op;

typedef struct {
  int op;                 // pt_expr_op
  int arg;                // constant index or reference slot
} pt_expr_ins;

typedef struct {
  int ncode;
  pt_expr_ins *code;      // (ncode) postfix program
  int nconst;
  double *konst;          // (nconst)
  int nref;
  int *ref;               // (nref) distinct signals read, by slot (the caller's numbering)
  int depth;              // evaluation stack entries the program needs
  int uses_t;
} pt_expr;

// Resolves a name (not NUL-terminated: len bytes) to a signal index >= 0, or -1 if unknown.
typedef int (*pt_expr_lookup)(void *ctx, const char *name, size_t len);

// Parses `text`; on failure returns -1 with `msg` set to "column C: what" (1-based column),
// leaving *e empty; -2 on out of memory. On success *e owns its arrays (pt_expr_free).
int pt_expr_parse(pt_expr *e, const char *text, pt_expr_lookup lookup, void *ctx, char *msg,
                  size_t msgsize);
void pt_expr_free(pt_expr *e);

// The value at signals `sig` (indexed by ref[]) and time t. stack: depth entries.
double pt_expr_eval(const pt_expr *e, const double *sig, double t, double *stack);

// The value and its exact partial derivatives with respect to the referenced signals:
// grad[k] = d value / d sig[ref[k]] (nref). stack: depth * (1 + nref) entries.
double pt_expr_grad(const pt_expr *e, const double *sig, double t, double *grad, double *stack);

#endif
