// The library search path of a dlopen's caller. The loader looks a bare
// name ("libcudnn_graph.so.9") up in the directories of the object that
// called dlopen: its DT_RPATH, LD_LIBRARY_PATH, its DT_RUNPATH, with
// $ORIGIN its own folder. memlife's dlopen interposer calls the real dlopen
// itself, so the loader would take the preload library for the caller and
// miss those directories: a library that opens its siblings by name (cuDNN
// 9's sub-libraries, next to it in a wheel) fails, or finds another copy on
// the system. The interposer resolves such a name first, as the loader
// would have for the real caller, and passes the path it finds.
#pragma once

#include <cstddef>

namespace memlife::rec {

// Writes to `out` the path of the file the loader would open for `file`
// (a bare name) when `caller` (a code address in the object that called
// dlopen) asks, in the loader's order: the caller's RPATH (when it has no
// RUNPATH), LD_LIBRARY_PATH, the caller's RUNPATH. True only for a file
// found in the caller's own paths. False when `file` holds a '/', the
// caller has neither RPATH nor RUNPATH, the file is in LD_LIBRARY_PATH
// first (the real dlopen searches it itself), or none exists: then the real
// dlopen's own search (LD_LIBRARY_PATH, the ld.so cache, the default
// folders) is the loader's, and `out` means nothing. No allocation: dlopen
// can be called anywhere.
bool path_for_caller(const char* file, const void* caller, char* out, size_t out_size);

}  // namespace memlife::rec
