// Typed exceptions. Every error a user can cause carries what it concerns (file, field, line,
// value, rank or peer) in its message; the CLI turns any of them into one clear line and a
// non-zero exit on every rank.
#pragma once

#include <stdexcept>
#include <string>

namespace adaqp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input data: a dataset, partition or checkpoint file. Message: "<file>: <where>: <what>".
class InputError : public Error {
 public:
  InputError(const std::string& file, const std::string& where, const std::string& what)
      : Error(where.empty() ? file + ": " + what : file + ": " + where + ": " + what) {}
};

// Bad job configuration: unknown key, wrong type, out-of-range value.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A failed or timed-out exchange between workers.
class CommError : public Error {
 public:
  using Error::Error;
};

// Training diverged: a non-finite loss, gradient or parameter. The message names the epoch and the
// parameter.
class NumericalError : public Error {
 public:
  using Error::Error;
};

// A failed CUDA, cuSPARSE or device-side call. Message: "<call> failed[ on rank R (device D)]:
// <the library's error string>".
class CudaError : public Error {
 public:
  using Error::Error;
};

// A broken internal invariant: a bug, not a user error.
class InvariantError : public Error {
 public:
  using Error::Error;
};

}  // namespace adaqp

// Checks an internal invariant; throws InvariantError with file:line and the condition.
#define ADAQP_CHECK(cond, msg)                                                               \
  do {                                                                                       \
    if (!(cond))                                                                             \
      throw ::adaqp::InvariantError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                    ": check failed: " #cond ": " + (msg));                  \
  } while (0)
