#pragma once
// The kernels' guard of Note [Layer includes] (src/ops/op_layer.h): core may not include them.
#if defined(EMBER_LAYER_CORE)
#error "core code may not include kernel headers (Note [Layer includes] in src/ops/op_layer.h)"
#endif
