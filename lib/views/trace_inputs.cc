#include "views/trace_inputs.h"

#include <algorithm>
#include <filesystem>

namespace memlife::views {

namespace fs = std::filesystem;

bool expand_trace_inputs(const std::vector<std::string>& inputs, std::vector<std::string>& paths,
                         std::string& error) {
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(input, ec))
        if (entry.is_regular_file(ec) && entry.path().extension() == ".mltrace")
          found.push_back(entry.path().string());
      if (ec) return error = input + ": cannot list folder: " + ec.message(), false;
      if (found.empty()) return error = input + ": folder holds no *.mltrace file", false;
      std::sort(found.begin(), found.end());
      paths.insert(paths.end(), found.begin(), found.end());
    } else if (fs::exists(input, ec)) {
      paths.push_back(input);
    } else {
      return error = input + ": no such file or folder", false;
    }
  }
  if (paths.empty()) return error = "no trace given", false;
  return true;
}

}  // namespace memlife::views
