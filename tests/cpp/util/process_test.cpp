// util/process: programs run from an argument vector, never through a shell.
#include "util/process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace theon {
namespace {

namespace fs = std::filesystem;
using detail::run_capture;
using detail::run_program;

TEST(Process, ArgumentsAreNeverInterpretedByAShell) {
  const fs::path marker = fs::temp_directory_path() / ("theon-process-test-" + std::to_string(getpid()));
  const std::string nasty = "a b; touch " + marker.string() + " $(touch " + marker.string() + ") '\"`id`";
  auto r = run_capture({"printf", "%s|", nasty, "x"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.output, nasty + "|x|");
  EXPECT_FALSE(fs::exists(marker));
}

TEST(Process, OutputGoesToTheLog) {
  const fs::path dir = fs::temp_directory_path() / ("theon process log " + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path log = dir / "out; $(x).log";
  auto r = run_program({"sh", "-c", "echo to-out; echo to-err >&2; exit 3"}, log.string());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  std::ifstream f(log);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "to-out\nto-err\n");
  fs::remove_all(dir);
}

TEST(Process, MissingProgramIsAClearError) {
  auto r = run_program({"theon-no-such-program"}, "");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("cannot run 'theon-no-such-program'"), std::string::npos) << r.error;
}

TEST(Process, WordsSplitAtWhitespaceOnly) {
  EXPECT_EQ(detail::split_words("  ccache  g++\t-m64 "), (std::vector<std::string>{"ccache", "g++", "-m64"}));
  EXPECT_EQ(detail::split_words("c++ '$(x)'"), (std::vector<std::string>{"c++", "'$(x)'"}));
  EXPECT_TRUE(detail::split_words("").empty());
}

}  // namespace
}  // namespace theon
