#include "ember/error.h"

namespace ember::detail {

void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(str_cat("[internal] assertion `", cond, "` failed at ", file, ":", line,
                              msg.empty() ? "" : ": ", msg,
                              " (this is a bug in ember; please report it)"));
}

}  // namespace ember::detail
