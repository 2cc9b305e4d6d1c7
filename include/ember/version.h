#pragma once
/// ember's version and build information.

namespace ember {
constexpr const char* kVersion = "0.1.0";
/// The CPU kernel capability in use: "default", "avx2" or "avx512".
const char* cpu_capability();
/// Whether this build has the CUDA backend and a usable GPU.
bool cuda_is_available();
/// Number of visible CUDA devices (0 without a GPU or without the CUDA backend).
int cuda_device_count();
}  // namespace ember
