// Opens its sibling by bare name, as cuDNN 9 opens its sub-libraries: the
// loader finds it only through this library's RUNPATH (or RPATH),
// $ORIGIN/sibling. Returns the sibling's answer, or -1.
#include <dlfcn.h>

#include <cstdio>

extern "C" __attribute__((visibility("default"))) int caller_search_open_sibling() {
  void* sibling = dlopen("libcaller_search_sibling.so", RTLD_NOW | RTLD_LOCAL);
  if (sibling == nullptr) {
    std::fprintf(stderr, "sibling: %s\n", dlerror());
    return -1;
  }
  auto answer = reinterpret_cast<int (*)()>(dlsym(sibling, "caller_search_sibling_answer"));
  return answer != nullptr ? answer() : -1;
}
