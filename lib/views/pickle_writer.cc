#include "views/pickle_writer.h"

#include <cstring>

#include "views/utf8.h"

namespace memlife::views {

namespace op {
constexpr char kProto = '\x80';
constexpr char kNone = 'N';
constexpr char kTrue = '\x88';
constexpr char kFalse = '\x89';
constexpr char kBinInt = 'J';
constexpr char kBinInt1 = 'K';
constexpr char kBinInt2 = 'M';
constexpr char kLong1 = '\x8a';
constexpr char kBinFloat = 'G';
constexpr char kBinUnicode = 'X';
constexpr char kEmptyDict = '}';
constexpr char kEmptyList = ']';
constexpr char kMark = '(';
constexpr char kSetItems = 'u';
constexpr char kAppends = 'e';
constexpr char kBinPut = 'q';
constexpr char kLongBinPut = 'r';
constexpr char kBinGet = 'h';
constexpr char kLongBinGet = 'j';
constexpr char kStop = '.';
}  // namespace op

PickleWriter::PickleWriter() {
  out_.push_back(op::kProto);
  out_.push_back('\x02');
}

void PickleWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PickleWriter::none() { out_.push_back(op::kNone); }
void PickleWriter::boolean(bool v) { out_.push_back(v ? op::kTrue : op::kFalse); }

void PickleWriter::integer(int64_t v) {
  if (v >= 0 && v < 256) {
    out_.push_back(op::kBinInt1);
    out_.push_back(static_cast<char>(v));
  } else if (v >= 0 && v < 65536) {
    out_.push_back(op::kBinInt2);
    out_.push_back(static_cast<char>(v & 0xff));
    out_.push_back(static_cast<char>(v >> 8));
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out_.push_back(op::kBinInt);
    u32(static_cast<uint32_t>(static_cast<int32_t>(v)));
  } else {
    // LONG1: little-endian two's complement, as few bytes as keep the sign.
    char bytes[8];
    uint64_t u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((u >> (8 * i)) & 0xff);
    int n = 8;
    while (n > 1) {
      const auto top = static_cast<unsigned char>(bytes[n - 1]);
      const auto next = static_cast<unsigned char>(bytes[n - 2]);
      if ((top == 0 && !(next & 0x80)) || (top == 0xff && (next & 0x80))) {
        --n;
      } else {
        break;
      }
    }
    out_.push_back(op::kLong1);
    out_.push_back(static_cast<char>(n));
    out_.append(bytes, n);
  }
}

void PickleWriter::unsigned_integer(uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) return integer(static_cast<int64_t>(v));
  // Needs a ninth byte so the value stays positive.
  out_.push_back(op::kLong1);
  out_.push_back('\x09');
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  out_.push_back('\0');
}

void PickleWriter::floating(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  out_.push_back(op::kBinFloat);
  for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void PickleWriter::str(std::string_view v) {
  const std::string clean = valid_utf8(v);
  out_.push_back(op::kBinUnicode);
  u32(static_cast<uint32_t>(clean.size()));
  out_ += clean;
}

void PickleWriter::begin_dict() {
  out_.push_back(op::kEmptyDict);
  out_.push_back(op::kMark);
}
void PickleWriter::end_dict() { out_.push_back(op::kSetItems); }
void PickleWriter::begin_list() {
  out_.push_back(op::kEmptyList);
  out_.push_back(op::kMark);
}
void PickleWriter::end_list() { out_.push_back(op::kAppends); }

uint32_t PickleWriter::put() {
  const uint32_t index = next_memo_++;
  if (index < 256) {
    out_.push_back(op::kBinPut);
    out_.push_back(static_cast<char>(index));
  } else {
    out_.push_back(op::kLongBinPut);
    u32(index);
  }
  return index;
}

void PickleWriter::get(uint32_t index) {
  if (index < 256) {
    out_.push_back(op::kBinGet);
    out_.push_back(static_cast<char>(index));
  } else {
    out_.push_back(op::kLongBinGet);
    u32(index);
  }
}

std::string PickleWriter::finish() {
  out_.push_back(op::kStop);
  return std::move(out_);
}

}  // namespace memlife::views
