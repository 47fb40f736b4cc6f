// Running a helper program (the C++ compiler) without a shell: an argument vector goes to
// posix_spawnp, so paths with spaces, quotes, ';' or '$(...)' are arguments, never commands.
#pragma once
#include <string>
#include <vector>

namespace theon::detail {

struct ProcessResult {
  int exit_code = -1;   // the program's exit status; -1 when it did not exit normally
  std::string error;    // why it could not be started or did not exit normally ("" otherwise)
  std::string output;   // stdout and stderr, when captured (run_capture)
  bool ok() const { return error.empty() && exit_code == 0; }
};

/// Runs argv[0] (looked up in PATH when it has no '/') with `argv`, stdout and stderr written
/// to `log_path` (created with mode 0600, truncated; "" discards them), and waits for it.
ProcessResult run_program(const std::vector<std::string>& argv, const std::string& log_path);

/// Runs argv and returns what it printed on stdout and stderr (at most `max_bytes`).
ProcessResult run_capture(const std::vector<std::string>& argv, size_t max_bytes = 1 << 20);

/// Splits a command setting such as config().cxx ("ccache g++ -m64") at whitespace: the words
/// become separate arguments, with no quoting, expansion or other shell meaning.
std::vector<std::string> split_words(const std::string& text);

}  // namespace theon::detail
