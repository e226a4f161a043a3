#pragma once
// lull_build_info{version, git_commit} 1: which build is serving, so a
// dashboard can tell a regression from a deploy. The values come from CMake
// at configure time (runtime/session/CMakeLists.txt); "unknown" without git.
#include <string>

namespace lull::frontend {

std::string build_version();
std::string build_git_commit();
std::string render_build_info();

}  // namespace lull::frontend
