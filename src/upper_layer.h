#pragma once
// The guard of Note [Layer includes] (src/ops/op_layer.h) for the internal headers of the layers
// above the ops: nn, optim, data, serialize and the profiler. Core, kernels, ops and autograd are
// compiled with a define naming their layer, so including such a header there is a build error.
#if defined(EMBER_LAYER_CORE) || defined(EMBER_LAYER_KERNELS) || defined(EMBER_LAYER_OPS)
#error "core, kernels, ops and autograd may not include nn/optim/data/serialize/profiler headers"
#endif
