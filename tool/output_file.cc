#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace memlife::tool {
namespace fs = std::filesystem;
namespace {

bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// The real path of `p` where it exists, else of its folder plus its name.
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  fs::path canon = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : canon;
}

bool is_inside(const fs::path& child, const fs::path& dir) {
  auto c = child.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++c) {
    if (d->empty()) continue;  // trailing separator
    if (c == child.end() || *c != *d) return false;
  }
  return true;
}

}  // namespace

bool output_is_not_an_input(const std::string& output, const std::vector<std::string>& inputs,
                            std::string& error) {
  if (output.empty() || output == "-") return true;
  struct stat out_st {};
  const bool out_exists = ::stat(output.c_str(), &out_st) == 0;
  // Writing to a device (/dev/stdout, /dev/null) never replaces an input.
  if (out_exists && !S_ISREG(out_st.st_mode) && !S_ISDIR(out_st.st_mode)) return true;
  const fs::path out_path = resolved(output);
  for (const std::string& input : inputs) {
    struct stat in_st {};
    const bool in_exists = ::stat(input.c_str(), &in_st) == 0;
    const fs::path in_path = resolved(input);
    if ((out_exists && in_exists && out_st.st_dev == in_st.st_dev &&
         out_st.st_ino == in_st.st_ino) ||
        out_path == in_path) {
      error = "output " + output + " is the input " + input + "; refusing to overwrite it";
      return false;
    }
    if (in_exists && S_ISDIR(in_st.st_mode) && out_path.extension() == ".mltrace" &&
        is_inside(out_path, in_path)) {
      error = "output " + output + " is a trace inside the input folder " + input +
              "; refusing to write it";
      return false;
    }
  }
  return true;
}

bool write_output_file(const std::string& path, std::string_view bytes, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return error = path + ": is a directory", false;
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return error = path + ": cannot open for writing: " + std::strerror(errno), false;
    const bool ok = write_all(fd, bytes);
    const int saved = errno;
    if (::close(fd) != 0 && ok)
      return error = path + ": write failed: " + std::strerror(errno), false;
    if (!ok) return error = path + ": write failed: " + std::strerror(saved), false;
    return true;
  }
  const fs::path target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string tmp = (dir / ("." + target.filename().string() + ".memlife-XXXXXX")).string();
  int fd = ::mkstemp(tmp.data());  // mode 0600
  if (fd < 0) return error = path + ": cannot create: " + std::strerror(errno), false;
  bool ok = write_all(fd, bytes) && ::fsync(fd) == 0;
  int saved = errno;
  if (::close(fd) != 0 && ok) ok = false, saved = errno;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) ok = false, saved = errno;
  if (!ok) {
    ::unlink(tmp.c_str());
    return error = path + ": write failed: " + std::strerror(saved), false;
  }
  // The rename is durable once the folder is.
  if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

bool finish_stdout(std::string& error) {
  std::cout.flush();
  const bool bad = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (bad) error = std::string("write to standard output failed: ") + std::strerror(errno);
  return !bad;
}

}  // namespace memlife::tool
