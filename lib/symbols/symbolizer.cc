#include "symbols/symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace memlife::symbols {

namespace {

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

std::string demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string result(out);
  std::free(out);
  return result;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

struct Symbolizer::ModuleState {
  struct Symbol {
    uint64_t start = 0, size = 0;
    const char* name = nullptr;  // owned by libdw, valid while dwfl lives
  };
  Module module;
  Dwfl* dwfl = nullptr;
  Dwfl_Module* dwfl_module = nullptr;
  bool tried = false;
  // Function symbols sorted by address: dwfl_module_addrname scans the
  // whole symbol table on every call, far too slow for 60,000 frames.
  std::vector<Symbol> symbols;

  void load_symbols() {
    const int n = dwfl_module_getsymtab(dwfl_module);
    for (int i = 1; i < n; ++i) {
      GElf_Sym sym;
      GElf_Addr addr = 0;
      const char* name =
          dwfl_module_getsym_info(dwfl_module, i, &sym, &addr, nullptr, nullptr, nullptr);
      if (!name || !*name || addr == 0 || GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
      symbols.push_back({addr, sym.st_size, name});
    }
    std::sort(symbols.begin(), symbols.end(), [](const Symbol& a, const Symbol& b) {
      return a.start != b.start ? a.start < b.start : a.size > b.size;
    });
  }

  const char* function_at(uint64_t address) const {
    auto it = std::upper_bound(symbols.begin(), symbols.end(), address,
                               [](uint64_t a, const Symbol& s) { return a < s.start; });
    if (it == symbols.begin()) return nullptr;
    --it;
    if (it->size != 0 && address >= it->start + it->size) return nullptr;
    return it->name;
  }

  ~ModuleState() {
    if (dwfl) dwfl_end(dwfl);
  }

  // Opens the ELF lazily: a trace maps hundreds of objects and a report
  // touches a few of them.
  Dwfl_Module* open() {
    if (tried) return dwfl_module;
    tried = true;
    dwfl = dwfl_begin(&kOfflineCallbacks);
    if (!dwfl) return nullptr;
    dwfl_report_begin(dwfl);
    // The base is the load bias, as dl_iterate_phdr gives it.
    dwfl_module = dwfl_report_elf(dwfl, module.path.c_str(), module.path.c_str(), -1, module.base,
                                  /*add_p_vaddr=*/true);
    dwfl_report_end(dwfl, nullptr, nullptr);
    if (dwfl_module) load_symbols();
    return dwfl_module;
  }
};

Symbolizer::Symbolizer(std::vector<Module> modules) {
  for (Module& m : modules) {
    auto state = std::make_unique<ModuleState>();
    state->module = std::move(m);
    modules_.push_back(std::move(state));
  }
  std::stable_sort(modules_.begin(), modules_.end(),
                   [](const auto& a, const auto& b) { return a->module.base < b->module.base; });
}

Symbolizer::~Symbolizer() = default;

void Symbolizer::add_module(Module module) {
  auto state = std::make_unique<ModuleState>();
  state->module = std::move(module);
  // After every module at or below its base: a later listing of a range
  // wins, as in the constructor's stable sort.
  auto at = std::upper_bound(modules_.begin(), modules_.end(), state->module.base,
                             [](uint64_t base, const auto& m) { return base < m->module.base; });
  modules_.insert(at, std::move(state));
  cache_.clear();  // an address resolved before may fall in it now
}

size_t Symbolizer::opened_modules() const {
  size_t n = 0;
  for (const auto& m : modules_) n += m->dwfl_module != nullptr;
  return n;
}

Symbolizer::ModuleState* Symbolizer::module_for(uint64_t address) {
  // Last module starting at or below the address; later records of the same
  // range (a re-emitted map) win because the sort is stable.
  auto it = std::upper_bound(modules_.begin(), modules_.end(), address,
                             [](uint64_t a, const auto& m) { return a < m->module.base; });
  // Modules can overlap (a re-emitted map), so look a few candidates down.
  for (int tries = 0; tries < 8 && it != modules_.begin(); ++tries) {
    --it;
    const Module& m = (*it)->module;
    if (address >= m.base && address < m.base + m.size) return it->get();
  }
  return nullptr;
}

const NativeFrame& Symbolizer::symbolize(uint64_t address, bool return_address) {
  const uint64_t lookup = return_address && address > 0 ? address - 1 : address;
  auto it = cache_.find(lookup);
  if (it != cache_.end()) return it->second;
  NativeFrame frame = resolve(address, lookup);
  return cache_.emplace(lookup, std::move(frame)).first->second;
}

NativeFrame Symbolizer::resolve(uint64_t address, uint64_t lookup) {
  NativeFrame frame;
  frame.address = address;
  ModuleState* state = module_for(lookup);
  if (!state) {
    frame.function = hex(address);
    return frame;
  }
  frame.module = state->module.path;
  frame.function = hex(lookup - state->module.base);
  Dwfl_Module* mod = state->open();
  if (!mod) return frame;
  if (const char* name = state->function_at(lookup)) frame.function = demangle(name);
  if (Dwfl_Line* line = dwfl_module_getsrc(mod, lookup)) {
    int lineno = 0;
    if (const char* src = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
      frame.file = src;
      frame.line = static_cast<uint64_t>(lineno > 0 ? lineno : 0);
    }
    return frame;
  }
  // Objects built by clang carry no .debug_aranges, and libdw before 0.189
  // then finds no compile unit for the address: walk the units instead.
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = nullptr; (cu = dwfl_module_nextcu(mod, cu, &bias)) != nullptr;) {
    if (dwarf_haspc(cu, lookup - bias) <= 0) continue;
    if (Dwarf_Line* line = dwarf_getsrc_die(cu, lookup - bias)) {
      int lineno = 0;
      if (const char* src = dwarf_linesrc(line, nullptr, nullptr)) frame.file = src;
      if (dwarf_lineno(line, &lineno) == 0 && lineno > 0)
        frame.line = static_cast<uint64_t>(lineno);
    }
    break;
  }
  return frame;
}

}  // namespace memlife::symbols
