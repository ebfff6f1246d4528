// protocol.h: the protocol's enums (proto/partita.proto) under short names. The values come
// from the generated header alone: the daemon repeats none of them.
#ifndef PD_PROTOCOL_H
#define PD_PROTOCOL_H

#include <stdint.h>

#include "partita.pb-c.h"

#define STATUS(x) PARTITA__V1__STATUS__CODE__##x            // Status.Code
#define MODE(x) PARTITA__V1__MODE__##x                      // Mode
#define EVENT(x) PARTITA__V1__MODEL_EVENT__KIND__##x        // ModelEvent.Kind
// The Field bits of GetState, Subscribe and Record are the bridge's PTB_FIELD_* (ptb_fields.h),
// one name for partitad and the command line.

#endif
