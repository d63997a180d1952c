// Writes Python pickles (protocol 2) of plain data: dicts, lists, str, int,
// float, bool and None. Only opcodes that both CPython and the JavaScript
// unpickler of torch's memory_viz understand are used. Objects written once
// can be referenced again through the memo, which keeps repeated stacks
// (the bulk of a memory snapshot) from being written out for every event.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memlife::views {

class PickleWriter {
 public:
  PickleWriter();

  void none();
  void boolean(bool v);
  void integer(int64_t v);
  void unsigned_integer(uint64_t v);
  void floating(double v);
  // Invalid UTF-8 is replaced, so any trace string can be written.
  void str(std::string_view v);

  // A dict is begin_dict(), then key, value, key, value..., then end_dict().
  void begin_dict();
  void end_dict();
  void begin_list();
  void end_list();
  // Convenience for the common "key: value" inside a dict.
  void key(std::string_view k) { str(k); }

  // Stores the object just completed (top of the unpickler's stack) in the
  // memo and returns its index; `get(index)` pushes it again.
  uint32_t put();
  void get(uint32_t index);

  // Appends STOP and returns the bytes. The writer must not be used after.
  std::string finish();

  size_t size() const { return out_.size(); }

 private:
  void u32(uint32_t v);
  std::string out_;
  uint32_t next_memo_ = 0;
};

}  // namespace memlife::views
