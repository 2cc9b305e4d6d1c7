#include "oracle_reader.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ember/factory.h"
#include "ember/half.h"

namespace ember::oracle {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? p : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  return out;
}

int64_t parse_int(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  long long v = std::strtoll(str.c_str(), &end, 10);
  if (str.empty() || *end != '\0') throw FixtureError("bad integer '" + str + "'");
  return v;
}

double parse_double(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  double v = std::strtod(str.c_str(), &end);  // hex floats, inf, -inf, nan
  if (str.empty() || *end != '\0') throw FixtureError("bad double '" + str + "'");
  return v;
}

std::vector<int64_t> parse_sizes(std::string_view s) {
  std::vector<int64_t> out;
  if (s == "-") return out;
  for (auto p : split(s, ',')) out.push_back(parse_int(p));
  return out;
}

std::string sizes_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  out += ']';
  return out;
}

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

/// One element, decoded: integers (and bool) exactly, floats and complex as doubles.
struct Elem {
  bool integral = false;
  int64_t i = 0;
  double re = 0, im = 0;
};

template <class T>
T read_as(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double half_at(const uint8_t* p) { return float(Half(read_as<uint16_t>(p), Half::from_bits_t{})); }

Elem load(const uint8_t* p, ScalarType t) {
  Elem e;
  switch (t) {
    case kBool:
      e.integral = true;
      e.i = *p;
      break;  // raw byte: a bool must be 0 or 1
    case kByte:
      e.integral = true;
      e.i = read_as<uint8_t>(p);
      break;
    case kChar:
      e.integral = true;
      e.i = read_as<int8_t>(p);
      break;
    case kShort:
      e.integral = true;
      e.i = read_as<int16_t>(p);
      break;
    case kInt:
      e.integral = true;
      e.i = read_as<int32_t>(p);
      break;
    case kLong:
      e.integral = true;
      e.i = read_as<int64_t>(p);
      break;
    case kHalf:
      e.re = half_at(p);
      break;
    case kBFloat16:
      e.re = float(BFloat16(read_as<uint16_t>(p), BFloat16::from_bits_t{}));
      break;
    case kFloat:
      e.re = read_as<float>(p);
      break;
    case kDouble:
      e.re = read_as<double>(p);
      break;
    case kComplexHalf:
      e.re = half_at(p);
      e.im = half_at(p + 2);
      break;
    case kComplexFloat:
      e.re = read_as<float>(p);
      e.im = read_as<float>(p + 4);
      break;
    case kComplexDouble:
      e.re = read_as<double>(p);
      e.im = read_as<double>(p + 8);
      break;
    default:
      throw FixtureError("load: unsupported dtype");
  }
  return e;
}

std::string fmt_elem(const Elem& e, ScalarType t) {
  if (e.integral) return std::to_string(e.i);
  char buf[96];
  int prec = (t == kDouble || t == kComplexDouble) ? 17 : 9;
  if (isComplexType(t)) {
    std::snprintf(buf, sizeof buf, "(%.*g%+.*gj)", prec, e.re, prec, e.im);
  } else {
    std::snprintf(buf, sizeof buf, "%.*g", prec, e.re);
  }
  return buf;
}

bool close_real(double g, double e, double rtol, double atol, bool signed_zero) {
  if (std::isnan(e)) return std::isnan(g);
  if (std::isnan(g)) return false;
  if (std::isinf(e) || std::isinf(g)) return g == e;
  if (rtol == 0 && atol == 0) {
    if (g != e) return false;
  } else if (std::fabs(g - e) > atol + rtol * std::fabs(e)) {
    return false;
  }
  if (signed_zero && g == 0 && e == 0 && std::signbit(g) != std::signbit(e)) return false;
  return true;
}

bool close_elem(const Elem& g, const Elem& e, ScalarType t, double rtol, double atol,
                bool signed_zero) {
  if (e.integral) return g.i == e.i;
  if (!isComplexType(t)) return close_real(g.re, e.re, rtol, atol, signed_zero);
  bool en = std::isnan(e.re) || std::isnan(e.im), gn = std::isnan(g.re) || std::isnan(g.im);
  if (en || gn) return en == gn;
  if (std::isinf(e.re) || std::isinf(e.im) || std::isinf(g.re) || std::isinf(g.im) ||
      (rtol == 0 && atol == 0)) {
    return close_real(g.re, e.re, rtol, atol, signed_zero) &&
           close_real(g.im, e.im, rtol, atol, signed_zero);
  }
  return std::hypot(g.re - e.re, g.im - e.im) <= atol + rtol * std::hypot(e.re, e.im);
}

std::string index_str(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = sizes[d] ? flat % sizes[d] : 0;
    flat = sizes[d] ? flat / sizes[d] : 0;
  }
  return sizes_str(idx);
}

std::string scalar_str(const Scalar& s) {
  std::ostringstream os;
  switch (s.type()) {
    case kBool:
      os << (s.toBool() ? "True" : "False");
      break;
    case kLong:
      os << s.toLong();
      break;
    case kDouble:
      os << s.toDouble();
      break;
    default:
      os << s.toComplexDouble().real() << (s.toComplexDouble().imag() < 0 ? "" : "+")
         << s.toComplexDouble().imag() << "j";
  }
  return os.str();
}

}  // namespace

std::string oracle_dir() {
  if (const char* env = std::getenv("EMBER_ORACLE_DIR")) return env;  // a fixture elsewhere
#ifdef EMBER_ORACLE_DIR
  return EMBER_ORACLE_DIR;
#else
  return "oracle";
#endif
}

ScalarType dtype_from_name(std::string_view n) {
  static const std::pair<const char*, ScalarType> table[] = {{"bool", kBool},
                                                             {"uint8", kByte},
                                                             {"int8", kChar},
                                                             {"int16", kShort},
                                                             {"int32", kInt},
                                                             {"int64", kLong},
                                                             {"float16", kHalf},
                                                             {"bfloat16", kBFloat16},
                                                             {"float32", kFloat},
                                                             {"float64", kDouble},
                                                             {"complex32", kComplexHalf},
                                                             {"complex64", kComplexFloat},
                                                             {"complex128", kComplexDouble}};
  for (auto& [name, t] : table) {
    if (n == name) return t;
  }
  throw FixtureError("unknown dtype '" + std::string(n) + "'");
}

std::vector<uint8_t> hex_decode(std::string_view hex) {
  if (hex == "-") return {};
  if (hex.size() % 2) throw FixtureError("odd-length hex string");
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw FixtureError(std::string("bad hex digit '") + c + "'");
  };
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint8_t(nib(hex[2 * i]) << 4 | nib(hex[2 * i + 1]));
  return out;
}

std::string TensorRec::describe() const {
  return std::string(dtype_name(dtype)) + sizes_str(base) + (views == "-" ? "" : "/" + views);
}

std::string ArgRec::describe() const {
  switch (kind) {
    case 'T':
      return t.describe();
    case 'S':
      return "Scalar(" + scalar_str(s) + ")";
    case 'N':
      return "nullopt";
    case 'D': {
      std::ostringstream os;
      os << d;
      return os.str();
    }
    case 'I':
      return std::to_string(i);
    case 'B':
      return b ? "true" : "false";
    case 'Z':
      return "\"" + str + "\"";
  }
  return "?";
}

std::string CaseRec::describe() const {
  std::string s =
      op + " " + variant + " " + label + " (fixture line " + std::to_string(line) + "): args (";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i].describe();
  return s + ")";
}

namespace {

/// The cases of one op's fixture file.
std::vector<CaseRec> parse_cases(const std::string& path, const std::string& op) {
  std::ifstream in(path);
  if (!in) {
    throw FixtureError("cannot open " + path + " (built by tests/oracle/gen_elementwise.py)");
  }
  std::vector<CaseRec> out;
  std::string line;
  int lineno = 0;
  CaseRec* cur = nullptr;
  bool versioned = false;
  auto fail = [&](const std::string& why) {
    throw FixtureError(path + ":" + std::to_string(lineno) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::string_view l(line);
    char tag = l[0];
    std::vector<std::string_view> f = split(l, ' ');
    auto need = [&](size_t n) {
      if (f.size() < n) fail("too few fields");
    };
    try {
      if (tag == 'V') {
        need(2);
        if (f[1] != "1") fail("unsupported fixture version");
        versioned = true;
        continue;
      }
      if (tag == 'C') {
        need(4);
        if (cur) fail("case not closed");
        if (f[1] != op) fail("a case of another op");
        out.emplace_back();
        cur = &out.back();
        cur->op = f[1];
        cur->variant = f[2];
        cur->label = f[3];
        cur->line = lineno;
        continue;
      }
      if (!cur) fail("record outside a case");
      switch (tag) {
        case 'T': {
          need(5);
          ArgRec a;
          a.kind = 'T';
          a.t.dtype = dtype_from_name(f[1]);
          a.t.base = parse_sizes(f[2]);
          a.t.views = f[3];
          a.t.hex = f[4];
          cur->args.push_back(std::move(a));
          break;
        }
        case 'S': {
          need(3);
          ArgRec a;
          a.kind = 'S';
          if (f[1] == "b") {
            a.s = Scalar(parse_int(f[2]) != 0);
          } else if (f[1] == "i") {
            a.s = Scalar(parse_int(f[2]));
          } else if (f[1] == "f") {
            a.s = Scalar(parse_double(f[2]));
          } else if (f[1] == "c") {
            need(4);
            a.s = Scalar(complex<double>(parse_double(f[2]), parse_double(f[3])));
          } else {
            fail("bad scalar kind");
          }
          cur->args.push_back(std::move(a));
          break;
        }
        case 'N':
          cur->args.push_back(ArgRec{});
          break;
        case 'D': {
          need(2);
          ArgRec a;
          a.kind = 'D';
          a.d = parse_double(f[1]);
          cur->args.push_back(std::move(a));
          break;
        }
        case 'I': {
          need(2);
          ArgRec a;
          a.kind = 'I';
          a.i = parse_int(f[1]);
          cur->args.push_back(std::move(a));
          break;
        }
        case 'B': {
          need(2);
          ArgRec a;
          a.kind = 'B';
          a.b = parse_int(f[1]) != 0;
          cur->args.push_back(std::move(a));
          break;
        }
        case 'Z': {
          need(2);
          ArgRec a;
          a.kind = 'Z';
          a.str = f[1];
          cur->args.push_back(std::move(a));
          break;
        }
        case 'R':
        case 'W': {
          need(4);
          ResultRec r;
          r.dtype = dtype_from_name(f[1]);
          r.sizes = parse_sizes(f[2]);
          r.hex = f[3];
          if (hex_decode(r.hex).size() != size_t(numel_of(r.sizes)) * elementSize(r.dtype)) {
            fail("result bytes do not match dtype and sizes");
          }
          (tag == 'R' ? cur->result : cur->base_after) = std::move(r);
          break;
        }
        case 'X': {
          need(2);
          cur->exc = f[1];
          size_t p = l.find(' ', 2);
          cur->exc_msg = p == std::string_view::npos ? "" : std::string(l.substr(p + 1));
          break;
        }
        case 'K': {
          need(4);
          cur->rtol = parse_double(f[1]);
          cur->atol = parse_double(f[2]);
          cur->signed_zero = f[3].find('z') != std::string_view::npos;
          break;
        }
        case 'E':
          if (cur->exc.empty() == !cur->result.has_value()) fail("case needs exactly one of R, X");
          cur = nullptr;
          break;
        default:
          fail(std::string("unknown record '") + tag + "'");
      }
    } catch (const FixtureError& e) {
      if (std::string(e.what()).find(path) == 0) throw;
      fail(e.what());
    }
  }
  if (cur) fail("unterminated case at end of file");
  if (!versioned) throw FixtureError(path + ": no version record");
  return out;
}

}  // namespace

const std::map<std::string, int>& elementwise_index() {
  static const std::map<std::string, int> index = [] {
    std::string path = oracle_dir() + "/elementwise.txt";
    std::ifstream in(path);
    if (!in) {
      throw FixtureError("cannot open " + path + " (built by tests/oracle/gen_elementwise.py)");
    }
    std::map<std::string, int> out;
    std::string line;
    bool versioned = false;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string tag, name;
      int n = -1;
      ls >> tag;
      if (tag == "V") {
        ls >> n;
        if (n != 1) throw FixtureError(path + ": unsupported fixture version");
        versioned = true;
      } else if (tag == "O") {
        ls >> name >> n;
        if (name.empty() || n < 0) throw FixtureError(path + ": bad index line '" + line + "'");
        out[name] = n;
      } else if (!tag.empty()) {
        throw FixtureError(path + ": bad index line '" + line + "'");
      }
    }
    if (!versioned) throw FixtureError(path + ": no version record");
    return out;
  }();
  return index;
}

const std::vector<CaseRec>& elementwise_cases(const std::string& op) {
  static std::map<std::string, std::vector<CaseRec>> cache;
  auto it = cache.find(op);
  if (it != cache.end()) return it->second;
  const auto& index = elementwise_index();
  auto entry = index.find(op);
  if (entry == index.end()) throw FixtureError("the oracle index lists no op '" + op + "'");
  std::vector<CaseRec> cases = parse_cases(oracle_dir() + "/elementwise/" + op + ".txt", op);
  if (int(cases.size()) != entry->second) {
    throw FixtureError("elementwise/" + op + ".txt has " + std::to_string(cases.size()) +
                       " cases, the index says " + std::to_string(entry->second));
  }
  return cache.emplace(op, std::move(cases)).first->second;
}

Tensor materialize(const TensorRec& rec, Tensor* base_out) {
  Tensor base = ember::empty(IntArrayRef(rec.base), TensorOptions(rec.dtype));
  std::vector<uint8_t> bytes = hex_decode(rec.hex);
  size_t want = size_t(numel_of(rec.base)) * elementSize(rec.dtype);
  if (bytes.size() != want) throw FixtureError("tensor bytes do not match dtype and sizes");
  if (want) std::memcpy(base.data_ptr(), bytes.data(), want);
  Tensor v = base;
  if (rec.views != "-") {
    for (auto step : split(rec.views, '/')) {
      if (step == "t") {
        v = v.t();
      } else if (!step.empty() && step[0] == 's') {
        auto parts = split(step.substr(1), ':');
        if (parts.size() != 2) throw FixtureError("bad slice step");
        v = v.slice(parse_int(parts[0]), std::nullopt, std::nullopt, parse_int(parts[1]));
      } else if (!step.empty() && step[0] == 'e') {
        v = v.expand(IntArrayRef(parse_sizes(step.substr(1))));
      } else {
        throw FixtureError("bad view step '" + std::string(step) + "'");
      }
    }
  }
  if (base_out) *base_out = base;
  return v;
}

std::vector<uint8_t> gather_bytes(const Tensor& t0) {
  Tensor t = t0.is_conj() ? t0.resolve_conj() : t0;
  const size_t isz = elementSize(t.dtype());
  const int64_t n = t.numel();
  std::vector<uint8_t> out(size_t(n) * isz);
  if (n == 0) return out;
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  const int64_t dim = t.dim();
  std::vector<int64_t> idx(dim, 0);
  auto sizes = t.sizes();
  auto strides = t.strides();
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < dim; ++d) off += idx[d] * strides[d];
    std::memcpy(out.data() + size_t(k) * isz, p + off * int64_t(isz), isz);
    for (int64_t d = dim - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::string compare(const Tensor& got, const ResultRec& exp, double rtol, double atol,
                    bool signed_zero, int max_report) {
  if (!got.defined()) return "result is an undefined tensor";
  std::ostringstream os;
  if (got.dtype() != exp.dtype) {
    os << "dtype: got " << dtype_name(got.dtype()) << ", expected " << dtype_name(exp.dtype);
    return os.str();
  }
  std::vector<int64_t> gs(got.sizes().begin(), got.sizes().end());
  if (gs != exp.sizes) {
    os << "shape: got " << sizes_str(gs) << ", expected " << sizes_str(exp.sizes);
    return os.str();
  }
  const std::vector<uint8_t> g = gather_bytes(got);
  const std::vector<uint8_t> e = hex_decode(exp.hex);
  const size_t isz = elementSize(exp.dtype);
  const int64_t n = numel_of(exp.sizes);
  int bad = 0;
  for (int64_t k = 0; k < n; ++k) {
    Elem ge = load(g.data() + k * isz, exp.dtype), ee = load(e.data() + k * isz, exp.dtype);
    if (close_elem(ge, ee, exp.dtype, rtol, atol, signed_zero)) continue;
    if (bad < max_report) {
      os << (bad ? "; " : "values: ") << "at " << index_str(k, exp.sizes) << " got "
         << fmt_elem(ge, exp.dtype) << " expected " << fmt_elem(ee, exp.dtype);
    }
    ++bad;
  }
  if (bad) {
    os << " (" << bad << " of " << n << " elements differ; rtol " << rtol << " atol " << atol
       << (signed_zero ? ", signed zeros" : "") << ")";
  }
  return os.str();
}

const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Runtime:
      return "RuntimeError";
    case ErrorKind::Value:
      return "ValueError";
    case ErrorKind::Index:
      return "IndexError";
    case ErrorKind::Type:
      return "TypeError";
    case ErrorKind::NotImplemented:
      return "NotImplementedError";
    case ErrorKind::Internal:
      return "InternalError";
  }
  return "?";
}

bool exception_matches(std::string_view py, const ember::Error& e) {
  const ErrorKind k = e.kind();
  // Python's NotImplementedError is a subclass of RuntimeError.
  if (py == "RuntimeError") return k == ErrorKind::Runtime || k == ErrorKind::NotImplemented;
  if (py == "ValueError") return k == ErrorKind::Value;
  if (py == "TypeError") return k == ErrorKind::Type;
  if (py == "IndexError") return k == ErrorKind::Index;
  if (py == "NotImplementedError") return k == ErrorKind::NotImplemented;
  throw FixtureError("no ember exception for Python's " + std::string(py));
}

}  // namespace ember::oracle
