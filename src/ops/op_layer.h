#pragma once
// Note [Layer includes]
// Dependencies point downward (DESIGN.md §1): core <- kernels <- ops/autograd <- nn, ...
// CMake builds core and kernels as object libraries of their own, each with a define that names
// its layer; the headers of a higher layer include this guard, so an upward include (a kernel
// including an op or autograd header) is a build error, not a convention.
#if defined(EMBER_LAYER_CORE) || defined(EMBER_LAYER_KERNELS)
#error "core and kernel code may not include op or autograd headers (Note [Layer includes])"
#endif
