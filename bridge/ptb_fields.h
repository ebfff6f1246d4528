// ptb_fields.h: the field selection bits of GetState, Subscribe and Record (enum Field of
// proto/partita.proto), from the generated header: one source for partitad and the CLI.
#ifndef PTB_FIELDS_H
#define PTB_FIELDS_H

#include "partita.pb-c.h"

#define PTB_FIELD_COORDINATES ((uint32_t)PARTITA__V1__FIELD__FIELD_COORDINATES)
#define PTB_FIELD_RATES ((uint32_t)PARTITA__V1__FIELD__FIELD_RATES)
#define PTB_FIELD_ACCELERATIONS ((uint32_t)PARTITA__V1__FIELD__FIELD_ACCELERATIONS)
#define PTB_FIELD_INPUTS ((uint32_t)PARTITA__V1__FIELD__FIELD_INPUTS)
#define PTB_FIELD_BODIES ((uint32_t)PARTITA__V1__FIELD__FIELD_BODIES)
#define PTB_FIELD_ENERGY ((uint32_t)PARTITA__V1__FIELD__FIELD_ENERGY)
#define PTB_FIELD_RESIDUAL ((uint32_t)PARTITA__V1__FIELD__FIELD_RESIDUAL)
#define PTB_FIELD_CONTROLS ((uint32_t)PARTITA__V1__FIELD__FIELD_CONTROLS)
#define PTB_FIELD_DEFAULT ((uint32_t)PARTITA__V1__FIELD__FIELD_DEFAULT)
#define PTB_FIELD_ALL ((uint32_t)PARTITA__V1__FIELD__FIELD_ALL)

#endif
