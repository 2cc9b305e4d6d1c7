#pragma once
// Note [Layer includes]
// Dependencies point downward (DESIGN.md §1): core <- kernels <- ops/autograd <- nn, ...
// CMake builds core, kernels and ops (with autograd) as object libraries of their own, each with
// a define that names its layer; the internal headers of a higher layer include a guard (this
// one for ops and autograd, kernels/cpu/kernel_layer.h for kernels, src/upper_layer.h for nn,
// optim, data, serialize and the profiler), so an upward include (a kernel including an op
// header) is a build error, not a convention. The public headers (include/ember) carry no guard.
#if defined(EMBER_LAYER_CORE) || defined(EMBER_LAYER_KERNELS)
#error "core and kernel code may not include op or autograd headers (Note [Layer includes])"
#endif
