#include "run_setup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <vector>

#include "torch_plugin.h"

namespace memlife::tool {
namespace fs = std::filesystem;
namespace {

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &local);
  return buf;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::optional<fs::path> executable_path() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return self;
}

std::optional<std::string> executable_dir() {
  auto self = executable_path();
  if (!self) return std::nullopt;
  return self->parent_path().string();
}

}  // namespace

std::string default_output_dir() { return "memlife-" + timestamp(); }

std::string new_run_id() {
  std::random_device entropy;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(entropy()));
  return timestamp() + "-" + suffix;
}

std::optional<std::string> prepare_output_dir(const std::string& dir, std::string& error) {
  std::error_code ec;
  fs::path absolute = fs::absolute(dir, ec);
  if (!ec) fs::create_directories(absolute, ec);
  if (ec) {
    error = "cannot create output directory " + dir + ": " + ec.message();
    return std::nullopt;
  }
  if (!fs::is_directory(absolute, ec)) {
    error = "output path " + dir + " is not a directory";
    return std::nullopt;
  }
  // access(W_OK) says yes to root on a read-only file system; creating a
  // file is the only honest test.
  const std::string probe = (absolute / (".memlife-probe-" + std::to_string(::getpid()))).string();
  int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "output directory " + dir + " is not writable: " + std::strerror(errno);
    return std::nullopt;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return fs::path(absolute).lexically_normal().string();
}

std::optional<std::string> find_command(const std::string& name, std::string& error) {
  if (name.empty()) {
    error = "no command given (usage: memlife run [options] -- CMD [ARGS...])";
    return std::nullopt;
  }
  if (name.find('/') != std::string::npos) {
    if (is_executable_file(name)) return name;
    error = "command not found or not executable: " + name;
    return std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    begin = end + 1;
  }
  error = "command not found on PATH: " + name;
  return std::nullopt;
}

std::optional<Layout> find_layout(std::string& error) {
  Layout layout;
  std::optional<std::string> exe_dir = executable_dir();
  const char* lib_override = std::getenv("MEMLIFE_LIB_DIR");
  const char* python_override = std::getenv("MEMLIFE_PYTHON_DIR");
  const bool lib_set = lib_override != nullptr && *lib_override != '\0';
  const bool python_set = python_override != nullptr && *python_override != '\0';
  if (!exe_dir && !(lib_set && python_set)) {
    error = "cannot locate the memlife executable (/proc/self/exe); set MEMLIFE_LIB_DIR";
    return std::nullopt;
  }
  // <root>/bin/memlife, <root>/lib, <root>/share/memlife/python: the same
  // in a build tree (CMake links share/memlife/python/memlife to the
  // source), an install prefix and a pip environment.
  const fs::path root = exe_dir ? fs::path(*exe_dir) / ".." : fs::path();
  std::error_code ec;
  const auto canonical = [&ec](const fs::path& p) {
    return fs::weakly_canonical(fs::absolute(p, ec), ec);
  };
  const fs::path lib_dir = canonical(lib_set ? fs::path(lib_override) : root / "lib");
  const fs::path preload = lib_dir / "libmemlife_preload.so";
  if (!fs::is_regular_file(preload, ec)) {
    error = "preload library not found at " + preload.string() +
            " (build the memlife_preload target, reinstall memlife, or set MEMLIFE_LIB_DIR)";
    return std::nullopt;
  }
  layout.libs.preload = preload.string();
  // $MEMLIFE_TORCH_PLUGIN names another plugin, or none when empty.
  if (const char* from_env = std::getenv("MEMLIFE_TORCH_PLUGIN"); from_env != nullptr) {
    layout.libs.plugin_from_env = true;
    layout.libs.torch_plugin = from_env;
  } else if (const fs::path plugin = lib_dir / "libmemlife_torch.so";
             fs::is_regular_file(plugin, ec)) {
    layout.libs.torch_plugin = plugin.string();
  }
  const fs::path python_dir =
      canonical(python_set ? fs::path(python_override) : root / "share" / "memlife" / "python");
  if (fs::is_regular_file(python_dir / "memlife" / "__init__.py", ec)) {
    layout.python_dir = python_dir.string();
  }
  if (const fs::path sources = canonical(root / "share" / "memlife" / "torch-plugin");
      exe_dir && fs::is_regular_file(sources / "CMakeLists.txt", ec)) {
    layout.plugin_sources = sources.string();
  }
  return layout;
}

std::optional<std::string> check_recorder_variables() {
  for (const RecorderOption& o : kRecorderOptions) {
    if (o.flag) continue;  // memlife run sets it from its flag
    const char* v = std::getenv(o.variable);
    if (v != nullptr && *v != '\0' && !recorder_option_valid(o, v))
      return std::string(o.variable) + "=" + v + " is not " + recorder_option_expected(o);
  }
  return std::nullopt;
}

EnvVars recorder_environment(const RecorderLibraries& libs, const std::string& python_dir,
                             const std::string& output_dir, const std::string& run_id,
                             const RunOptions& options, const char* existing_ld_preload) {
  std::string ld_preload = libs.preload;
  if (existing_ld_preload && *existing_ld_preload) {
    ld_preload += ':';
    ld_preload += existing_ld_preload;
  }
  EnvVars env = {
      {"LD_PRELOAD", ld_preload},
      {"MEMLIFE_OUTPUT_DIR", output_dir},
      {"MEMLIFE_RUN_ID", run_id},
  };
  for (const RecorderOption& o : kRecorderOptions)
    if (o.flag) env.emplace_back(o.variable, options.recorder.at(o.name));
  if (!libs.torch_plugin.empty()) env.emplace_back("MEMLIFE_TORCH_PLUGIN", libs.torch_plugin);
  // This memlife, for the Python side's memlife.record() blocks (which run
  // `memlife analyze`) and the pytest plugin; a user's own choice stays.
  if (const char* bin = std::getenv("MEMLIFE_BIN"); bin == nullptr || *bin == '\0')
    if (auto self = executable_path()) env.emplace_back("MEMLIFE_BIN", self->string());
  // Where plugins built for other torches are: a process whose torch the
  // plugin does not match loads the one built for it from there. Not when
  // the user named the plugin (or none) with $MEMLIFE_TORCH_PLUGIN.
  if (!libs.plugin_from_env) env.emplace_back("MEMLIFE_PLUGIN_CACHE", plugin_cache_dir());
  // The Python module and its autoload sitecustomize (Work.wait,
  // init_process_group and exit-census hooks), in front of the program's
  // own PYTHONPATH.
  if (!python_dir.empty()) {
    std::string path = python_dir + ":" + python_dir + "/memlife/autoload";
    if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing) {
      path += ':';
      path += existing;
    }
    env.emplace_back("PYTHONPATH", path);
  }
  return env;
}

}  // namespace memlife::tool
