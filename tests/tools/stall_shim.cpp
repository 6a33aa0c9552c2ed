// LD_PRELOAD library that freezes or slows one rank of an MPI job at a chosen call
// (tests/cli/stalled_end.sh). ADAQP_STALL_RANK names the rank (its OMPI_COMM_WORLD_RANK),
// ADAQP_STALL_AT the call: "isend:TAG" (its first MPI_Isend of tag TAG) or "finalize"
// (MPI_Finalize), where the process stops itself (SIGSTOP), as a host cut off the network looks to
// its peers; or "rename:NAME:SECONDS", where a rename of a file to NAME (its last path component)
// waits SECONDS first, as a slow disk would. One line on stderr says so; every other call goes
// through unchanged. A test library, not part of adaqp.
#include <dlfcn.h>
#include <mpi.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

// ADAQP_STALL_AT on the rank ADAQP_STALL_RANK names, else "".
std::string stall_point() {
  const char* rank = std::getenv("ADAQP_STALL_RANK");
  const char* me = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* at = std::getenv("ADAQP_STALL_AT");
  if (rank == nullptr || me == nullptr || at == nullptr || std::strcmp(rank, me) != 0) return "";
  return at;
}

void stall(const std::string& where) {
  std::fprintf(stderr, "stall_shim: rank %s stops at %s\n", std::getenv("OMPI_COMM_WORLD_RANK"),
               where.c_str());
  std::fflush(stderr);
  std::raise(SIGSTOP);
}

template <typename F>
F next_symbol(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "stall_shim: %s not found\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(symbol);
}

}  // namespace

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  using Isend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  static const Isend next = next_symbol<Isend>("MPI_Isend");
  static const std::string at = stall_point();
  static bool stalled = false;
  if (!stalled && at == "isend:" + std::to_string(tag)) {
    stalled = true;
    stall(at);
  }
  return next(buf, count, type, dest, tag, comm, request);
}

extern "C" int rename(const char* from, const char* to) {
  using Rename = int (*)(const char*, const char*);
  static const Rename next = next_symbol<Rename>("rename");
  static const std::string at = stall_point();
  if (at.rfind("rename:", 0) == 0) {
    const size_t colon = at.rfind(':');
    const std::string name = at.substr(7, colon - 7), target(to);
    const size_t slash = target.rfind('/');
    if (target.substr(slash == std::string::npos ? 0 : slash + 1) == name) {
      const double seconds = std::atof(at.c_str() + colon + 1);
      std::fprintf(stderr, "stall_shim: rank %s waits %g s to rename %s\n",
                   std::getenv("OMPI_COMM_WORLD_RANK"), seconds, to);
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    }
  }
  return next(from, to);
}

extern "C" int MPI_Finalize() {
  using Finalize = int (*)();
  static const Finalize next = next_symbol<Finalize>("MPI_Finalize");
  if (stall_point() == "finalize") stall("finalize");
  return next();
}
