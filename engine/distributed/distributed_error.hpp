// The error of a distributed run whose processes lost each other: a rank died or cannot be
// reached, the rendezvous failed, or the ranks disagree about the world. Exit code 8.
#pragma once

#include "engine/core/errors.hpp"

namespace engine::distributed {

class DistributedError : public core::Error {
 public:
  using core::Error::Error;
  static constexpr int kExitCode = core::kExitDistributed;
  int exit_code() const override { return kExitCode; }
  const char* kind() const override { return "distributed error"; }
};

}  // namespace engine::distributed
