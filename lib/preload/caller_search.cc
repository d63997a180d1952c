#include "preload/caller_search.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace memlife::rec {
namespace {

struct SearchDirs {
  const char* rpath = nullptr;    // DT_RPATH, ':'-separated
  const char* runpath = nullptr;  // DT_RUNPATH
};

SearchDirs dirs_of(const link_map* object) {
  SearchDirs dirs;
  const char* strtab = nullptr;
  ElfW(Xword) rpath = 0, runpath = 0;
  bool has_rpath = false, has_runpath = false;
  for (const ElfW(Dyn)* d = object->l_ld; d != nullptr && d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) {
      // glibc relocates the dynamic section's addresses in place where it
      // is writable (x86-64); elsewhere they are still offsets.
      ElfW(Addr) address = d->d_un.d_ptr;
      if (address < object->l_addr) address += object->l_addr;
      strtab = reinterpret_cast<const char*>(address);
    } else if (d->d_tag == DT_RPATH) {
      rpath = d->d_un.d_val;
      has_rpath = true;
    } else if (d->d_tag == DT_RUNPATH) {
      runpath = d->d_un.d_val;
      has_runpath = true;
    }
  }
  if (strtab == nullptr) return dirs;
  if (has_runpath) {
    dirs.runpath = strtab + runpath;  // the loader ignores RPATH then
  } else if (has_rpath) {
    dirs.rpath = strtab + rpath;
  }
  return dirs;
}

// Writes dir + "/" + file to out, expanding $ORIGIN and ${ORIGIN} to
// `origin`; false when the entry has another token ($LIB, $PLATFORM: left
// to the real loader) or does not fit.
bool join(std::string_view dir, std::string_view origin, const char* file, char* out,
          size_t out_size) {
  size_t n = 0;
  auto put = [&](std::string_view s) {
    if (n + s.size() >= out_size) return false;
    std::memcpy(out + n, s.data(), s.size());
    n += s.size();
    return true;
  };
  while (!dir.empty()) {
    const size_t dollar = dir.find('$');
    if (!put(dir.substr(0, dollar))) return false;
    if (dollar == std::string_view::npos) break;
    dir.remove_prefix(dollar);
    if (dir.starts_with("$ORIGIN")) {
      dir.remove_prefix(7);
    } else if (dir.starts_with("${ORIGIN}")) {
      dir.remove_prefix(9);
    } else {
      return false;
    }
    if (!put(origin)) return false;
  }
  if (!put("/") || !put(file)) return false;
  out[n] = '\0';
  return true;
}

// The first existing dir/file of a ':'-separated list; an empty entry is
// the current folder, as for the loader.
bool first_in(const char* list, std::string_view origin, const char* file, char* out,
              size_t out_size) {
  if (list == nullptr) return false;
  std::string_view rest(list);
  while (true) {
    const size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    if (dir.empty()) dir = ".";
    if (join(dir, origin, file, out, out_size) && access(out, F_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    rest.remove_prefix(colon + 1);
  }
}

}  // namespace

bool path_for_caller(const char* file, const void* caller, char* out, size_t out_size) {
  if (file == nullptr || std::strchr(file, '/') != nullptr) return false;
  Dl_info info;
  link_map* object = nullptr;
  if (dladdr1(caller, &info, reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) == 0 ||
      object == nullptr)
    return false;
  const SearchDirs dirs = dirs_of(object);
  if (dirs.rpath == nullptr && dirs.runpath == nullptr) return false;
  // $ORIGIN: the folder of the caller's file (the main program's l_name is
  // empty: its path is /proc/self/exe's).
  char self[4096];
  std::string_view path = object->l_name != nullptr ? object->l_name : "";
  if (path.empty()) {
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) return false;
    path = std::string_view(self, static_cast<size_t>(n));
  }
  const std::string_view origin = path.substr(0, path.rfind('/'));
  const char* library_path = secure_getenv("LD_LIBRARY_PATH");
  if (first_in(dirs.rpath, origin, file, out, out_size)) return true;
  if ((library_path != nullptr && *library_path != '\0') &&
      first_in(library_path, origin, file, out, out_size))
    return false;  // the real dlopen finds it there itself
  return first_in(dirs.runpath, origin, file, out, out_size);
}

}  // namespace memlife::rec
