// Module map for offline symbolization: every loaded object's path, load
// base, extent and GNU build-id, written once per object.
#include <elf.h>
#include <link.h>

#include <cstring>
#include <mutex>

#include "preload/recorder_state.h"

namespace memlife::rec {
namespace {

constexpr size_t kMaxModules = 4096;
std::mutex g_modules_mutex;
uint64_t g_reported_bases[kMaxModules];
size_t g_reported_count = 0;

bool already_reported(uint64_t base) {
  for (size_t i = 0; i < g_reported_count; ++i) {
    if (g_reported_bases[i] == base) return true;
  }
  return false;
}

std::string_view build_id_of(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + ((note->n_namesz + 3) & ~3u);
      const uint8_t* next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        return {reinterpret_cast<const char*>(desc), note->n_descsz};
      }
      p = next;
    }
  }
  return {};
}

struct Walk {
  ThreadWriter* writer;
};

int report_module(dl_phdr_info* info, size_t, void* data) {
  auto* walk = static_cast<Walk*>(data);
  const uint64_t base = info->dlpi_addr;
  if (already_reported(base) || g_reported_count >= kMaxModules) return 0;
  uint64_t low = ~uint64_t{0}, high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_vaddr < low) low = ph.p_vaddr;
    if (ph.p_vaddr + ph.p_memsz > high) high = ph.p_vaddr + ph.p_memsz;
  }
  if (high == 0) return 0;
  g_reported_bases[g_reported_count++] = base;
  const char* path = info->dlpi_name;
  char exe[4096];
  if (path == nullptr || *path == '\0') {
    // The main program: dl_iterate_phdr gives it no name.
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    path = exe;
  }
  emit(*walk->writer, format::ModuleRecord{path, base, high, build_id_of(info)});
  return 0;
}

}  // namespace

void emit_new_modules(ThreadWriter& w) {
  std::lock_guard<std::mutex> lock(g_modules_mutex);
  Walk walk{&w};
  dl_iterate_phdr(report_module, &walk);
}

void lock_modules_for_fork() { g_modules_mutex.lock(); }
void unlock_modules_after_fork() { g_modules_mutex.unlock(); }
void reset_modules_after_fork() { g_reported_count = 0; }

}  // namespace memlife::rec
