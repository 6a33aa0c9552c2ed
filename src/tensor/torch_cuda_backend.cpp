#include "adaqp/tensor/torch_cuda_backend.h"

#include <dlfcn.h>

#include <ATen/detail/CUDAHooksInterface.h>

#include <mutex>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/config.h"

namespace adaqp {

void load_torch_cuda_backend() {
#if ADAQP_WITH_TORCH_CUDA
  static std::once_flag once;
  std::call_once(once, [] {
    // Never closed: its registrations live as long as libtorch. RTLD_GLOBAL, as a linked library.
    if (dlopen(ADAQP_TORCH_CUDA_LIBRARY, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = dlerror();
      throw CudaError(std::string("loading libtorch's CUDA backend ") + ADAQP_TORCH_CUDA_LIBRARY +
                      " failed: " + (why != nullptr ? why : "no reason given"));
    }
    // The stub hooks libtorch_cpu keeps when nothing registered the real ones throw here.
    try {
      (void)at::detail::getCUDAHooks().versionCUDART();
    } catch (const std::exception&) {  // libtorch's message blames the link; not the cause here
      throw InvariantError(std::string("libtorch asked about CUDA before its CUDA backend (") +
                           ADAQP_TORCH_CUDA_LIBRARY +
                           ") was loaded, and keeps that answer: load_torch_cuda_backend() must "
                           "come before any CUDA query");
    }
  });
#else
  throw ConfigError(
      "this build has no libtorch CUDA backend (ADAQP_WITH_TORCH_CUDA = 0): libtorch at "
      "configure time had no libtorch_cuda");
#endif
}

}  // namespace adaqp
