// Entry points of the GPU half of the preload library (lib/gpu), called by
// the preload layer (preload.cc). Everything here is a no-op on machines
// without CUDA or NCCL.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memlife/trace_format.h"

namespace memlife::gpu {

// Recorder start (the preload's constructor): arranges for CUPTI to be
// attached when the CUDA driver initialises.
void at_start();
// The recorder was loaded into a running process (memlife_attach): what
// the dlopen hook would have noticed is already loaded, and a CUDA driver
// already initialised will not call the injection hook; CUPTI is attached
// now when libcuda is in the process.
void at_attach();
// After every successful dlopen: notices CUDA, NCCL and c10_cuda libraries.
void on_library_loaded(const char* file);

// Emits one collective_wait per released NCCL collective (CUPTI side).
void emit_waits(const uint64_t* ids, size_t count, WaitHow how, const char* api);

// True once libc10_cuda is in the process (checked on dlopen).
bool c10_cuda_loaded();

}  // namespace memlife::gpu

// Called by the torch plugin (lib/torch) on its op callbacks until it
// returns 1: attaches the CUDA caching-allocator trace tracker
// (lib/torch/cuda) once torch's CUDA allocator is initialised. Cheap after
// success (one atomic load). `current_op_name` gives the innermost open
// op's interned name on the calling thread (0 = none); may be null.
extern "C" int memlife_torch_cuda_attach_if_ready(uint64_t (*current_op_name)());

// 1 when CUPTI callbacks are recording raw CUDA allocations: the torch
// tracker then leaves segment records to them (one record per segment).
extern "C" int memlife_gpu_cupti_attached(void);
