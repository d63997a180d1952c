// The committed fuzz seeds still mean what their names say, so the corpus
// keeps reaching the reader's paths after format changes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "record_text.h"

namespace memlife::format::testing {
namespace {

std::vector<uint8_t> slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(FuzzCorpus, SeedsReadAsTheirNamesSay) {
  const std::filesystem::path dir = MEMLIFE_FUZZ_CORPUS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  size_t seeds = 0, total_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::vector<uint8_t> bytes = slurp(entry.path());
    total_bytes += bytes.size();
    ++seeds;
    const ReadResult read = read_all(bytes);
    if (name.rfind("valid-", 0) == 0) {
      ASSERT_TRUE(read.opened) << name << ": " << read.error;
      EXPECT_FALSE(read.status.damaged) << name << ": " << read.status.stop_reason;
      EXPECT_EQ(read.status.complete, name.find("no-end") == std::string::npos &&
                                          name.find("header-only") == std::string::npos)
          << name;
    } else if (name.rfind("partial-", 0) == 0) {
      ASSERT_TRUE(read.opened) << name << ": " << read.error;
      EXPECT_TRUE(read.status.damaged) << name;
    } else if (name.rfind("refused-", 0) == 0) {
      EXPECT_FALSE(read.opened) << name;
      EXPECT_FALSE(read.error.empty()) << name;
    } else {
      ADD_FAILURE() << "corpus file with no valid-/partial-/refused- prefix: " << name;
    }
  }
  EXPECT_GE(seeds, 8u);
  EXPECT_LT(total_bytes, 100u * 1024);
}

}  // namespace
}  // namespace memlife::format::testing
