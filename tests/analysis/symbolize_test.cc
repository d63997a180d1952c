#include <gtest/gtest.h>
#include <link.h>

#include "symbols/symbolizer.h"

namespace memlife::symbols {

// Kept out of line so it has an address of its own.
__attribute__((noinline)) uint64_t memlife_symbolize_probe(uint64_t x) { return x * 3 + 1; }

namespace {

std::vector<Module> loaded_modules() {
  std::vector<Module> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) {
        auto* mods = static_cast<std::vector<Module>*>(arg);
        std::string path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
        uint64_t hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_LOAD)
            hi = std::max<uint64_t>(hi, info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz);
        if (path == "/proc/self/exe") {
          char buf[4096];
          const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
          if (n > 0) path.assign(buf, static_cast<size_t>(n));
        }
        mods->push_back(Module{path, info->dlpi_addr, hi, ""});
        return 0;
      },
      &out);
  return out;
}

TEST(Symbolizer, ResolvesFunctionFileAndLine) {
  Symbolizer sym(loaded_modules());
  const auto addr = reinterpret_cast<uint64_t>(&memlife_symbolize_probe);
  const NativeFrame& f = sym.symbolize(addr, false);
  EXPECT_NE(f.function.find("memlife_symbolize_probe"), std::string::npos) << f.function;
  EXPECT_NE(f.file.find("symbolize_test.cc"), std::string::npos) << f.file;
  EXPECT_GT(f.line, 0u);
  EXPECT_EQ(sym.opened_modules(), 1u);
  sym.symbolize(addr, false);
  EXPECT_EQ(sym.cached_addresses(), 1u);
}

TEST(Symbolizer, AddressOutsideEveryModule) {
  Symbolizer sym({Module{"/nonexistent.so", 0x1000, 0x1000, ""}});
  EXPECT_EQ(sym.symbolize(0x10, false).module, "");
  const NativeFrame& f = sym.symbolize(0x1800, false);  // module file missing
  EXPECT_EQ(f.module, "/nonexistent.so");
  EXPECT_EQ(f.function, "0x800");
}

TEST(Symbolizer, ModulesAddedAsAReaderMeetsThem) {
  // memlife dump meets module records in trace order: an address resolved
  // before its module was listed resolves again once it is.
  Symbolizer sym;
  const auto addr = reinterpret_cast<uint64_t>(&memlife_symbolize_probe);
  EXPECT_EQ(sym.symbolize(addr, false).module, "");
  for (Module& m : loaded_modules()) sym.add_module(std::move(m));
  EXPECT_NE(sym.symbolize(addr, false).function.find("memlife_symbolize_probe"), std::string::npos);
}

}  // namespace
}  // namespace memlife::symbols
