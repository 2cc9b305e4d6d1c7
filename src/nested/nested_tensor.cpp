// Nested tensors (include/ember/nested.h).
#include "ember/nested.h"
