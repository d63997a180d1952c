// Offline symbolization of native return addresses from the module map a
// trace carries (path, load base, size), with libdw. Each module's ELF and
// DWARF are opened once, on first use; each address is resolved once.
// Not thread safe: one Symbolizer per analyzed process. Used by the
// analyzer's findings, the views' sites and `memlife dump`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/trace_tables.h"

namespace memlife::symbols {

using format::Module;

struct NativeFrame {
  uint64_t address = 0;
  std::string module;    // path of the object, empty when outside every module
  std::string function;  // demangled; "0x..." (module-relative) when unknown
  std::string file;      // empty when there is no line information
  uint64_t line = 0;
};

class Symbolizer {
 public:
  explicit Symbolizer(std::vector<Module> modules = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // `return_address`: the address is where a call returns to, so the call
  // itself is one byte before it (true for every frame but the innermost).
  const NativeFrame& symbolize(uint64_t address, bool return_address);
  // A module listed after the symbolizer was made (a reader going through
  // a trace in order meets module records as the program loaded them).
  void add_module(Module module);

  size_t cached_addresses() const { return cache_.size(); }
  size_t opened_modules() const;

 private:
  struct ModuleState;
  ModuleState* module_for(uint64_t address);
  NativeFrame resolve(uint64_t address, uint64_t lookup);

  std::vector<std::unique_ptr<ModuleState>> modules_;  // sorted by base
  std::unordered_map<uint64_t, NativeFrame> cache_;    // by lookup address
};

}  // namespace memlife::symbols
