#include "util/process.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace theon::detail {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// Waits for `pid` and fills exit_code / error.
void wait_for(pid_t pid, const std::string& program, ProcessResult& r) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.error = "waitpid for '" + program + "' failed: " + std::strerror(errno);
      return;
    }
  }
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.error = "'" + program + "' was killed by signal " + std::to_string(WTERMSIG(status));
  }
}

// Spawns argv with `actions`; pid on success, else error set.
bool spawn(const std::vector<std::string>& argv, posix_spawn_file_actions_t* actions, pid_t& pid,
           ProcessResult& r) {
  if (argv.empty() || argv[0].empty()) {
    r.error = "no program to run";
    return false;
  }
  auto args = c_argv(argv);
  const int rc = posix_spawnp(&pid, argv[0].c_str(), actions, nullptr, args.data(), environ);
  if (rc != 0) {
    r.error = "cannot run '" + argv[0] + "': " + std::strerror(rc);
    return false;
  }
  return true;
}

}  // namespace

ProcessResult run_program(const std::vector<std::string>& argv, const std::string& log_path) {
  ProcessResult r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const char* target = log_path.empty() ? "/dev/null" : log_path.c_str();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, target, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  if (spawn(argv, &actions, pid, r)) wait_for(pid, argv[0], r);
  posix_spawn_file_actions_destroy(&actions);
  return r;
}

ProcessResult run_capture(const std::vector<std::string>& argv, size_t max_bytes) {
  ProcessResult r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.error = std::string("pipe failed: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const bool started = spawn(argv, &actions, pid, r);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (started) {
    char buf[4096];
    for (;;) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (r.output.size() < max_bytes) r.output.append(buf, std::min(static_cast<size_t>(n), max_bytes - r.output.size()));
    }
  }
  close(fds[0]);
  if (started) wait_for(pid, argv[0], r);
  return r;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) words.push_back(std::move(word)), word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

}  // namespace theon::detail
