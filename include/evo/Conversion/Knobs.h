// Transitional: moved to the evo dialect.
#include "evo/Dialect/Evo/IR/Knobs.h"
