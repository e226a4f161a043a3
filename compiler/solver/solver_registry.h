#pragma once
// Picks a solver backend by name: "cpu", "cuda" or "auto" (CUDA when a device
// is present, saying so on the log stream; else the CPU, silently).
#include <memory>
#include <ostream>
#include <string>

#include "compiler/solver/solver.h"

namespace lull::compiler {

// True when this build has the CUDA backend and a device is visible.
bool cuda_device_available(std::string* why_not = nullptr);

// Throws std::runtime_error for an unknown name or "cuda" without a device.
std::unique_ptr<Solver> make_solver(const std::string& device, std::ostream* log);

}  // namespace lull::compiler
