#include "ember/scalar.h"

namespace ember {

Scalar Scalar::operator-() const {
  switch (tag_) {
    case kComplexDouble: return Scalar(-toComplexDouble());
    case kDouble: return Scalar(-v_.d);
    case kBool: EMBER_THROW(Error, "[neg] negation of a bool scalar is not supported");
    default: return Scalar(-v_.i);
  }
}

bool Scalar::equal(const Scalar& o) const {
  if (tag_ != o.tag_) return false;
  switch (tag_) {
    case kComplexDouble: return v_.z[0] == o.v_.z[0] && v_.z[1] == o.v_.z[1];
    case kDouble: return v_.d == o.v_.d;
    default: return v_.i == o.v_.i;
  }
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.type()) {
    case kComplexDouble: return os << s.toComplexDouble();
    case kDouble: return os << s.toDouble();
    case kBool: return os << (s.toBool() ? "true" : "false");
    default: return os << s.toLong();
  }
}

}  // namespace ember
