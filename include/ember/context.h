#pragma once
/// Process-wide settings that change how ops compute (not what they compute).

namespace ember {

/// Note [Deterministic algorithms]
/// ember's own CPU kernels are deterministic whatever this flag says: reductions and scans split
/// work by a fixed block size, never by the thread count or the data's address, and
/// scatter/index accumulation runs in index order. (Float matrix products are OpenBLAS's: the
/// same for a fixed thread count, not across thread counts.) The flag is the contract for device
/// kernels that have a faster nondeterministic variant (atomics): with it on they use the
/// deterministic one, or raise when none exists (warn instead when `warn_only`).
void use_deterministic_algorithms(bool mode, bool warn_only = false);
/// Whether deterministic algorithms were requested.
bool are_deterministic_algorithms_enabled();
/// Whether a missing deterministic algorithm only warns.
bool is_deterministic_algorithms_warn_only_enabled();

/// Internal precision of float32 matrix products (`torch.set_float32_matmul_precision`):
/// Highest computes in float32; High and Medium allow a faster reduced-precision internal
/// format (on CPU, Medium may run float32 GEMMs through bfloat16 with float32 accumulation).
enum class MatmulPrecision { Highest, High, Medium };
/// Sets the precision from "highest", "high" or "medium"; anything else raises ValueError.
void set_float32_matmul_precision(const char* precision);
/// "highest" (the default), "high" or "medium".
const char* get_float32_matmul_precision();
/// The current setting as an enum (read by GEMM kernels).
MatmulPrecision float32_matmul_precision();

}  // namespace ember
