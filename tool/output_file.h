// Checked output writes, shared by every verb (issue 15 items 3, 6, 8).
// An output never names one of the verb's inputs; a file is written to a
// temporary beside it, fsync'ed and renamed, so a failed write (full disk,
// /dev/full) leaves no partial file; every failure is reported for exit 2.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memlife::tool {

// False (with `error`) when `output` is one of `inputs` (same file, by
// inode or real path) or a trace inside an input folder.
bool output_is_not_an_input(const std::string& output, const std::vector<std::string>& inputs,
                            std::string& error);

// Writes `bytes` to `path`: a regular file (new or replaced) via a
// temporary in the same folder, fsync and rename, created 0600 like the
// traces it is made of; a device or pipe (/dev/stdout, /dev/full) is
// written directly. False (with `error`) on any failure, nothing left
// behind.
bool write_output_file(const std::string& path, std::string_view bytes, std::string& error);

// Flushes stdout; false (with `error`) when any write to it failed.
bool finish_stdout(std::string& error);

}  // namespace memlife::tool
