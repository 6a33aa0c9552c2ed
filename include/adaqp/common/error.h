// Typed exceptions. Every error a user can cause carries what it concerns (file, field, line,
// value, rank or peer) in its message; the CLI turns any of them into one clear line and a
// non-zero exit on every rank.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

namespace adaqp {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(printable(what)) {}
  explicit Error(const char* what) : Error(std::string(what)) {}

  // `text` with its control bytes but newline and tab written as \xNN: a message quotes input,
  // and a NUL in it would end the message where it is printed.
  static std::string printable(const std::string& text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
        out += "\\x";
        out += kHex[byte >> 4];
        out += kHex[byte & 15];
      } else {
        out += c;
      }
    }
    return out;
  }
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

namespace detail {

// A checked value as text, for the messages of ADAQP_CHECK_EQ and its kin.
template <typename T>
std::string check_value(const T& value) {
  if constexpr (std::is_arithmetic_v<T>) {
    return std::to_string(value);
  } else {
    return std::string(value);
  }
}

}  // namespace detail
}  // namespace adaqp

// Checks an internal invariant; throws InvariantError with file:line and the condition.
#define ADAQP_CHECK(cond, msg)                                                               \
  do {                                                                                       \
    if (!(cond))                                                                             \
      throw ::adaqp::InvariantError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                    ": check failed: " #cond ": " + (msg));                  \
  } while (0)

// Checks `a op b` of two values; the message also gives both values: "file:line: check failed:
// rows == n (3 == 4): msg". Each operand is evaluated once.
#define ADAQP_CHECK_OP(a, op, b, msg)                                                              \
  do {                                                                                             \
    const auto& adaqp_check_a_ = (a);                                                              \
    const auto& adaqp_check_b_ = (b);                                                              \
    if (!(adaqp_check_a_ op adaqp_check_b_))                                                       \
      throw ::adaqp::InvariantError(std::string(__FILE__) + ":" + std::to_string(__LINE__) +       \
                                    ": check failed: " #a " " #op " " #b " (" +                    \
                                    ::adaqp::detail::check_value(adaqp_check_a_) + " " #op " " +   \
                                    ::adaqp::detail::check_value(adaqp_check_b_) + "): " + (msg)); \
  } while (0)
#define ADAQP_CHECK_EQ(a, b, msg) ADAQP_CHECK_OP(a, ==, b, msg)
#define ADAQP_CHECK_NE(a, b, msg) ADAQP_CHECK_OP(a, !=, b, msg)
#define ADAQP_CHECK_LT(a, b, msg) ADAQP_CHECK_OP(a, <, b, msg)
#define ADAQP_CHECK_LE(a, b, msg) ADAQP_CHECK_OP(a, <=, b, msg)
#define ADAQP_CHECK_GT(a, b, msg) ADAQP_CHECK_OP(a, >, b, msg)
#define ADAQP_CHECK_GE(a, b, msg) ADAQP_CHECK_OP(a, >=, b, msg)
