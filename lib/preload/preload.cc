// The LD_PRELOAD entry: arms the recorder from the environment, watches
// dlopen for libtorch and loads the torch plugin built for it, and closes
// the trace on exit. No libtorch dependency: a process that never loads
// torch pays only for a few hooks that do nothing.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/gpu_hooks.h"
#include "preload/caller_search.h"
#include "preload/fatal_signals.h"
#include "preload/recorder_state.h"

namespace memlife::rec {
namespace {

std::atomic<bool> g_plugin_attempted{false};
char g_torch_lib_path[4096];
char g_loaded_plugin[4200];  // written once, before the plugin's hooks run

void say(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

int find_libtorch(dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  const char* slash = std::strrchr(name, '/');
  const char* base = slash ? slash + 1 : name;
  if (std::strncmp(base, "libtorch_cpu.so", 15) == 0) {
    std::snprintf(g_torch_lib_path, sizeof(g_torch_lib_path), "%s", name);
    return 1;
  }
  return 0;
}

// Reads the first line of `path` starting with `key` and copies the quoted
// value after it.
bool read_quoted_value(const char* path, const char* key, char* out, size_t out_size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[8192];
  const ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  for (char* line = text; line != nullptr && *line != '\0';) {
    char* next = std::strchr(line, '\n');
    if (next) *next++ = '\0';
    if (std::strncmp(line, key, std::strlen(key)) == 0) {
      char* open_quote = std::strpbrk(line, "'\"");
      if (open_quote == nullptr) return false;
      char* close_quote = std::strchr(open_quote + 1, *open_quote);
      if (close_quote == nullptr) return false;
      *close_quote = '\0';
      std::snprintf(out, out_size, "%s", open_quote + 1);
      return true;
    }
    line = next;
  }
  return false;
}

bool read_file_line(const char* path, char* out, size_t out_size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, out, out_size - 1);
  ::close(fd);
  if (n <= 0) return false;
  out[n] = '\0';
  out[std::strcspn(out, "\r\n")] = '\0';
  return true;
}

// The torch version a plugin's .torch-version names (written at its build);
// false when there is none.
bool plugin_built_for(const char* plugin, char* out, size_t out_size) {
  char sidecar[4300];
  std::snprintf(sidecar, sizeof(sidecar), "%s.torch-version", plugin);
  return read_file_line(sidecar, out, out_size);
}

// The running torch's version, from torch/version.py next to torch/lib.
bool running_torch_version(char* out, size_t out_size) {
  char dir[4096];
  std::snprintf(dir, sizeof(dir), "%s", g_torch_lib_path);
  char* slash = std::strrchr(dir, '/');
  if (slash == nullptr) return false;
  *slash = '\0';  // .../torch/lib
  slash = std::strrchr(dir, '/');
  if (slash == nullptr) return false;
  *slash = '\0';  // .../torch
  char version_py[4200];
  std::snprintf(version_py, sizeof(version_py), "%s/version.py", dir);
  return read_quoted_value(version_py, "__version__", out, out_size);
}

}  // namespace

void load_torch_plugin() {
  if (g_plugin_attempted.load(std::memory_order_acquire)) return;
  if (phase().load() != static_cast<int>(Phase::kArmed) &&
      phase().load() != static_cast<int>(Phase::kRunning)) {
    return;
  }
  g_torch_lib_path[0] = '\0';
  dl_iterate_phdr(find_libtorch, nullptr);
  if (g_torch_lib_path[0] == '\0') return;
  if (g_plugin_attempted.exchange(true)) return;

  const char* plugin_path = std::getenv("MEMLIFE_TORCH_PLUGIN");  // NOLINT(concurrency-mt-unsafe)
  char line[13000];
  char note[13100];  // "torch plugin not loaded: " and a line
  char running[256] = "";
  const bool know_running = running_torch_version(running, sizeof(running));
  const char* running_text = know_running ? running : "(unknown)";
  // Every outcome goes into the trace as a process record note (see
  // RecordKind::kProcess): the analyzer warns on "torch plugin not loaded".
  auto not_loaded = [&](const char* why) {
    std::snprintf(note, sizeof(note), "torch plugin not loaded: %s", why);
    set_process_identity(-1, -1, -1, know_running ? running : "", note);
  };
  // The configured plugin; where it does not fit this torch, the one built
  // for it in the cache (`memlife build-plugin`, or `memlife run` on first
  // use).
  char built[256] = "";
  bool know_built = plugin_path != nullptr && *plugin_path != '\0' &&
                    plugin_built_for(plugin_path, built, sizeof(built));
  const auto fits = [&] { return know_running && know_built && std::strcmp(running, built) == 0; };
  char cached_path[4200];
  const char* cache = std::getenv("MEMLIFE_PLUGIN_CACHE");  // NOLINT(concurrency-mt-unsafe)
  if (!fits() && know_running && cache != nullptr && *cache != '\0') {
    char cached_built[256] = "";
    std::snprintf(cached_path, sizeof(cached_path), "%s/%s/libmemlife_torch.so", cache, running);
    if (plugin_built_for(cached_path, cached_built, sizeof(cached_built)) &&
        std::strcmp(cached_built, running) == 0) {
      plugin_path = cached_path;
      std::snprintf(built, sizeof(built), "%s", running);
      know_built = true;
    }
  }
  if (plugin_path == nullptr || *plugin_path == '\0') {
    say("memlife: no torch plugin configured (MEMLIFE_TORCH_PLUGIN); recording without it\n");
    std::snprintf(line, sizeof(line), "none configured (MEMLIFE_TORCH_PLUGIN unset), torch %s",
                  running_text);
    not_loaded(line);
    return;
  }
  if (!fits()) {
    // What to run: this process's python builds a plugin for its torch.
    char exe[4096] = "python3";
    if (const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1); n > 0) exe[n] = '\0';
    const char* built_text = know_built ? built : "(unknown)";
    std::snprintf(line, sizeof(line),
                  "memlife: the torch plugin was built for torch %s but this process runs torch "
                  "%s (%s); recording without the torch plugin (no tensors, views or collectives). "
                  "Build one for it with: memlife build-plugin --python %s\n",
                  built_text, running_text, g_torch_lib_path, exe);
    say(line);
    if (know_built)
      std::snprintf(line, sizeof(line), "version mismatch: built for torch %s, running torch %s",
                    built_text, running_text);
    else
      std::snprintf(line, sizeof(line),
                    "%s: no %s.torch-version to name the torch it was built for", plugin_path,
                    plugin_path);
    not_loaded(line);
    return;
  }
  void* handle = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();  // NOLINT(concurrency-mt-unsafe): glibc keeps it per thread
    std::snprintf(line, sizeof(line), "memlife: cannot load the torch plugin: %s\n",
                  why ? why : "?");
    say(line);
    std::snprintf(line, sizeof(line), "cannot load %s: %s", plugin_path, why ? why : "?");
    not_loaded(line);
    return;
  }
  std::snprintf(g_loaded_plugin, sizeof(g_loaded_plugin), "%s", plugin_path);
  using Init = int (*)();
  auto init = reinterpret_cast<Init>(dlsym(handle, "memlife_torch_plugin_init"));
  if (init == nullptr || init() != 0) {
    say("memlife: the torch plugin failed to initialise; recording without it\n");
    not_loaded("its initialisation failed");
    return;
  }
  std::snprintf(note, sizeof(note), "torch plugin loaded: built for and running torch %s", running);
  set_process_identity(-1, -1, -1, running, note);
}

namespace {

using DlopenFn = void* (*)(const char*, int);
DlopenFn real_dlopen() {
  static DlopenFn fn = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
  return fn;
}

// The real dlopen, searching a bare name where the loader would have for
// `caller`, the code that called the interposer (caller_search.h): a
// library already loaded under that name first, then the caller's RPATH,
// LD_LIBRARY_PATH and RUNPATH, then the real dlopen's own search.
void* open_as_caller(DlopenFn real, const char* file, int mode, const void* caller) {
  if (file != nullptr && std::strchr(file, '/') == nullptr) {
    if (void* loaded = real(file, mode | RTLD_NOLOAD)) return loaded;
    char path[4096];
    if (path_for_caller(file, caller, path, sizeof(path))) return real(path, mode);
  }
  return real(file, mode);
}

// The status a parent sees for exit(status) or _exit(status): its low 8 bits.
uint64_t exit_status_of(int status) { return static_cast<unsigned>(status) & 0xffu; }

// The end record carries the exit status, so the analyzer knows a process
// that failed: Python's uncaught exception and sys.exit(N) both return their
// status from main. glibc's on_exit hands its handlers that status (atexit
// does not).
void at_exit_handler(int status, void* /*unused*/) { shutdown(exit_status_of(status), false); }

// exec*: the real functions, found before any exec can happen (a vfork
// child must not call dlsym).
using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
ExecveFn g_real_execve = nullptr;
ExecvFn g_real_execv = nullptr;
ExecvFn g_real_execvp = nullptr;
ExecveFn g_real_execvpe = nullptr;
FexecveFn g_real_fexecve = nullptr;

void resolve_exec_functions() {
  g_real_execve = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execve"));
  g_real_execv = reinterpret_cast<ExecvFn>(dlsym(RTLD_NEXT, "execv"));
  g_real_execvp = reinterpret_cast<ExecvFn>(dlsym(RTLD_NEXT, "execvp"));
  g_real_execvpe = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execvpe"));
  g_real_fexecve = reinterpret_cast<FexecveFn>(dlsym(RTLD_NEXT, "fexecve"));
}

// Records buffered when the process image is replaced would be lost with
// it (issue 15 item 2).
void before_exec() {
  if (phase().load(std::memory_order_relaxed) != static_cast<int>(Phase::kRunning)) return;
  const int saved = errno;
  flush_before_exec();
  errno = saved;
}

int no_exec() {
  errno = ENOSYS;
  return -1;
}

// execl*: the variadic arguments as an argv array (on the stack). False
// when there are more than fit.
constexpr size_t kMaxExeclArgs = 4096;
bool collect_args(const char* first, va_list* ap, const char** out) {
  out[0] = first;
  if (first == nullptr) return true;
  for (size_t i = 1; i < kMaxExeclArgs; ++i) {
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): every caller va_starts it
    out[i] = va_arg(*ap, const char*);
    if (out[i] == nullptr) return true;
  }
  errno = E2BIG;
  return false;
}

__attribute__((constructor)) void memlife_preload_init() {
  resolve_exec_functions();
  init_from_environment();
  if (phase().load() != static_cast<int>(Phase::kArmed)) return;
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  on_exit(at_exit_handler, nullptr);
  install_crash_signal_handlers();
  gpu::at_start();
}

}  // namespace

const char* loaded_torch_plugin() { return g_loaded_plugin; }

}  // namespace memlife::rec

using namespace memlife::rec;

extern "C" {

__attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  DlopenFn real = real_dlopen();
  if (real == nullptr) return nullptr;
  void* handle = open_as_caller(real, file, mode, __builtin_return_address(0));
  if (handle == nullptr ||
      phase().load(std::memory_order_relaxed) == static_cast<int>(Phase::kInert)) {
    return handle;
  }
  ReentryGuard guard;
  if (!guard.entered()) return handle;
  if (file != nullptr && std::strstr(file, "torch") != nullptr) load_torch_plugin();
  memlife::gpu::on_library_loaded(file);
  if (active()) {
    if (ThreadWriter* w = current_thread_writer()) emit_new_modules(*w);
  }
  return handle;
}

__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  {
    ReentryGuard guard;
    if (guard.entered()) shutdown(exit_status_of(status), false);
  }
  using ExitFn = void (*)(int);
  auto real = reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "_exit"));
  if (real != nullptr) real(status);
  __builtin_trap();
}

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[],
                                                  char* const envp[]) {
  before_exec();
  return g_real_execve ? g_real_execve(path, argv, envp) : no_exec();
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  before_exec();
  return g_real_execv ? g_real_execv(path, argv) : no_exec();
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  before_exec();
  return g_real_execvp ? g_real_execvp(file, argv) : no_exec();
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[],
                                                   char* const envp[]) {
  before_exec();
  return g_real_execvpe ? g_real_execvpe(file, argv, envp) : no_exec();
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  before_exec();
  return g_real_fexecve ? g_real_fexecve(fd, argv, envp) : no_exec();
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  const char* args[kMaxExeclArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_args(arg, &ap, args);
  va_end(ap);
  return ok ? execv(path, const_cast<char* const*>(args)) : -1;
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  const char* args[kMaxExeclArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_args(arg, &ap, args);
  va_end(ap);
  return ok ? execvp(file, const_cast<char* const*>(args)) : -1;
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  const char* args[kMaxExeclArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_args(arg, &ap, args);
  // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above
  char* const* envp = ok ? va_arg(ap, char* const*) : nullptr;
  va_end(ap);
  return ok ? execve(path, const_cast<char* const*>(args), envp) : -1;
}

}  // extern "C"
