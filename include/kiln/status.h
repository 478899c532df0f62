/// \file status.h
/// Status and Expected<T>: the error channel for environment and user failures.
///
/// Internal layers return Status / Expected<T>. The public Tensor API throws kiln::Error
/// (which carries a Status), because operators such as `a + b` cannot return one.
#pragma once

#include <cassert>
#include <source_location>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class StatusCode {
  kOk,
  kInvalidArgument,
  kUnavailable,
  kUnimplemented,
  kResourceExhausted,
  kInternal,
  kFailedPrecondition,  // the call is valid, but not in the current state (Device::close)
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "invalid_argument: message".
  std::string to_string() const;
  /// Prepends context ("while compiling kernel 3: ...").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status unimplemented(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}
inline Status resource_exhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status failed_precondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status internal_error(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

/// Exception thrown by the public Tensor API; carries the Status that caused it.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

/// Value or error. A minimal std::expected for C++20.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Expected constructed from an ok Status");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

/// Throws kiln::Error if `status` is not ok.
inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw Error(status);
}
template <typename T>
T value_or_throw(Expected<T> e) {
  if (!e.ok()) throw Error(e.status());
  return std::move(e).value();
}

[[noreturn]] void unreachable(const char* what,
                              std::source_location loc = std::source_location::current());

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function if `expr` is not ok.
#define KILN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::kiln::Status kiln_status_ = (expr);        \
    if (!kiln_status_.ok()) return kiln_status_; \
  } while (0)

#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

/// `KILN_ASSIGN_OR_RETURN(auto x, make_x());`
#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_expected_, __LINE__), lhs, expr)
