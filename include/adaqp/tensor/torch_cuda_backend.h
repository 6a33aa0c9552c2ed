// libtorch's CUDA backend (libtorch_cuda and libc10_cuda), loaded by the processes that compute on
// a GPU instead of by every process at its start. Nothing here calls into it: loading it registers
// the CUDA tensors' kernels and libtorch's CUDA hooks. Mapping and registering it costs about
// 0.15 s of CPU a process (the CLI tests start some 600 processes, none of them on a GPU here).
#pragma once

namespace adaqp {

// Loads the backend once per process; later calls return at once. libtorch settles at its first
// question about CUDA whether it has the backend, so a process calls this before any tensor work
// on a GPU. ConfigError in a build without libtorch's CUDA libraries (ADAQP_WITH_TORCH_CUDA = 0);
// CudaError, naming the library and the loader's message, when it cannot be loaded;
// InvariantError when libtorch had settled without it (something asked about CUDA first).
void load_torch_cuda_backend();

}  // namespace adaqp
