#include "cli/session.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "report/report.h"
#include "snapshot/snapshot.h"
#include "support/text.h"

namespace envdoctor::cli {

using environment::EnvironmentRequest;
using environment::open_session;
using environment::Session;

// Colour on a terminal only, and never with TERM=dumb or a non-empty NO_COLOR (no-color.org).
bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (!::isatty(STDOUT_FILENO) || (no_color && *no_color)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

int tool_failure(const std::string& why) {
  std::cerr << "envdoctor: " << why << "\n";
  return 2;
}

std::optional<checks::CudaTarget> cuda_target(const std::vector<std::string>& gpus, const std::string& driver,
                                              const std::string& node) {
  std::string error;
  if (node.empty()) {
    std::optional<checks::CudaTarget> target = checks::resolve_cuda_target(gpus, driver, &error);
    if (!target) tool_failure(error);
    return target;
  }
  if (!gpus.empty() || !driver.empty())
    return tool_failure("--node takes the driver and GPUs from its snapshot: give --node, or --gpu and --driver"),
           std::nullopt;
  std::ifstream in(node, std::ios::binary);
  if (!in) return tool_failure("--node " + node + ": cannot read"), std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  std::optional<nlohmann::json> snapshot = snapshot::parse(text.str(), &error);
  if (!snapshot) return tool_failure("--node " + node + ": " + error), std::nullopt;
  std::optional<checks::CudaTarget> target = snapshot::node_target(*snapshot, node, &error);
  if (!target) tool_failure(error);
  return target;
}

environment::LoaderOptions for_target(environment::LoaderOptions loader, const checks::CudaTarget& target) {
  return environment::on_driver(std::move(loader), target.driver);
}

size_t output_width() {
  size_t fallback = report::kTextWidth;
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) fallback = ws.ws_col;
  return support::output_width(std::getenv("COLUMNS"), fallback);
}

std::optional<Session> open_session(const EnvironmentRequest& request) {
  std::string error;
  std::optional<Session> s = environment::open_session(request, &error);
  if (!s) return tool_failure(error), std::nullopt;
  s->keep_until_exit = true;
  return s;
}

}  // namespace envdoctor::cli
