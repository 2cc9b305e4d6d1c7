// safetensors header codec (Note [safetensors layout] in safetensors_format.h). The JSON reader
// is strict RFC 8259 with a depth limit: the header is untrusted input.
#include "serialize/safetensors_format.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ember/error.h"

namespace ember::safetensors {
namespace {

struct JsonMember;

struct Json {
  enum Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Null;
  bool boolean = false;
  std::string text;  // the literal of a number, the decoded value of a string
  std::vector<Json> items;
  std::vector<JsonMember> members;
};

struct JsonMember {
  std::string key;
  Json value;
};

class JsonReader {
 public:
  JsonReader(std::string_view s, const std::string& where) : s_(s), where_(where) {}

  Json parse_document() {
    Json v = parse_value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected data after the top-level value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    EMBER_THROW(Error, "[load] ", where_, ": invalid safetensors header: ", what, " at byte ", pos_,
                " of the JSON header");
  }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect_literal(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) fail("invalid literal");
    pos_ += lit.size();
  }

  Json parse_value(int depth) {
    if (depth > kMaxJsonDepth) fail("JSON nested too deeply");
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of JSON");
    Json v;
    char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Object;
      skip_ws();
      if (eat('}')) return v;
      while (true) {
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
        std::string key = parse_string();
        skip_ws();
        if (!eat(':')) fail("expected ':'");
        Json member = parse_value(depth + 1);
        v.members.push_back({std::move(key), std::move(member)});
        skip_ws();
        if (eat(',')) continue;
        if (eat('}')) return v;
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      ++pos_;
      v.kind = Json::Array;
      skip_ws();
      if (eat(']')) return v;
      while (true) {
        v.items.push_back(parse_value(depth + 1));
        skip_ws();
        if (eat(',')) continue;
        if (eat(']')) return v;
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Json::String;
      v.text = parse_string();
      return v;
    }
    if (c == 't' || c == 'f') {
      v.kind = Json::Bool;
      v.boolean = c == 't';
      expect_literal(c == 't' ? "true" : "false");
      return v;
    }
    if (c == 'n') {
      expect_literal("null");
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Number;
      v.text = parse_number();
      return v;
    }
    fail("unexpected character");
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  std::string parse_number() {
    size_t start = pos_;
    eat('-');
    if (eat('0')) {
    } else if (pos_ < s_.size() && digit(s_[pos_]) && s_[pos_] != '0') {
      while (pos_ < s_.size() && digit(s_[pos_])) ++pos_;
    } else {
      fail("invalid number");
    }
    if (eat('.')) {
      if (pos_ >= s_.size() || !digit(s_[pos_])) fail("invalid number");
      while (pos_ < s_.size() && digit(s_[pos_])) ++pos_;
    }
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (pos_ >= s_.size() || !digit(s_[pos_])) fail("invalid number");
      while (pos_ < s_.size() && digit(s_[pos_])) ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  uint32_t parse_hex4() {
    if (s_.size() - pos_ < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= uint32_t(c - 'A' + 10);
      else
        fail("invalid \\u escape");
    }
    return v;
  }

  // Copies one raw UTF-8 sequence, rejecting overlong forms, surrogates and code points past
  // U+10FFFF (Python's decoder would refuse the header otherwise).
  void copy_utf8(std::string& out) {
    auto b0 = uint8_t(s_[pos_]);
    int len;
    uint32_t cp;
    if (b0 < 0x80) {
      out += char(b0);
      ++pos_;
      return;
    } else if ((b0 & 0xE0) == 0xC0) {
      len = 2, cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, cp = b0 & 0x07;
    } else {
      fail("invalid UTF-8");
    }
    if (s_.size() - pos_ < size_t(len)) fail("truncated UTF-8");
    for (int i = 1; i < len; ++i) {
      auto b = uint8_t(s_[pos_ + size_t(i)]);
      if ((b & 0xC0) != 0x80) fail("invalid UTF-8");
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail("invalid UTF-8");
    out.append(s_.substr(pos_, size_t(len)));
    pos_ += size_t(len);
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (uint8_t(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        copy_utf8(out);
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) fail("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!eat('\\') || !eat('u')) fail("lone high surrogate");
            uint32_t lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          put_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          fail("invalid escape");
      }
    }
  }

  std::string_view s_;
  const std::string& where_;
  size_t pos_ = 0;
};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  EMBER_THROW(Error, "[load] ", where, ": invalid safetensors file: ", what);
}

// A JSON number that is a non-negative integer no larger than `max`.
uint64_t to_uint(const Json& v, uint64_t max, const std::string& where, const std::string& what) {
  if (v.kind != Json::Number || v.text.empty() || v.text[0] == '-' ||
      v.text.find_first_of(".eE") != std::string::npos)
    bad(where, what + " must be a non-negative integer");
  uint64_t r = 0;
  for (char c : v.text) {
    uint64_t d = uint64_t(c - '0');
    if (r > (max - d) / 10) bad(where, what + " " + v.text + " is too large");
    r = r * 10 + d;
  }
  return r;
}

Entry parse_entry(const std::string& name, const Json& v, const std::string& where) {
  std::string tag = "tensor '" + name + "'";
  if (v.kind != Json::Object) bad(where, tag + ": expected an object");
  Entry e;
  e.name = name;
  bool has_dtype = false, has_shape = false, has_offsets = false;
  for (const auto& [key, m] : v.members) {
    if (key == "dtype") {
      if (has_dtype) bad(where, tag + ": duplicate key 'dtype'");
      has_dtype = true;
      if (m.kind != Json::String) bad(where, tag + ": 'dtype' must be a string");
      if (dtype_itemsize(m.text) == 0) bad(where, tag + ": unsupported dtype '" + m.text + "'");
      e.dtype = m.text;
    } else if (key == "shape") {
      if (has_shape) bad(where, tag + ": duplicate key 'shape'");
      has_shape = true;
      if (m.kind != Json::Array) bad(where, tag + ": 'shape' must be an array");
      if (m.items.size() > 64) bad(where, tag + ": more than 64 dimensions");
      for (const Json& d : m.items)
        e.shape.push_back(int64_t(
            to_uint(d, uint64_t(std::numeric_limits<int64_t>::max()), where, tag + ": a size")));
    } else if (key == "data_offsets") {
      if (has_offsets) bad(where, tag + ": duplicate key 'data_offsets'");
      has_offsets = true;
      if (m.kind != Json::Array || m.items.size() != 2)
        bad(where, tag + ": 'data_offsets' must be [begin, end]");
      e.begin = to_uint(m.items[0], std::numeric_limits<uint64_t>::max(), where, tag + ": begin");
      e.end = to_uint(m.items[1], std::numeric_limits<uint64_t>::max(), where, tag + ": end");
      if (e.end < e.begin) bad(where, tag + ": data_offsets end < begin");
    } else {
      bad(where, tag + ": unexpected key '" + key + "'");
    }
  }
  if (!has_dtype || !has_shape || !has_offsets)
    bad(where, tag + ": needs 'dtype', 'shape' and 'data_offsets'");
  // numel * itemsize must equal the byte range, computed without overflow.
  uint64_t bytes = dtype_itemsize(e.dtype);
  for (int64_t d : e.shape) {
    if (d != 0 && bytes > std::numeric_limits<uint64_t>::max() / uint64_t(d))
      bad(where, tag + ": shape is too large");
    bytes *= uint64_t(d);
  }
  if (bytes != e.end - e.begin)
    bad(where, tag + ": shape and dtype need " + std::to_string(bytes) +
                   " bytes but data_offsets span " + std::to_string(e.end - e.begin));
  return e;
}

}  // namespace

size_t dtype_itemsize(std::string_view d) {
  if (d == "BOOL" || d == "U8" || d == "I8") return 1;
  if (d == "I16" || d == "F16" || d == "BF16") return 2;
  if (d == "I32" || d == "F32") return 4;
  if (d == "I64" || d == "F64" || d == "C64") return 8;
  if (d == "C128") return 16;
  return 0;
}

uint64_t parse_header_length(const uint8_t* first8, uint64_t file_size, const std::string& where) {
  if (file_size < 8) bad(where, "file of " + std::to_string(file_size) + " bytes is too short");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | first8[i];
  if (n > kMaxHeaderBytes) bad(where, "header length " + std::to_string(n) + " is too large");
  if (n > file_size - 8)
    bad(where, "header length " + std::to_string(n) + " exceeds the file size " +
                   std::to_string(file_size));
  if (n < 2) bad(where, "header length " + std::to_string(n) + " is too small");
  return n;
}

Header parse_header(std::string_view json, uint64_t file_size, const std::string& where) {
  if (json.empty() || json[0] != '{') bad(where, "header does not start with '{'");
  Json doc = JsonReader(json, where).parse_document();
  if (doc.kind != Json::Object) bad(where, "header is not a JSON object");
  Header h;
  h.data_start = 8 + json.size();
  if (h.data_start > file_size) bad(where, "header exceeds the file size");
  h.data_size = file_size - h.data_start;
  bool has_meta = false;
  std::vector<std::string_view> names;
  for (const auto& [key, v] : doc.members) {
    if (key == "__metadata__") {
      if (has_meta) bad(where, "duplicate key '__metadata__'");
      has_meta = true;
      if (v.kind != Json::Object) bad(where, "'__metadata__' must be an object");
      std::vector<std::string_view> mkeys;
      for (const auto& [mk, mv] : v.members) {
        if (mv.kind != Json::String) bad(where, "metadata value of '" + mk + "' must be a string");
        h.metadata.emplace_back(mk, mv.text);
        mkeys.push_back(mk);
      }
      std::sort(mkeys.begin(), mkeys.end());
      auto dup = std::adjacent_find(mkeys.begin(), mkeys.end());
      if (dup != mkeys.end()) bad(where, "duplicate metadata key '" + std::string(*dup) + "'");
      continue;
    }
    h.entries.push_back(parse_entry(key, v, where));
    names.push_back(key);
  }
  std::sort(names.begin(), names.end());
  auto dup = std::adjacent_find(names.begin(), names.end());
  if (dup != names.end()) bad(where, "duplicate tensor name '" + std::string(*dup) + "'");

  // The byte ranges must tile [0, data_size) exactly.
  std::vector<const Entry*> order;
  for (const Entry& e : h.entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t cursor = 0;
  for (const Entry* e : order) {
    if (e->begin > h.data_size || e->end > h.data_size)
      bad(where, "tensor '" + e->name + "' data_offsets [" + std::to_string(e->begin) + ", " +
                     std::to_string(e->end) + "] exceed the data buffer of " +
                     std::to_string(h.data_size) + " bytes");
    if (e->begin < cursor) bad(where, "tensor '" + e->name + "' overlaps another tensor");
    if (e->begin > cursor)
      bad(where, "gap in the data buffer before tensor '" + e->name + "' (bytes " +
                     std::to_string(cursor) + " to " + std::to_string(e->begin) + ")");
    cursor = e->end;
  }
  if (cursor != h.data_size)
    bad(where, "data buffer has " + std::to_string(h.data_size) + " bytes but the tensors use " +
                   std::to_string(cursor));
  return h;
}

Header parse_file(const uint8_t* data, size_t size, const std::string& where) {
  uint64_t n = parse_header_length(data, size, where);
  return parse_header(std::string_view(reinterpret_cast<const char*>(data) + 8, size_t(n)), size,
                      where);
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    auto u = uint8_t(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

std::string build_header(const std::vector<Entry>& entries,
                         const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::string json = "{";
  bool first = true;
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      if (i) json += ',';
      append_json_string(json, metadata[i].first);
      json += ':';
      append_json_string(json, metadata[i].second);
    }
    json += '}';
    first = false;
  }
  for (const Entry& e : entries) {
    if (!first) json += ',';
    first = false;
    append_json_string(json, e.name);
    json += ":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(e.shape[i]);
    }
    json += "],\"data_offsets\":[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]}";
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xFF);
  out += json;
  return out;
}

}  // namespace ember::safetensors
