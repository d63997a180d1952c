// A plain CUDA program that leaks: 3 of its 5 cudaMalloc'd buffers are
// never freed. memlife's framework-free mode and compute-sanitizer's
// --leak-check full must both report 3 leaks of 1 MiB + 2 MiB + 3 MiB.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void fill(char* p, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1;
}

int main() {
  const size_t mib = 1 << 20;
  void* bufs[5];
  for (int i = 0; i < 5; ++i) {
    if (cudaMalloc(&bufs[i], (i + 1) * mib) != cudaSuccess) return 1;
    fill<<<((i + 1) * mib + 255) / 256, 256>>>(static_cast<char*>(bufs[i]), (i + 1) * mib);
  }
  cudaDeviceSynchronize();
  cudaFree(bufs[3]);  // 4 MiB
  cudaFree(bufs[4]);  // 5 MiB
  std::printf("leaked 3 buffers, %zu bytes\n", 6 * mib);
  return 0;
}
