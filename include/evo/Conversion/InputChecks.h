// Transitional: moved to the evo dialect.
#include "evo/Dialect/Evo/IR/InputChecks.h"
